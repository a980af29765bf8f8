import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Summary } from '../../src/metrics/summary.ts';
import { buildSeededComparisonReport, runSeededComparison, seededComparisonJson, seededJobs } from '../../src/report/compare.ts';
import {
  baselineIndex,
  formatDiffCi,
  formatMeanCi,
  formatPairedBlock,
  pairedBlock,
  parseSeedsFlag,
  requestsRange,
  seededFrontier,
  seededTable,
  seedsIdentical,
} from '../../src/report/seeds.ts';
import { formatComparisonTable } from '../../src/report/table.ts';
import { UserError } from '../../src/util/errors.ts';
import { smallComparison } from './fixture.ts';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', ...args], { encoding: 'utf8' });
const tmp = () => mkdtempSync(join(tmpdir(), 'llmfleet-seeds-'));

/** What the comparison table reads of a summary, set by hand. */
function summary(o: { cost: number; slo: number; ttftP99: number; dropped?: number }): Summary {
  const d = (p50: number, p99: number) => ({ mean: p50, p50, p90: p99, p95: p99, p99 });
  return {
    fleet: { costUsd: o.cost, gpuHours: o.cost / 4 },
    requests: { total: 100, completed: 100, dropped: o.dropped ?? 0, unfinished: 0 },
    slo: { attainment: o.slo },
    ttft: d(o.ttftP99 / 4, o.ttftP99),
    tpot: { count: 100, ...d(0.02, 0.05) },
    e2e: d(1, 5),
  } as unknown as Summary;
}

test('--seeds is a count from the base seed or a list of distinct seeds; anything else is a one-line UserError naming the flag', () => {
  assert.deepEqual(parseSeedsFlag('3', 1), [1, 2, 3]);
  assert.deepEqual(parseSeedsFlag('2', 40), [40, 41]);
  assert.deepEqual(parseSeedsFlag('7,3,11', 1), [7, 3, 11]);
  assert.deepEqual(parseSeedsFlag(' -1, 0 ', 1), [-1, 0]);
  for (const bad of ['1', '0', '-2', 'a', '', '2.5', '1,', ',', '1,a', '1001']) {
    assert.throws(() => parseSeedsFlag(bad, 1), (e: Error) => e instanceof UserError && /^--seeds: expected a count from 2 to 1000 or a comma list/.test(e.message) && !e.message.includes('\n'), bad);
  }
  assert.throws(() => parseSeedsFlag('1,2,1', 1), (e: Error) => e instanceof UserError && e.message === '--seeds 1,2,1: seed 1 is given twice; expected distinct seeds');
  assert.equal(baselineIndex(undefined, ['a', 'b']), 0);
  assert.equal(baselineIndex('b', ['a', 'b']), 1);
  assert.throws(() => baselineIndex('c', ['a', 'b']), (e: Error) => e instanceof UserError && e.message === '--baseline c: expected the name of a variant: a, b');
});

test('the table over seeds shows mean ± 95 % half-width per cell and marks the best mean', () => {
  const t = seededTable([
    { name: 'a', summaries: [summary({ cost: 1, slo: 0.9, ttftP99: 0.1 }), summary({ cost: 2, slo: 0.92, ttftP99: 0.2 }), summary({ cost: 3, slo: 0.94, ttftP99: 0.3 })] },
    { name: 'b', summaries: [summary({ cost: 4, slo: 1, ttftP99: 0.05 }), summary({ cost: 4, slo: 1, ttftP99: 0.05 }), summary({ cost: 4, slo: 1, ttftP99: 0.05 })] },
  ]);
  const cell = (row: number, key: string) => t.rows[row]!.cells[t.columns.findIndex((c) => c.key === key)]!;
  assert.equal(cell(0, 'cost').text, '$2.00 ± 2.48');
  assert.equal(cell(0, 'cost').value, 2);
  assert.ok(cell(0, 'cost').best && !cell(1, 'cost').best);
  assert.equal(cell(0, 'ttftP99').text, '200.0 ± 248.4 ms');
  assert.equal(cell(0, 'slo').text, '92.00 ± 4.97%');
  assert.equal(cell(1, 'slo').text, '100 ± 0.00%');
  assert.ok(cell(1, 'slo').best && cell(1, 'ttftP99').best);
  assert.equal(cell(1, 'drops').text, '0 ± 0');
  const text = formatComparisonTable(t, true);
  assert.match(text, /^a\s+\$2\.00 ± 2\.48\*/m);
  assert.match(text, /^\* best mean in column/m);
  assert.deepEqual(seededFrontier([
    { name: 'a', summaries: [summary({ cost: 1, slo: 0.9, ttftP99: 0.1 })] },
    { name: 'b', summaries: [summary({ cost: 4, slo: 1, ttftP99: 0.1 })] },
    { name: 'c', summaries: [summary({ cost: 5, slo: 0.95, ttftP99: 0.1 })] },
  ]), ['a', 'b']);
});

