import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dist, percentile, selectDist } from '../../src/metrics/stats.ts';

test('selectDist finds exactly the percentiles a full sort gives (duplicates, runs, any length), and the mean', () => {
  const values = fc.oneof(
    fc.array(fc.double({ min: 0, max: 1e4, noNaN: true }), { maxLength: 300 }),
    fc.array(fc.integer({ min: 0, max: 5 }).map((x) => x / 4), { maxLength: 300 }),
    fc.integer({ min: 0, max: 2000 }).map((n) => Array.from({ length: n }, (_, i) => (i * 7919) % 101)),
  );
  fc.assert(
    fc.property(values, (xs) => {
      const sorted = Float64Array.from(xs).sort();
      const d = selectDist(Float64Array.from(xs));
      for (const p of [50, 90, 95, 99] as const) assert.equal(d[`p${p}`], percentile(sorted, p), `p${p}`);
      const mean = xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0;
      assert.ok(Math.abs(d.mean - mean) <= 1e-9 * Math.max(1, Math.abs(mean)));
    }),
    { numRuns: 300 },
  );
  assert.deepEqual(dist([]), { mean: 0, p50: 0, p90: 0, p95: 0, p99: 0 });
  assert.deepEqual(dist([3, 1, 2]), { mean: 2, p50: 2, p90: 2.8, p95: 2.9, p99: 2.98 });
});
