import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarize, type Summary } from '../../src/metrics/summary.ts';
import { reportCharts, type ReportRun } from '../../src/report/charts.ts';
import { digestRun, downsampleTimeline } from '../../src/report/digest.ts';
import { renderReportHtml } from '../../src/report/html.ts';
import { formatPairedBlock, pairedBlock, seededStats, seededTable } from '../../src/report/seeds.ts';
import { meanCi95 } from '../../src/report/stats.ts';
import { comparisonTable, formatComparisonTable } from '../../src/report/table.ts';
import type { TimelineRow } from '../../src/sim/timeline.ts';
import { run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

/** A simulated run of `reqs`, digested as a report shows it. */
function digested(name: string, reqs: readonly Req[], raw: Record<string, unknown> = {}): ReportRun {
  const sc = scenarioFor(writeTrace(reqs), raw);
  const res = run(sc, 'fast');
  return { name, digest: digestRun(summarize(res, 0), res.log, res.timeline.rows, sc.output.timelineIntervalS) };
}

const oneToken: Req[] = Array.from({ length: 5 }, (_, i) => ({ t: i * 0.2, in: 100, out: 1 }));
const manyTokens: Req[] = oneToken.map((r) => ({ ...r, out: 20 }));

test('TPOT CDF: with every completed request at one output token the caption says so, not that nothing completed', () => {
  const one = digested('one', oneToken);
  const tpot = reportCharts([one]).find((c) => c.id === 'tpot-cdf')!;
  assert.doesNotMatch(tpot.caption, /No request completed/);
  assert.match(tpot.caption, /^Every completed request had a single output token \(no time between tokens\), so there is no distribution/);
  // TTFT still has its distribution; a run where nothing completed keeps its caption.
  assert.match(reportCharts([one]).find((c) => c.id === 'ttft-cdf')!.caption, /^Distribution of time to first token/);
  // Beside a variant with a TPOT: a line for that one, and the caption names the one without.
  const both = reportCharts([digested('many', manyTokens), one]).find((c) => c.id === 'tpot-cdf')!;
  assert.match(both.caption, /^Distribution of time per output token.* No line for one: every completed request had a single output token \(no time between tokens\)\.$/);
});

test('report table: a run with no request shows – for SLO attainment (as simulate prints), never 0.00 % or best', async () => {
  // Every request arrives after endS: the run has none.
  const empty = digested('empty', [{ t: 100, in: 100, out: 10 }], { endS: 50 });
  assert.equal(empty.digest.summary.requests.total, 0);
  const some = digested('some', manyTokens);
  const t = comparisonTable([empty, some].map((r) => ({ name: r.name, summary: r.digest.summary })));
  const slo = t.columns.findIndex((c) => c.key === 'slo');
  assert.equal(t.rows[0]!.cells[slo]!.text, '–');
  assert.equal(t.rows[0]!.cells[slo]!.best, false);
  assert.equal(t.rows[1]!.cells[slo]!.best, true);
  const html = await renderReportHtml({ kind: 'run', scenarioName: 's', seed: 1, command: 'x', scenarioYaml: '', variants: [], runs: [empty] });
  const results = html.match(/<table class="results">[\s\S]*?<\/table>/)![0];
  assert.doesNotMatch(results, /0\.00%/);
});

test('timeline: a run shorter than one interval still draws that interval (a point at 0 and one at its end)', () => {
  const r = digested('short', manyTokens); // a second or so, with 60 s rows
  const end = r.digest.summary.sim.simulatedSeconds;
  const pts = r.digest.timeline;
  assert.ok(pts.length >= 2, `${pts.length} points`);
  assert.equal(pts[0]!.tS, 0);
  assert.equal(pts[pts.length - 1]!.tS, end);
  // Every time chart then has a non-empty x range.
  for (const c of reportCharts([r]).filter((x) => ['kv-utilization', 'queue-length'].includes(x.id))) {
    const xs = (c.spec as { data: { values: { t: number }[] } }).data.values.map((v) => v.t);
    assert.ok(Math.max(...xs) > Math.min(...xs), c.id);
  }
});

const row = (tS: number, o: Partial<TimelineRow> = {}): TimelineRow => ({
  tS, arrivals: 0, completions: 0, drops: 0, provisioning: 0, ready: 1, draining: 0, running: 0, waiting: 0, deferred: 0, kvUtilization: 0, ...o,
});

test('timeline: an idle gap (no row between two rows far apart) is drawn at the state before it, not the state after', () => {
  // As the simulator writes gap.csv's run: a request at 0 (done by 60), nothing until one at 259200.
  const rows = [
    row(0, { arrivals: 1, running: 1, kvUtilization: 0.0002 }),
    row(60, { completions: 1 }),
    row(259200, { arrivals: 1, running: 1, kvUtilization: 0.0002 }),
    row(259200.48, { completions: 1 }),
  ];
  const pts = downsampleTimeline(rows, 500, 60);
  assert.deepEqual(pts.map((p) => p.tS), [0, 60, 259140, 259200, 259200.48]);
  // Through the gap (up to its last interval) the KV and running requests are those after the row at 60: none.
  const gap = pts[2]!;
  assert.deepEqual([gap.kvUtilization, gap.running, gap.arrivalsPerS], [0, 0, 0]);
  // The row after the gap covers its own interval only: its arrival is 1 per 60 s, not 1 per 72 h.
  assert.equal(pts[3]!.arrivalsPerS, 1 / 60);
  assert.equal(pts[3]!.kvUtilization, 0.0002);
  // Total arrivals are kept.
  let total = 0;
  for (let i = 1; i < pts.length; i++) total += pts[i]!.arrivalsPerS * (pts[i]!.tS - pts[i - 1]!.tS);
  assert.ok(Math.abs(total - 2) < 1e-9, String(total));
  // The same from a simulated run of that trace: no point inside the gap shows KV in use.
  const sim = digested('gap', [{ t: 0, in: 100, out: 50 }, { t: 259200, in: 100, out: 50 }]);
  const inGap = sim.digest.timeline.filter((p) => p.tS > 60 && p.tS < 259200);
  assert.ok(inGap.length > 0 && inGap.every((p) => p.kvUtilization === 0 && p.running === 0), JSON.stringify(sim.digest.timeline));
});

/** What the table reads of a summary, by hand; `completed` 0 gives no latency. */
function summary(o: { cost: number; ttftP99: number; completed?: number }): Summary {
  const d = (p50: number, p99: number) => ({ mean: p50, p50, p90: p99, p95: p99, p99 });
  const completed = o.completed ?? 100;
  return {
    fleet: { costUsd: o.cost, gpuHours: o.cost / 4 },
    requests: { total: 100, completed, dropped: 0, unfinished: 100 - completed },
    slo: { attainment: 0.9 },
    ttft: d(o.ttftP99 / 4, o.ttftP99),
    tpot: { count: completed, ...d(0.02, 0.05) },
    e2e: d(1, 5),
  } as unknown as Summary;
}

test('compare --seeds: a column with no value on some seed says on how many seeds it had one, in the table and comparison.json', () => {
  const m = meanCi95([1, NaN, 3]);
  assert.ok(Number.isNaN(m.mean) && Number.isNaN(m.ci95));
  assert.deepEqual([m.n, m.nWithValue], [3, 2]);
  const gappy = [summary({ cost: 1, ttftP99: 0.1 }), summary({ cost: 1, ttftP99: 0, completed: 0 }), summary({ cost: 1, ttftP99: 0.3 })];
  const full = [0.1, 0.2, 0.3].map((ttftP99) => summary({ cost: 2, ttftP99 }));
  const t = seededTable([{ name: 'gappy', summaries: gappy }, { name: 'full', summaries: full }]);
  const j = t.columns.findIndex((c) => c.key === 'ttftP99');
  assert.equal(t.rows[0]!.cells[j]!.text, '– (2/3 seeds)');
  assert.equal(t.rows[0]!.cells[j]!.best, false);
  assert.match(formatComparisonTable(t, true), /^gappy .*– \(2\/3 seeds\)/m);
  const stats = seededStats(t, 0);
  assert.equal(stats.nWithValue.ttftP99, 2);
  assert.equal(stats.nWithValue.cost, 3);
  assert.ok(Number.isNaN(stats.mean.ttftP99));
  assert.equal(seededStats(t, 1).nWithValue.ttftP99, 3);
  // The paired block: the difference needs both values on a seed.
  const p = pairedBlock([{ name: 'full', summaries: full }, { name: 'gappy', summaries: gappy }], 0);
  const cell = p.rows[1]!.cells[p.metrics.findIndex((x) => x.key === 'ttftP99')]!;
  assert.deepEqual([cell.n, cell.nWithValue], [3, 2]);
  assert.match(formatPairedBlock(p, 3), /^gappy .*– \(2\/3 seeds\)/m);
});