test('formats: latency in ms or s, attainment floored to 0.01 %, signed differences', () => {
  assert.equal(formatMeanCi('latency', { mean: 0.0432, ci95: 0.0008 }), '43.2 ± 0.8 ms');
  assert.equal(formatMeanCi('latency', { mean: 2.5, ci95: 0.25 }), '2.50 ± 0.25 s');
  assert.equal(formatMeanCi('attainment', { mean: 0.99999, ci95: 0.00001 }), '99.99 ± 0.00%');
  assert.equal(formatMeanCi('count', { mean: 1.5, ci95: 2 }), '1.5 ± 2.0');
  assert.equal(formatMeanCi('usd', { mean: NaN, ci95: NaN }), '–');
  assert.equal(formatDiffCi('latency', { mean: -0.0031, ci95: 0.0082 }), '-3.1 ± 8.2 ms');
  assert.equal(formatDiffCi('usd', { mean: 0.04, ci95: 0.01 }), '+$0.04 ± 0.01');
  assert.equal(formatDiffCi('attainment', { mean: 0.0017, ci95: 0.0072 }), '+0.17 ± 0.72 pp');
  assert.equal(formatDiffCi('latency', { mean: 0, ci95: 0 }), '0.0 ± 0.0 ms');
});

test('the paired block: per-seed differences against the baseline, their interval, wins, and a mark where it excludes 0', () => {
  const base = [0.1, 0.2, 0.3].map((ttftP99) => summary({ cost: 10, slo: 0.9, ttftP99 }));
  const faster = [0.08, 0.175, 0.285].map((ttftP99) => summary({ cost: 12, slo: 0.9, ttftP99 }));
  const noisy = [0.2, 0.1, 0.3].map((ttftP99) => summary({ cost: 10, slo: 0.9, ttftP99 }));
  const p = pairedBlock([{ name: 'base', summaries: base }, { name: 'faster', summaries: faster }, { name: 'noisy', summaries: noisy }], 0);
  assert.equal(p.baseline, 'base');
  assert.deepEqual(p.metrics.map((m) => m.key), ['cost', 'slo', 'ttftP99', 'e2eP99']);
  const cell = (row: number, key: string) => p.rows[row]!.cells[p.metrics.findIndex((m) => m.key === key)]!;
  for (const m of p.metrics) assert.deepEqual({ ...cell(0, m.key) }, { mean: 0, ci95: 0, n: 3, nWithValue: 3, wins: 0, excludesZero: false }, m.key);
  // faster: −0.02, −0.025, −0.015 → −0.02 ± 4.303·0.005/√3; every seed a win; the interval excludes 0.
  const f = cell(1, 'ttftP99');
  assert.ok(Math.abs(f.mean + 0.02) < 1e-12);
  assert.ok(Math.abs(f.ci95 - (4.3026527 * 0.005) / Math.sqrt(3)) < 1e-9);
  assert.equal(f.wins, 3);
  assert.equal(f.excludesZero, true);
  // Cost is 2 more on every seed: a loss with no spread, excluding 0.
  assert.deepEqual({ ...cell(1, 'cost') }, { mean: 2, ci95: 0, n: 3, nWithValue: 3, wins: 0, excludesZero: true });
  // noisy: +0.1, −0.1, 0 → mean 0, one win, the interval holds 0.
  assert.equal(cell(2, 'ttftP99').wins, 1);
  assert.equal(cell(2, 'ttftP99').excludesZero, false);
  const text = formatPairedBlock(p, 3);
  assert.match(text, /^Paired against base over 3 seeds/);
  assert.match(text, /^faster\s+\+\$2\.00 ± 0\.00†\s+0\.00 ± 0\.00 pp\s+-20\.0 ± 12\.4 ms†/m);
  assert.match(text, /^ {2}wins\s+0\/3\s+0\/3\s+3\/3\s+0\/3$/m);
  assert.doesNotMatch(text, /^base /m, 'the baseline has no row of its own');
  assert.match(text, /^† the interval excludes 0$/m);
});

