import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { searchMaxRate, searchMinCount, type CapacityProbe } from '../../src/report/capacity.ts';

/** A probe whose run meets the target exactly when `meets(value)`. */
const probeBy = (meets: (v: number) => boolean) => (value: number): CapacityProbe => ({
  value, attainment: meets(value) ? 1 : 0.5, meets: meets(value), requests: 100, offeredRatePerS: value, gpus: 1, ttftP99S: 0, tpotP99S: 0, costUsd: 0,
});

test('the load search brackets a monotone boundary within the tolerance, the best probe meeting it', () => {
  fc.assert(
    fc.property(fc.double({ min: 0.002, max: 5e5, noNaN: true }), fc.double({ min: 0.01, max: 0.5, noNaN: true }), (edge, tolerance) => {
      const s = searchMaxRate(probeBy((f) => f <= edge), { tolerance, maxRuns: 100 });
      assert.ok(s.converged);
      assert.ok(s.best!.value <= edge && s.best!.meets);
      assert.ok(s.bracket.fails! > edge && s.bracket.fails! / s.best!.value <= 1 + tolerance);
    }),
  );
});

test('the load search stops at the workload limits and at --max-runs, and says it did not converge', () => {
  const always = searchMaxRate(probeBy(() => true), { min: 0.5, max: 8, maxRuns: 100 });
  assert.deepEqual([always.best!.value, always.bracket.fails, always.converged], [8, undefined, false]);
  const never = searchMaxRate(probeBy(() => false), { min: 0.25, max: 8, maxRuns: 100 });
  assert.deepEqual([never.best, never.bracket.fails, never.probes.map((p) => p.value)], [undefined, 0.25, [1, 0.5, 0.25]]);
  const short = searchMaxRate(probeBy((f) => f <= 3), { maxRuns: 3, tolerance: 0.01 });
  assert.deepEqual([short.probes.length, short.converged, short.best!.value, short.bracket.fails], [3, false, 2, 4]);
});

test('the count search finds the fewest instances exactly, from above or below the start', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }), (need, start) => {
      const s = searchMinCount(probeBy((n) => n >= need), { start, maxRuns: 100 });
      assert.ok(s.converged);
      assert.equal(s.best!.value, need);
      if (need > 1) assert.equal(s.bracket.fails, need - 1);
    }),
  );
  const capped = searchMinCount(probeBy((n) => n >= 100), { start: 2, max: 40, maxRuns: 100 });
  assert.deepEqual([capped.best, capped.bracket.fails, capped.converged], [undefined, 40, false]);
});
