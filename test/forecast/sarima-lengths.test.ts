import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sarima } from '../../src/forecast/arima.ts';
import { syntheticSeries } from '../../src/forecast/synthetic.ts';

// Hourly synthetic series (daily ±50 %, weekend dip, 1 %/day trend, 3 % noise), seed 1: the package's default-optimizer
// SARIMA(1,0,1)(0,1,1)24 fit on the first L points was refused for these L (exact ML ends with AR1 ≥ 1 and negative
// h-step MSEs; CSS-then-ML diverges to NaN); L = 317 fitted at the first attempt. The retry (exact ML with Nelder-Mead) fits them;
// the measurement is in docs/fidelity/forecast.md.
const series = syntheticSeries({ points: 24 * 21, stepS: 3600, seed: 1 });

test('sarima (default order, period 24) fits clean hourly series at lengths the package alone refused; the retry is reported', () => {
  for (const L of [239, 316, 412]) {
    const f = sarima();
    f.fit(series.values.slice(0, L), { period: 24 });
    const fc = f.forecast(24);
    const clean = series.clean.slice(L, L + 24);
    const mean = clean.reduce((a, b) => a + b, 0) / clean.length;
    const mae = fc.point.reduce((a, v, i) => a + Math.abs(v - clean[i]!), 0) / clean.length;
    assert.ok(fc.point.every(Number.isFinite), `L = ${L}: finite`);
    assert.ok(mae < 0.2 * mean, `L = ${L}: 24-step MAE ${mae.toFixed(1)} vs mean ${mean.toFixed(1)}`);
    for (let i = 0; i < 24; i++) assert.ok(fc.p10[i]! <= fc.point[i]! && fc.point[i]! < fc.p90[i]!, `L = ${L}: interval at step ${i + 1}`);
    assert.deepEqual(f.lastFit, { attempt: 3, method: 'exact-ml-nelder-mead' }, `L = ${L}: retry reported`);
  }
  // A length the first attempt fits is not retried.
  const ok = sarima();
  ok.fit(series.values.slice(0, 317), { period: 24 });
  assert.deepEqual(ok.lastFit, { attempt: 1, method: 'exact-ml' });
});
