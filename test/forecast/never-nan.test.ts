import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FORECASTER_NAMES, forecasters } from '../../src/forecast/registry.ts';
import { UserError } from '../../src/util/errors.ts';

// Awkward but valid series: constants, all zeros, lone spikes, tiny and huge magnitudes, random noise.
const series = fc.oneof(
  fc.tuple(fc.integer({ min: 30, max: 200 }), fc.double({ min: 0, max: 1e6, noNaN: true })).map(([n, v]) => new Array<number>(n).fill(v)),
  fc.integer({ min: 30, max: 200 }).map((n) => Array.from({ length: n }, (_, i) => (i % 17 === 0 ? 1000 : 0))),
  fc.array(fc.double({ min: 0, max: 1e4, noNaN: true }), { minLength: 30, maxLength: 200 }),
  fc.array(fc.double({ min: 0, max: 1e-6, noNaN: true }), { minLength: 30, maxLength: 120 }),
);

test('every forecaster returns finite, ordered, non-negative forecasts or a UserError on any valid series', () => {
  fc.assert(
    fc.property(series, fc.constantFrom(1, 7, 12), fc.boolean(), (y, period, log) => {
      for (const name of FORECASTER_NAMES) {
        if (name === 'lstm' || name === 'auto-arima') continue; // seconds per fit; covered in their own tests
        const f = forecasters[name]();
        try {
          f.fit(y, { period, logTransform: log });
        } catch (e) {
          assert.ok(e instanceof UserError, `${name} threw ${String(e)}`);
          continue;
        }
        let out;
        try {
          out = f.forecast(15);
        } catch (e) {
          assert.ok(e instanceof UserError, `${name} forecast threw ${String(e)}`);
          continue;
        }
        for (let i = 0; i < 15; i++) {
          const [lo, p, hi] = [out.p10[i]!, out.point[i]!, out.p90[i]!];
          assert.ok(Number.isFinite(lo) && Number.isFinite(p) && Number.isFinite(hi), `${name} non-finite at ${i}`);
          assert.ok(lo >= 0 && lo <= p && p <= hi, `${name} unordered at ${i}: ${lo} ${p} ${hi}`);
        }
      }
    }),
    { numRuns: 40, seed: 42 },
  );
});
