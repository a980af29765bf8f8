import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestLog } from '../../../src/metrics/collector.ts';
import { summarize } from '../../../src/metrics/summary.ts';
import { EndpointMemoryBins, latencyBy3h } from '../../../src/policy/sageserve/stats.ts';
import { run, scenarioFor, writeTrace } from '../../helpers/sim.ts';

/** The few RequestLog members latencyBy3h reads; `e2e` NaN = not completed. */
function fakeLog(rows: { arrival: number; ttft: number; e2e: number; tier: string }[]): RequestLog {
  const tiers = [...new Set(rows.map((r) => r.tier))];
  return {
    n: rows.length,
    isDone: (i: number) => !Number.isNaN(rows[i]!.e2e),
    arrival: rows.map((r) => r.arrival),
    ttft: rows.map((r) => r.ttft),
    e2e: rows.map((r) => r.e2e),
    tiers,
    tierIdx: rows.map((r) => tiers.indexOf(r.tier)),
  } as unknown as RequestLog;
}

test('p95 TTFT and E2E per 3-hour bin of completion time, per tier and over all (hand-computed)', () => {
  const bins = latencyBy3h(
    fakeLog([
      { arrival: 0, ttft: 1, e2e: 10, tier: 'iw-f' },
      { arrival: 100, ttft: 3, e2e: 20, tier: 'niw' },
      { arrival: 10_790, ttft: 2, e2e: 20, tier: 'iw-f' }, // arrives in the first bin, completes in the second
      { arrival: 50, ttft: 5, e2e: NaN, tier: 'iw-f' }, // unfinished: in no bin
    ]),
  );
  assert.deepEqual(bins, [
    {
      startS: 0,
      tiers: {
        // two values: p95 = lower + 0.95 × (upper − lower)
        all: { completed: 2, ttftP95: 1 + 0.95 * 2, e2eP95: 10 + 0.95 * 10 },
        'iw-f': { completed: 1, ttftP95: 1, e2eP95: 10 },
        niw: { completed: 1, ttftP95: 3, e2eP95: 20 },
      },
    },
    { startS: 10_800, tiers: { all: { completed: 1, ttftP95: 2, e2eP95: 20 }, 'iw-f': { completed: 1, ttftP95: 2, e2eP95: 20 } } },
  ]);
});

test('a tier named "all" is listed as "tier all", apart from the aggregate (it was merged into it: 2 completions counted as 3)', () => {
  const bins = latencyBy3h(fakeLog([{ arrival: 0, ttft: 1, e2e: 10, tier: 'all' }, { arrival: 0, ttft: 3, e2e: 20, tier: 'b' }]));
  assert.deepEqual(Object.keys(bins[0]!.tiers), ['all', 'tier all', 'b']);
  assert.equal(bins[0]!.tiers.all!.completed, 2);
  assert.equal(bins[0]!.tiers['tier all']!.completed, 1);
});

test("the released code's memory statistic: busiest instance per sample, mean per 15-min bin, spread of the bins", () => {
  const m = new EndpointMemoryBins();
  const sample = (t: number, notes: [string, number][]) => {
    for (const [region, u] of notes) m.note('llama2-70b', region, u);
    m.sampled(t);
  };
  sample(0, [['east', 0.2], ['east', 0.6], ['west', 0.3]]); // east's busiest: 0.6
  sample(450, [['east', 0.4]]); // first bin of east: (0.6 + 0.4) / 2 = 0.5
  sample(900, [['east', 0.1], ['east', 0.05]]); // second bin: 0.1
  const s = m.spread();
  assert.deepEqual(Object.keys(s), ['east/llama2-70b', 'west/llama2-70b']);
  const e = s['east/llama2-70b']!;
  assert.equal(e.bins, 2);
  for (const [k, want] of [['mean', 0.3], ['p5', 0.1 + 0.05 * 0.4], ['p25', 0.2], ['p50', 0.3], ['p75', 0.4], ['p95', 0.1 + 0.95 * 0.4]] as const) {
    assert.ok(Math.abs(e[k] - want) < 1e-12, `${k}: ${e[k]} vs ${want}`);
  }
  assert.deepEqual(s['west/llama2-70b'], { bins: 1, mean: 0.3, p5: 0.3, p25: 0.3, p50: 0.3, p75: 0.3, p95: 0.3 });
});

test('summary.json has the sageserve block with the sageserve router only', () => {
  const trace = writeTrace(Array.from({ length: 20 }, (_, i) => ({ t: i * 0.5, in: 200, out: 20, tier: 'iw-f' })));
  const withRouter = (policy: string) => summarize(run(scenarioFor(trace, { routing: { policy } }), 'fast'), 0);
  const s = withRouter('sageserve');
  assert.equal(s.sageserve?.latencyBy3h.length, 1);
  assert.equal(s.sageserve?.latencyBy3h[0]!.tiers.all!.completed, 20);
  assert.ok(Object.keys(s.sageserve!.memoryUtil).length === 1, 'one endpoint');
  assert.equal(withRouter('round-robin').sageserve, undefined);
});
