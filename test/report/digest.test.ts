import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CDF_FRACTIONS, cdfPoints, downsampleTimeline } from '../../src/report/digest.ts';
import type { TimelineRow } from '../../src/sim/timeline.ts';

const row = (tS: number, arrivals: number, ready: number): TimelineRow => ({
  tS, arrivals, completions: arrivals, drops: 0, provisioning: 0, ready, draining: 0, running: 1, waiting: 2, deferred: 1, kvUtilization: 0.5,
});

test('a CDF has at most 200 points, starts at the minimum and ends at the maximum', () => {
  assert.ok(CDF_FRACTIONS.length <= 200);
  const values = Array.from({ length: 1001 }, (_, i) => i / 1000);
  const c = cdfPoints(values.reverse());
  assert.equal(c.length, CDF_FRACTIONS.length);
  assert.equal(c[0]!.valueS, 0);
  assert.equal(c[c.length - 1]!.valueS, 1);
  const p99 = c.find((p) => Math.abs(p.fraction - 0.99) < 1e-3)!;
  assert.ok(Math.abs(p99.valueS - 0.99) < 2e-3, `p99 ≈ 0.99, got ${p99.valueS}`);
  assert.deepEqual(cdfPoints([]), []);
});

test('timeline counts become rates over each interval and the t = 0 row folds into the next', () => {
  const pts = downsampleTimeline([row(0, 1, 2), row(10, 19, 2), row(20, 30, 4)]);
  // The start (t = 0: its state, the first interval's rates), then one point per interval.
  assert.deepEqual(pts.map((p) => p.tS), [0, 10, 20]);
  assert.equal(pts[1]!.arrivalsPerS, 2); // (1 + 19) / 10 s
  assert.equal(pts[0]!.arrivalsPerS, 2);
  assert.equal(pts[2]!.arrivalsPerS, 3);
  assert.equal(pts[2]!.ready, 4);
  assert.equal(pts[1]!.queued, 3); // waiting + deferred
});

test('long timelines are merged into at most 500 points keeping the total arrivals', () => {
  const rows = Array.from({ length: 1234 }, (_, i) => row(i + 1, i % 7, i % 3));
  const pts = downsampleTimeline(rows);
  assert.ok(pts.length <= 500, `${pts.length} points`);
  let total = 0;
  let prev = 0;
  for (const p of pts) {
    total += p.arrivalsPerS * (p.tS - prev);
    prev = p.tS;
  }
  const expected = rows.reduce((s, r) => s + r.arrivals, 0);
  assert.ok(Math.abs(total - expected) < 1e-6, `${total} vs ${expected}`);
  assert.equal(pts[pts.length - 1]!.tS, 1234);
});