test('seeded jobs replace every variant\'s seed, seed-major; runs, comparison.json and the report agree', async () => {
  const { setup } = await smallComparison();
  const jobs = seededJobs(setup, [5, 6]);
  assert.deepEqual(jobs.map((j) => [j.variant, j.seed, j.scenario.seed]), [[0, 5, 5], [1, 5, 5], [2, 5, 5], [0, 6, 6], [1, 6, 6], [2, 6, 6]]);
  const done: number[] = [];
  const variants = await runSeededComparison(setup, [5, 6], { mode: 'fast', workers: 0, onDone: (j) => done.push(j) });
  assert.deepEqual(done, [0, 1, 2, 3, 4, 5], 'progress counts jobs (variants × seeds)');
  assert.deepEqual(variants.map((v) => v.perSeed.map((r) => r.digest.summary.seed)), [[5, 6], [5, 6], [5, 6]]);
  // The same seed is the same workload across variants; another seed is another workload.
  assert.equal(variants[0]!.perSeed[0]!.digest.workload, variants[2]!.perSeed[0]!.digest.workload);
  assert.notEqual(variants[0]!.perSeed[0]!.digest.workload, variants[0]!.perSeed[1]!.digest.workload);
  const c = { seeds: [5, 6], baseline: 1, variants };
  const j = seededComparisonJson(setup, c, 'cmd');
  assert.equal(j.seed, 5);
  assert.equal(j.paired.baseline, 'x2');
  assert.deepEqual(j.variants[0]!.summary, variants[0]!.perSeed[0]!.digest.summary, 'summary: the first seed\'s run');
  const html = await buildSeededComparisonReport(setup, c, 'cmd');
  assert.match(html, /<section id="seeds"><h2>Comparison over 2 seeds \(mean ± 95 % CI\)<\/h2>/);
  assert.match(html, /<h3>Paired against x2<\/h3><table class="paired">/);
  assert.match(html, /<h2>Charts \(the first seed, 5, only\)<\/h2>/);
  assert.match(html, /2 seeds \(5, 6\) · charts and the first table: seed 5/);
});

