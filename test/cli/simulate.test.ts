import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', ...args], { encoding: 'utf8' });
const tmp = () => mkdtempSync(join(tmpdir(), 'llmfleet-cli-'));
const conv = 'data/azure-llm/AzureLLMInferenceTrace_conv.csv';

test('simulate with no scenario runs the bundled default and writes the three outputs with every contract key', () => {
  const out = tmp();
  const r = cli('simulate', '--quiet', '--set', 'workload.transforms.limit=300', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  for (const k of ['requests.total', 'requests.completed', 'requests.dropped', 'ttft.p50', 'ttft.p99', 'tpot.p50', 'e2e.p99', 'queue.p99', 'normalizedE2e.p99', 'slo.attainment', 'fleet.instanceHours', 'fleet.gpuHours', 'fleet.wastedGpuHours', 'fleet.costUsd', 'throughput.requestsPerSecond', 'throughput.outputTokensPerSecond', 'sim.wallSeconds', 'sim.events', 'sim.simulatedSeconds']) {
    const v = k.split('.').reduce((o: any, p) => o?.[p], s);
    assert.equal(typeof v, 'number', `summary.json ${k}`);
    assert.ok(Number.isFinite(v), `summary.json ${k} is finite`);
  }
  assert.equal(s.requests.total, 300);
  assert.equal(readFileSync(join(out, 'requests.csv'), 'utf8').trim().split('\n').length, 301);
  assert.ok(existsSync(join(out, 'timeline.csv')));
});

test('a bad trace row exits 2 with one line naming the file, the line and what was expected', () => {
  const dir = tmp();
  const lines = readFileSync(conv, 'utf8').split('\r\n').slice(0, 20);
  writeFileSync(join(dir, 'bad.csv'), [...lines, '2023-11-16 18:16:00.0000000,12,-5'].join('\r\n'));
  const r = cli('simulate', '--trace', join(dir, 'bad.csv'), '--trace-format', 'azure', '--out', join(dir, 'o'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /bad\.csv:21/);
  assert.match(r.stderr, /GeneratedTokens/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/, 'no stack trace');
});

test('--trace-format without --trace, and a pipe as --trace, exit 2 with one line', () => {
  const dir = tmp();
  for (const [args, expected] of [
    [['--trace-format', 'burstgpt'], /--trace-format: applies only with --trace FILE/],
    [['--trace', '/dev/stdin'], /\/dev\/stdin: a pipe or device, not a regular file/],
  ] as const) {
    const r = spawnSync(process.execPath, ['bin/llmfleet.js', 'simulate', ...args, '--no-report', '--out', join(dir, 'o')], { encoding: 'utf8', input: 'TIMESTAMP,ContextTokens,GeneratedTokens\n' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, expected);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('trace rows with no output are skipped, never lost silently: counted in summary.json and on stdout', () => {
  const dir = tmp();
  const lines = readFileSync(conv, 'utf8').split('\r\n').slice(0, 20);
  writeFileSync(join(dir, 'z.csv'), [...lines, '2023-11-16 18:16:00.0000000,12,0'].join('\r\n'));
  const r = cli('simulate', '--trace', join(dir, 'z.csv'), '--no-report', '--out', join(dir, 'o'));
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(dir, 'o', 'summary.json'), 'utf8'));
  assert.equal(s.requests.total, 19);
  assert.deepEqual(s.requests.skippedInTrace, { 'GeneratedTokens 0': 1 });
  assert.match(r.stdout, /skipped trace rows \(GeneratedTokens 0\): 1/);
});

test('an unknown router exits 2 and lists the valid ones', () => {
  const r = cli('simulate', '--set', 'routing.policy=lest-kv', '--out', join(tmp(), 'o'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--set routing\.policy=lest-kv/);
  assert.match(r.stderr, /least-kv/);
});

test('a scenario error names the file line and the field path', () => {
  const dir = tmp();
  const f = join(dir, 's.yaml');
  writeFileSync(f, ['name: x', 'workload:', `  trace: { path: ${join(process.cwd(), conv)}, format: azure }`, 'fleet:', '  pools:', '    - model: llama3.1-8b', '      hardware: h100-80gb', '      count: -2', ''].join('\n'));
  const r = cli('simulate', '--scenario', f, '--out', join(dir, 'o'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /s\.yaml:8 fleet\.pools\[0\]\.count/);
});

test("a policy's own options and the pools' catalog names are checked at load: a bad one names its file line or the --set flag", () => {
  const dir = tmp();
  const f = join(dir, 's.yaml');
  const head = ['name: x', 'workload:', `  trace: { path: ${join(process.cwd(), conv)}, format: azure }`, 'fleet:', '  pools:', '    - { model: llama3.1-8b, hardware: h100-80gb, count: 1 }'];
  writeFileSync(f, [...head, 'routing:', '  policy: jsq', '  options:', '    nonsense: 5', ''].join('\n'));
  const r = cli('simulate', '--scenario', f, '--out', join(dir, 'o'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /s\.yaml:10 routing\.options\.nonsense: expected no unknown key/);
  const flag = cli('simulate', '--scenario', 'scenarios/preserve-scaling.yaml', '--set', 'scaling.options.windowS=abc', '--out', join(dir, 'p'));
  assert.equal(flag.status, 2);
  assert.match(flag.stderr, /--set scaling\.options\.windowS=abc scaling\.options\.windowS: expected a value of type number/);
  writeFileSync(f, [...head.slice(0, 5), '    - model: llama3.1-8bb', '      hardware: h100-80gb', '      count: 1', ''].join('\n'));
  const typo = cli('simulate', '--scenario', f, '--out', join(dir, 'q'));
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /s\.yaml:6 fleet\.pools\[0\]\.model: expected a model of the catalog: .*llama3\.1-8b.*got "llama3\.1-8bb"/);
});

test('an --out that is a file exits 2 with one line before any work, for every command that writes', () => {
  const file = join(tmp(), 'taken');
  writeFileSync(file, 'x');
  for (const args of [
    ['simulate', '--no-report'],
    ['compare'],
    ['forecast', '--trace', conv, '--horizon', '2'],
    ['plan', '--generate', '2,2,2', '--solver', 'gh', '--bound-time-limit', '0'],
    ['calibrate'],
  ]) {
    const r = cli(...args, '--out', join(file, 'sub'));
    assert.equal(r.status, 2, `${args[0]}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /--out .*taken\/sub: cannot write there: it \(or a parent\) is a file, not a folder/);
  }
});

test('a long idle gap in a trace costs no rows per interval, and the 15-min instance-hours still count it; absolute (Unix) times are refused', () => {
  const dir = tmp();
  const gap = join(dir, 'gap.csv');
  // 3 days apart: 4,320 empty one-minute rows before the idle stretch was skipped
  writeFileSync(gap, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00,100,10\n2024-01-04 00:00:00,100,10\n');
  const r = cli('simulate', '--trace', gap, '--no-report', '--quiet', '--out', join(dir, 'g'));
  assert.equal(r.status, 0, r.stderr);
  const rows = readFileSync(join(dir, 'g', 'timeline.csv'), 'utf8').trim().split('\n').length - 1;
  assert.ok(rows < 10, `${rows} timeline rows`);
  const fleet = JSON.parse(readFileSync(join(dir, 'g', 'summary.json'), 'utf8')).fleet;
  // the default fleet's 2 instances over 3 days plus the last request's bin
  assert.ok(Math.abs(fleet.instanceHours15mMax - fleet.instanceHours) < 0.6, `${fleet.instanceHours15mMax} vs ${fleet.instanceHours}`);
  assert.ok(fleet.instanceHours > 2 * 72);
  const epoch = join(dir, 'epoch.csv');
  writeFileSync(epoch, 'arrival_s,input_tokens,output_tokens\n1700000000,100,10\n');
  const e = cli('simulate', '--trace', epoch, '--no-report', '--out', join(dir, 'e'));
  assert.equal(e.status, 2);
  assert.match(e.stderr, /epoch\.csv: the first request arrives at t = 1700000000 s .* re-base them with workload\.transforms\.window\.startS = 1700000000/);
});

test('a run where nothing completes prints dashes, not 0.0 ms, and its report has no NaN', () => {
  const dir = tmp();
  const huge = join(dir, 'huge.csv');
  writeFileSync(huge, 'arrival_s,input_tokens,output_tokens\n0,200000,10\n');
  const r = cli('simulate', '--trace', huge, '--out', join(dir, 'o'));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /TTFT\s+–\s+–/);
  assert.doesNotMatch(r.stdout, /0\.0 ms/);
  const html = readFileSync(join(dir, 'o', 'report.html'), 'utf8');
  assert.doesNotMatch(html, /NaN/);
  assert.match(html, /No request completed/);
});

test('settings that would exhaust memory or make no sense exit 2 with one line naming the flag or file', () => {
  const cases: [string[], RegExp][] = [
    [['--set', 'output.timelineIntervalS=0.001', '--set', 'workload.transforms.compress=0.5'], /output\.timelineIntervalS: 0\.001 s gives more than 5,000,000 timeline rows by t = \d+ s/],
    [['--set', 'output.timelineIntervalS=0.000001'], /output\.timelineIntervalS: expected ≥ 0\.001/],
    [['--set', 'workload.transforms.rateScale=1000'], /the fleet cannot keep up: 2,000,000 requests are in the system at t = \d+ s/],
    [['--set', 'fleet.pools.0.minCount=6', '--set', 'fleet.pools.0.maxCount=3'], /fleet\.pools\[0\]\.maxCount: expected ≥ minCount \(6\), got 3/],
    [['--set', 'fleet.pools.0.count=5', '--set', 'fleet.pools.0.maxCount=2'], /fleet\.pools\[0\]\.count: expected ≤ maxCount \(2\), got 5/],
    [['--set', 'engine={scheduler: vllm-v0, chunkedPrefill: true}'], /engine\.chunkedPrefill: expected false or absent with scheduler vllm-v0 or splitwise/],
    [['--set', 'network.latencyS.a.b=0.1'], /^llmfleet: --set network\.latencyS\.a\.b=0\.1 network\.latencyS\.a\.b: expected a serving region of some pool \(no pool sets `region`\), got "b"/],
    [['--set', 'workload={synthetic: {durationS: 60, arrivals: {kind: poisson, ratePerS: 1}, lengths: {kind: lognormal, input: {mu: 5, sigma: 1}, output: {mu: 4, sigma: 1}}, labels: {tier: {a: 0}}}}'], /workload\.synthetic\.labels\.tier: expected a name or a map of names to weights ≥ 0 with a positive sum/],
    [['--set', 'workload={synthetic: {durationS: 60, arrivals: {kind: table, points: [[0, 1], [100, 2]], periodS: 50}, lengths: {kind: lognormal, input: {mu: 5, sigma: 1}, output: {mu: 4, sigma: 1}}}}'], /workload\.synthetic\.arrivals\.points: expected point times ≤ periodS/],
    [['--set', 'engine.kvCapacityTokens=15'], /engine\.kvCapacityTokens: expected at least one KV block \(blockTokens = 16\), got 15/],
    [['--set', 'routing.options.migration.enabled=true'], /^llmfleet: --set routing\.options\.migration\.enabled=true routing\.options\.migration: expected no unknown key/],
    [['--set', 'scheduling.options.promoteAfterS=-5'], /--set scheduling\.options\.promoteAfterS=-5 scheduling\.options\.promoteAfterS: expected ≥ 0/],
    [['--scenario', 'scenarios/compare-routers.yaml'], /compare-routers\.yaml:\d+ variants: this scenario lists variants for `llmfleet compare/],
    [['--set', 'workload={synthetic: {durationS: 60, arrivals: {kind: gamma, ratePerS: 5, cv: 1000000}, lengths: {kind: lognormal, input: {mu: 5, sigma: 1}, output: {mu: 4, sigma: 1}}}}'], /workload\.synthetic\.arrivals\.cv: expected ≤ 20/],
  ];
  for (const [args, message] of cases) {
    const r = cli('simulate', ...args, '--no-report', '--out', join(tmp(), 'o'));
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  const f = cli('forecast', '--trace', conv, '--granularity', '1', '--horizon', '100000000', '--out', join(tmp(), 'f'));
  assert.equal(f.status, 2);
  assert.match(f.stderr, /--horizon: expected an integer from 1 to 1000000/);
  const g = cli('forecast', '--trace', conv, '--granularity', '0.000001', '--horizon', '10', '--out', join(tmp(), 'g'));
  assert.equal(g.status, 2);
  assert.match(g.stderr, /a series has at most 10,000,000 points \(use a coarser granularity\)/);
});

test('bad flags exit 2: unknown engine mode, non-integer seed, malformed --set, a TP that does not divide the heads, a huge count', () => {
  const cases: [string[], RegExp][] = [
    [['--engine', 'turbo'], /turbo/],
    [['--seed', 'x1'], /--seed/],
    [['--set', 'routing.policy'], /expected PATH=VALUE/],
    [['--set', 'fleet.pools.0.tp=3'], /^llmfleet: --set fleet\.pools\.0\.tp=3 fleet\.pools\[0\]\.tp: expected a divisor of llama3\.1-8b's 32 attention heads, got 3$/m],
    // The flag created pools[1]: the missing model is its fault, not the file's.
    [['--set', 'fleet.pools.1.count=3'], /^llmfleet: --set fleet\.pools\.1\.count=3 fleet\.pools\[1\]\.model: expected a value of type string/m],
    [['--set', 'fleet.pools.0.count=100000000'], /fleet\.pools\[0\]\.count: expected ≤ 1000000/],
  ];
  for (const [args, message] of cases) {
    const r = cli('simulate', ...args, '--no-report', '--out', join(tmp(), 'o'));
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

test("--trace keeps the scenario's transforms and says so on stderr; --set workload.transforms drops the note", () => {
  const dir = tmp();
  const scenario = join(dir, 's.yaml');
  writeFileSync(scenario, 'name: s\nfleet:\n  pools: [{ name: p, model: llama3.1-8b, hardware: h100-80gb, count: 1 }]\nworkload:\n  synthetic: { requests: 10 }\n  transforms: { compress: 2, limit: 50 }\n');
  const r = cli('simulate', '--scenario', scenario, '--trace', conv, '--no-report', '--out', join(dir, 'o'));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^note: --trace keeps the scenario's workload\.transforms \(compress: 2, limit: 50\); --set 'workload\.transforms=\{\}' drops them$/m);
  assert.equal(JSON.parse(readFileSync(join(dir, 'o', 'summary.json'), 'utf8')).requests.total, 50);
  const quiet = cli('simulate', '--scenario', scenario, '--trace', conv, '--set', 'workload.transforms={limit: 20}', '--no-report', '--out', join(dir, 'o'));
  assert.equal(quiet.status, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /note: --trace/);
});
