import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forecastPeak } from '../../src/forecast/sageserve-peak.ts';
import { seasonalNaive } from '../../src/forecast/seasonal-naive.ts';

test('the demand is the forecast peak inside the window plus the buffer', () => {
  // Seasonal naive with period 1 repeats the last value; use a period-4 pattern via a fitted naive instead.
  const f = seasonalNaive();
  const history = Array.from({ length: 40 }, (_, i) => [10, 20, 40, 30][i % 4]!);
  const fit = f.fit.bind(f);
  f.fit = (h) => fit(h, { period: 4 });
  const r = forecastPeak(history, { horizon: 8, window: [1, 2], buffer: 5, forecaster: f });
  assert.deepEqual(r.forecast.point, [10, 20, 40, 30, 10, 20, 40, 30]);
  assert.equal(r.peak, 20);
  assert.equal(r.demand, 25);
  assert.ok(r.peakP90 >= r.peak);
});

test('ARIMA(3,1,2) peak demand on a rising series is above the last value', () => {
  const history = Array.from({ length: 200 }, (_, i) => 100 + i + 5 * Math.sin(i));
  const r = forecastPeak(history, { horizon: 60, window: [20, 60], buffer: 0 });
  assert.ok(r.peak > 290, `peak ${r.peak}`);
});

test('a bad window or buffer is a user error', () => {
  const h = Array.from({ length: 50 }, (_, i) => i + 1);
  assert.throws(() => forecastPeak(h, { horizon: 10, window: [5, 20], buffer: 0 }), /peak window/);
  assert.throws(() => forecastPeak(h, { horizon: 10, window: [1, 10], buffer: -1 }), /buffer/);
});