test('compare --seeds 3 runs every variant on each seed and writes means, intervals, per-seed runs and the paired block', () => {
  const out = tmp();
  // rateScale thins and copies requests at random: each seed is a different workload (a plain trace replay is not).
  const r = cli('compare', '--set', 'workload.transforms.limit=150', '--set', 'workload.transforms.rateScale=1.5', '--seeds', '3', '--baseline', 'least-requests', '--workers', '2', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^compared 3 variants of compare-routers on 3 seeds \(seeds 1, 2, 3; requests /);
  const lines = r.stdout.split('\n');
  const header = lines.findIndex((l) => l.startsWith('variant '));
  for (const [i, name] of ['round-robin', 'least-requests', 'jsq'].entries()) {
    assert.match(lines[header + 1 + i]!, new RegExp(`^${name}\\s+\\$\\d+\\.\\d\\d ± \\d+\\.\\d\\d[* ]`), r.stdout);
  }
  assert.match(r.stdout, / ms[* ]/);
  assert.match(r.stdout, /^± half-width of the two-sided 95 % Student-t interval of the mean over the 3 seeds$/m);
  assert.match(r.stdout, /^Paired against least-requests over 3 seeds/m);
  assert.match(r.stdout, /^ {2}wins\s+\d\/3/m);
  assert.match(r.stderr, /9 runs \(3 variants × 3 seeds\)/);

  const j = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
  assert.deepEqual(j.seeds, [1, 2, 3]);
  assert.equal(j.seed, 1);
  const keys = ['cost', 'gpuHours', 'slo', 'ttftP50', 'ttftP99', 'tpotP50', 'tpotP99', 'e2eP50', 'e2eP99', 'drops'];
  for (const v of j.variants) {
    assert.deepEqual(v.perSeed.map((p: { seed: number }) => p.seed), [1, 2, 3], v.name);
    assert.deepEqual(v.perSeed.map((p: { summary: Summary }) => p.summary.seed), [1, 2, 3], v.name);
    assert.deepEqual(v.summary, v.perSeed[0].summary);
    for (const k of keys) {
      assert.ok(Number.isFinite(v.mean[k]) && Number.isFinite(v.ci95[k]) && v.ci95[k] >= 0, `${v.name} ${k}`);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ps: Summary[] = v.perSeed.map((p: { summary: Summary }) => p.summary);
    assert.ok(Math.abs(v.mean.cost - mean(ps.map((s) => s.fleet.costUsd))) < 1e-12, v.name);
    assert.ok(Math.abs(v.mean.ttftP99 - mean(ps.map((s) => s.ttft.p99))) < 1e-12, v.name);
    assert.ok(Math.abs(v.mean.e2eP50 - mean(ps.map((s) => s.e2e.p50))) < 1e-12, v.name);
    assert.ok(Math.abs(v.mean.drops - mean(ps.map((s) => s.requests.dropped))) < 1e-12, v.name);
  }
  // Seeds differ in workload, so the TTFT tail has a spread.
  assert.ok(j.variants.some((v: { ci95: { ttftP99: number } }) => v.ci95.ttftP99 > 0));
  assert.equal(j.paired.baseline, 'least-requests');
  assert.deepEqual(j.paired.metrics, ['cost', 'slo', 'ttftP99', 'e2eP99']);
  const self = j.paired.variants.find((v: { name: string }) => v.name === 'least-requests');
  for (const k of j.paired.metrics) assert.deepEqual(self.diff[k], { mean: 0, ci95: 0, n: 3, nWithValue: 3, wins: 0, excludesZero: false }, k);
  const jsq = j.paired.variants.find((v: { name: string }) => v.name === 'jsq');
  const lr = j.variants[1];
  const jv = j.variants[2];
  const diffs = [0, 1, 2].map((k) => jv.perSeed[k].summary.ttft.p99 - lr.perSeed[k].summary.ttft.p99);
  assert.ok(Math.abs(jsq.diff.ttftP99.mean - diffs.reduce((a, b) => a + b, 0) / 3) < 1e-12);

  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /<section id="seeds">/);
  assert.equal((html.match(/<svg/g) ?? []).length, 8, 'the same charts as one seed (of the first seed)');
});

test('without --seeds, comparison.json has no multi-seed fields', () => {
  const out = tmp();
  const r = cli('compare', '--set', 'workload.transforms.limit=20', '--quiet', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
  assert.deepEqual(Object.keys(j), ['scenario', 'seed', 'command', 'variants']);
  assert.deepEqual(Object.keys(j.variants[0]), ['name', 'overrides', 'summary']);
  assert.doesNotMatch(readFileSync(join(out, 'report.html'), 'utf8'), /id="seeds"/);
});

test('bad --seeds and --baseline exit 2 with one line naming the flag', () => {
  const cases: [string[], RegExp][] = [
    [['--seeds', '1'], /^llmfleet: --seeds: expected a count from 2 to 1000 or a comma list of at least two distinct integer seeds \(e\.g\. 5 or 1,2,3\), got '1'$/],
    [['--seeds', '0'], /^llmfleet: --seeds: expected a count .*got '0'$/],
    [['--seeds', 'a'], /^llmfleet: --seeds: expected a count .*got 'a'$/],
    [['--seeds', '1,1'], /^llmfleet: --seeds 1,1: seed 1 is given twice; expected distinct seeds$/],
    [['--seeds', '2', '--baseline', 'nope'], /^llmfleet: --baseline nope: expected the name of a variant: round-robin, least-requests, jsq$/],
    [['--baseline', 'jsq'], /^llmfleet: --baseline jsq: applies only with --seeds/],
  ];
  for (const [args, re] of cases) {
    const r = cli('compare', '--set', 'workload.transforms.limit=20', ...args, '--out', tmp());
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trim(), re);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
  }
});

test('--seeds N refuses a run of seeds past 2^53 − 1, where base + i would repeat seeds', () => {
  const max = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(parseSeedsFlag('3', max - 2), [max - 2, max - 1, max]);
  for (const base of [max, max - 1, max + 1]) {
    assert.throws(
      () => parseSeedsFlag('3', base),
      (e: Error) => e instanceof UserError && e.message.startsWith(`--seeds 3: seeds ${base} to ${base} + 2 go past ${max}`) && e.message.includes(`≤ ${max - 2}`),
      String(base),
    );
  }
  assert.throws(() => parseSeedsFlag('1000', max - 10), /--seeds 1000: .* go past 9007199254740991/);
  // Negative bases stay fine.
  assert.deepEqual(parseSeedsFlag('2', -5), [-5, -4]);
});

test('a paired difference that prints as 0 is not marked (it showed "$0.00 ± 0.00†"); identical seeds are recognised', () => {
  const base = [1, 2, 3].map(() => summary({ cost: 10, slo: 0.9, ttftP99: 0.2 }));
  const tiny = [1, 2, 3].map(() => summary({ cost: 10.001, slo: 0.9, ttftP99: 0.2 }));
  const p = pairedBlock([{ name: 'base', summaries: base }, { name: 'tiny', summaries: tiny }], 0);
  const cost = p.rows[1]!.cells[p.metrics.findIndex((m) => m.key === 'cost')]!;
  assert.ok(cost.mean > 0 && cost.ci95 < 1e-12, 'a difference with no spread');
  assert.equal(cost.excludesZero, false);
  assert.match(formatPairedBlock(p, 3), /^tiny\s+\$0\.00 ± 0\.00 /m);
  assert.equal(seedsIdentical([{ name: 'base', summaries: base }]), true);
  const varied = [0.1, 0.2, 0.3].map((ttftP99) => summary({ cost: 10, slo: 0.9, ttftP99 }));
  assert.equal(seedsIdentical([{ name: 'base', summaries: base }, { name: 'v', summaries: varied }]), false);
  const more = { ...summary({ cost: 10, slo: 0.9, ttftP99: 0.2 }), requests: { total: 1117, completed: 1117, dropped: 0, unfinished: 0 } } as Summary;
  assert.equal(requestsRange([{ name: 'a', summaries: [base[0]!, more] }]), '100–1,117');
  assert.equal(requestsRange([{ name: 'a', summaries: base }]), '100');
});

test('report.html colours a paired difference that excludes 0 by its direction: green better, red worse', async () => {
  const { setup } = await smallComparison();
  const variants = await runSeededComparison(setup, [5, 6, 7], { mode: 'fast', workers: 0 });
  const html = await buildSeededComparisonReport(setup, { seeds: [5, 6, 7], baseline: 0, variants }, 'cmd');
  const paired = html.match(/<table class="paired">[\s\S]*?<\/table>/)![0];
  // x2 and x3 (more instances) cost more than x1 on every seed: worse; where an interval excludes 0 the class says which way.
  const cells = [...paired.matchAll(/<td class="num (better|worse)">([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
  assert.ok(cells.length > 0, paired);
  for (const [cls, text] of cells) assert.ok(text!.endsWith('†'), `${cls} ${text}`);
  assert.ok(cells.some(([cls, text]) => cls === 'worse' && text!.startsWith('+$')), 'dearer is worse');
  assert.doesNotMatch(paired, /class="num best"/);
  assert.match(html, /green where the variant is better than x1, red where it is worse/);
});
