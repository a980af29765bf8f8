import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backtest, candidatePeriods, score, selectModel } from '../../src/forecast/backtest.ts';
import { runForecast } from '../../src/forecast/pipeline.ts';
import { forecasters } from '../../src/forecast/registry.ts';
import { syntheticSeries } from '../../src/forecast/synthetic.ts';
import { UserError } from '../../src/util/errors.ts';

test('metrics follow their definitions on a hand-computed example', () => {
  const m = score([{ actual: [100, 200, 0], forecast: { point: [110, 180, 10], p10: [90, 190, 1], p50: [110, 180, 10], p90: [120, 210, 5] } }]);
  assert.equal(m.mape, (10 / 100 + 20 / 200) / 2 * 100); // zero actual skipped
  assert.ok(Math.abs(m.smape! - ((2 * 10) / 210 + (2 * 20) / 380 + 2) / 3 * 100) < 1e-9);
  assert.ok(Math.abs(m.rmse - Math.sqrt((100 + 400 + 100) / 3)) < 1e-9);
  assert.ok(Math.abs(m.rrmse! - (100 * m.rmse) / 100) < 1e-9);
  assert.ok(Math.abs(m.coverage80 - 200 / 3) < 1e-9);
  assert.ok(Math.abs(m.peakError! - 10) < 1e-9); // |180 − 200| / 200
});

test('candidate periods are one day and one week in points', () => {
  assert.deepEqual(candidatePeriods(600), [144, 1008]);
  assert.deepEqual(candidatePeriods(3600), [24, 168]);
  assert.deepEqual(candidatePeriods(7 * 86_400), []);
});

test('rolling-origin backtest scores folds × horizon points and rejects too-short series', () => {
  const y = syntheticSeries({ points: 6 * 144, seed: 2 }).values;
  const m = backtest(forecasters['seasonal-naive'], y, { horizon: 48, folds: 3, fit: { period: 144 } });
  assert.equal(m.points, 144);
  // Seasonal naive needs one season + 2 points (146), plus the 48 scored: 190 points leave no fold.
  assert.throws(() => backtest(forecasters['seasonal-naive'], y.slice(0, 190), { horizon: 48, folds: 3, fit: { period: 144 } }), UserError);
});

test('auto uses the daily season on two days of 10-minute data (one season before the backtest folds)', () => {
  const y = syntheticSeries({ points: 2 * 144, seed: 3 }).values;
  const res = runForecast(y, { model: 'auto', horizon: 36, holdout: 36, stepS: 600 });
  assert.equal(res.period, 144, `${res.model} period ${res.period}`);
  // Holt-Winters needs two seasons: tried, skipped, and listed with the reason.
  const hw = res.selection!.table.find((t) => t.candidate.model === 'holt-winters' && t.candidate.period === 144);
  assert.match(hw?.skipped ?? '', /too short/);
});

test('auto picks a seasonal model with the daily period on diurnal data', () => {
  const y = syntheticSeries({ points: 7 * 144, seed: 4 }).values;
  const sel = selectModel(y, { horizon: 144, periods: [144] });
  assert.notEqual(sel.best.period, 1);
  assert.ok(['holt-winters', 'holt-winters-mul', 'seasonal-naive', 'sarima'].includes(sel.best.model), sel.best.model);
  assert.ok(sel.table.length >= 5);
});

test('auto never sees the holdout: changing holdout values leaves the choice and forecast unchanged', () => {
  const y = syntheticSeries({ points: 7 * 144, seed: 5 }).values;
  const a = runForecast(y, { model: 'auto', horizon: 144, holdout: 144, stepS: 600 });
  const spoiled = [...y.slice(0, -144), ...y.slice(-144).map((v) => v * 3)];
  const b = runForecast(spoiled, { model: 'auto', horizon: 144, holdout: 144, stepS: 600 });
  assert.equal(a.model, b.model);
  assert.deepEqual(a.forecast, b.forecast);
  assert.equal(a.metricsSource, 'holdout');
  assert.ok(b.metrics!.mape! > a.metrics!.mape!);
});

test('without a holdout the metrics come from the rolling-origin backtest', () => {
  const y = syntheticSeries({ points: 5 * 144, seed: 6 }).values;
  const r = runForecast(y, { model: 'holt-winters', horizon: 24, holdout: 0, stepS: 600 });
  assert.equal(r.metricsSource, 'backtest');
  assert.equal(r.period, 144);
  assert.equal(r.forecast.point.length, 24);
  assert.throws(() => runForecast(y, { model: 'arima', horizon: 24, holdout: y.length, stepS: 600 }), /leaves nothing to fit/);
});

test('a holdout longer than the horizon is refused: the points past the horizon were neither fitted nor scored', () => {
  const y = syntheticSeries({ points: 300, seed: 6 }).values;
  assert.throws(
    () => runForecast(y, { model: 'seasonal-naive', period: 24, horizon: 1, holdout: 100, stepS: 600 }),
    (e: Error) => e instanceof UserError && e.message === 'holdout 100: more than horizon 1; the last 99 points would be neither fitted nor scored (use holdout ≤ horizon)',
  );
  const r = runForecast(y, { model: 'seasonal-naive', period: 24, horizon: 3, holdout: 3, stepS: 600 });
  assert.equal(r.trainPoints, 297);
  assert.equal(r.actual.length, 3);
});

test('a huge folds count is the same backtest as every origin inside the series, not a loop over 2^53 origins', () => {
  const y = Array.from({ length: 200 }, (_, i) => (i % 24) + 1);
  const all = backtest(forecasters['seasonal-naive'], y, { horizon: 5, folds: 40, fit: { period: 24 } });
  const t0 = performance.now();
  assert.deepEqual(backtest(forecasters['seasonal-naive'], y, { horizon: 5, folds: Number.MAX_SAFE_INTEGER, fit: { period: 24 } }), all);
  assert.ok(performance.now() - t0 < 5000);
});
