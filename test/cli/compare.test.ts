import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRuns } from '../../src/report/format.ts';
import type { Summary } from '../../src/metrics/summary.ts';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', ...args], { encoding: 'utf8' });
const tmp = () => mkdtempSync(join(tmpdir(), 'llmfleet-compare-'));

test('compare runs the bundled three-router comparison on a trace slice in worker threads and writes comparison.json and report.html', () => {
  const out = tmp();
  const r = cli('compare', '--set', 'workload.transforms.limit=300', '--workers', '2', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const header = lines.findIndex((l) => l.startsWith('variant '));
  assert.ok(header >= 0, r.stdout);
  for (const [i, name] of ['round-robin', 'least-requests', 'jsq'].entries()) assert.ok(lines[header + 1 + i]!.startsWith(name), r.stdout);
  for (const col of ['cost', 'GPU-h', 'SLO', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'E2E p50', 'E2E p99', 'drops']) assert.ok(lines[header]!.includes(col), col);
  assert.match(r.stdout, /\*/, 'best values are marked');
  assert.ok(r.stdout.includes(`report: ${join(out, 'report.html')}`), r.stdout);
  const j = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
  assert.deepEqual(j.variants.map((v: { name: string }) => v.name), ['round-robin', 'least-requests', 'jsq']);
  assert.deepEqual(j.variants[2].overrides, ['routing.policy=jsq']);
  for (const v of j.variants) assert.equal(v.summary.requests.total, 300);
  assert.match(j.command, /^node bin\/llmfleet\.js compare --set workload\.transforms\.limit=300 --workers 2 --out /);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.equal((html.match(/<svg/g) ?? []).length, 8, 'seven time/latency charts plus cost vs SLO');
  // One variant again with simulate: the same run.
  const one = cli('simulate', '--scenario', 'scenarios/compare-routers.yaml', '--variant', 'jsq', '--set', 'workload.transforms.limit=300', '--no-report', '--quiet', '--out', join(out, 'jsq'));
  assert.equal(one.status, 0, one.stderr);
  const s = JSON.parse(readFileSync(join(out, 'jsq', 'summary.json'), 'utf8'));
  const { sim: _a, ...mine } = s;
  const { sim: _b, ...theirs } = j.variants[2].summary;
  assert.deepEqual(mine, theirs);
});

test('--variant flags on a trace give the same workload to every variant; the sequential path gives the same summaries', () => {
  const args = ['--trace', 'data/azure-llm/AzureLLMInferenceTrace_code.csv', '--trace-format', 'azure', '--set', 'workload.transforms.limit=200', '--variant', 'one:fleet.pools.0.count=1', '--variant', 'four:fleet.pools.0.count=4,routing.policy=jsq', '--quiet'];
  const a = tmp();
  const b = tmp();
  const ra = cli('compare', ...args, '--out', a);
  const rb = cli('compare', ...args, '--workers', '0', '--out', b);
  assert.equal(ra.status, 0, ra.stderr);
  assert.equal(rb.status, 0, rb.stderr);
  assert.equal(ra.stdout, '', '--quiet prints nothing');
  const strip = (p: string) => JSON.parse(readFileSync(join(p, 'comparison.json'), 'utf8')).variants.map((v: { summary: { sim: unknown } }) => ({ ...v, summary: { ...v.summary, sim: undefined } }));
  const va = strip(a);
  assert.deepEqual(va, strip(b), 'worker threads and the main thread agree');
  assert.equal(va[0].summary.requests.total, va[1].summary.requests.total);
  assert.equal(va[1].summary.fleet.instances, 4);
  assert.ok(va[1].summary.fleet.costUsd > va[0].summary.fleet.costUsd);
});

test('bad variants and flags exit 2 with one line naming the variant', () => {
  const cases: [string[], RegExp][] = [
    [['--variant', 'x:routing.policy'], /variant 'x': expected PATH=VALUE/],
    [['--variant', 'ok:routing.policy=jsq', '--variant', 'typo:routing.policy=lest-kv'], /variant 'typo'/],
    [['--variant', 'm:fleet.pools.0.model=gpt-9'], /variant 'm'.*fleet\.pools\[0\]\.model: expected a model of the catalog: .*got "gpt-9"/],
    [['--variant', 'x:name="abc,seed=2'], /^llmfleet: --variant x:name="abc,seed=2: variant 'x': name="abc,seed=2: expected PATH=VALUE with VALUE a YAML scalar or flow collection \(an unbalanced quote, bracket or brace\?\)/],
    [['--variant', 'x:fleet.pools.0.engine={maxNumSeqs: 64'], /--variant x:fleet\.pools\.0\.engine=\{maxNumSeqs: 64: variant 'x': .*unbalanced quote, bracket or brace/],
    [['--workers', '-1'], /--workers/],
  ];
  for (const [args, re] of cases) {
    const r = cli('compare', '--set', 'workload.transforms.limit=20', ...args, '--out', tmp());
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('the header names seed, requests and SLO once when the variants agree, and per variant where they differ', () => {
  const base = { seed: 1, requests: { total: 3000 }, slo: { ttftS: 1, tpotS: 0.05 } };
  const as = (o: object) => ({ ...base, ...o }) as unknown as Summary;
  assert.equal(describeRuns([{ name: 'a', summary: as({}) }, { name: 'b', summary: as({}) }]), 'seed 1; requests 3,000; SLO TTFT ≤ 1 s, TPOT ≤ 0.05 s');
  assert.equal(
    describeRuns([{ name: 'a', summary: as({}) }, { name: 'b', summary: as({ seed: 9, requests: { total: 19366 } }) }]),
    'seed a: 1, b: 9; requests a: 3,000, b: 19,366; SLO TTFT ≤ 1 s, TPOT ≤ 0.05 s',
  );
});
