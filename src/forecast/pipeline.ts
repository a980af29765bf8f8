import { UserError } from '../util/errors.ts';
import { backtest, candidatePeriods, score, selectModel, type Metrics, type Selection } from './backtest.ts';
import { FORECASTER_NAMES, SEASONAL, forecasters, type ForecasterName } from './registry.ts';
import type { Forecast } from './types.ts';

export const MODEL_CHOICES = ['auto', ...FORECASTER_NAMES] as const;
export type ModelChoice = ForecasterName | 'auto';

export interface RunOptions {
  model: ModelChoice;
  horizon: number;
  /** Last points kept out of fitting and scored against the forecast (0 = forecast past the end). */
  holdout: number;
  stepS: number;
  /** Seasonal period in points; default: one day in points when the series holds two days, else none. */
  period?: number;
  logTransform?: boolean;
  seed?: number;
  folds?: number;
}

export interface RunResult {
  model: ForecasterName;
  period: number;
  period2?: number;
  forecast: Forecast;
  /** Points used for fitting. */
  trainPoints: number;
  /** Holdout actuals (empty without --holdout). */
  actual: number[];
  /** Against the holdout when there is one, else the rolling-origin backtest on the training part. */
  metrics: Metrics;
  metricsSource: 'holdout' | 'backtest';
  selection?: Selection;
}

/**
 * The `forecast` command's library half: split off the holdout, choose the model (auto: rolling-origin
 * backtest on the training part only, so the holdout never leaks into the choice), fit, forecast, score.
 */
export function runForecast(values: readonly number[], o: RunOptions): RunResult {
  if (!Number.isInteger(o.horizon) || o.horizon < 1) throw new UserError(`horizon: expected an integer ≥ 1, got ${o.horizon}`);
  if (!Number.isInteger(o.holdout) || o.holdout < 0) throw new UserError(`holdout: expected an integer ≥ 0, got ${o.holdout}`);
  if (o.holdout >= values.length) throw new UserError(`holdout: ${o.holdout} points leaves nothing to fit (series has ${values.length})`);
  const train = values.slice(0, values.length - o.holdout);
  const actual = values.slice(values.length - o.holdout, values.length - o.holdout + o.horizon);
  const periods = o.period !== undefined ? [o.period] : candidatePeriods(o.stepS).filter((p) => train.length >= 2 * p + 2);
  let model: ForecasterName;
  let period: number;
  let period2: number | undefined;
  let selection: Selection | undefined;
  if (o.model === 'auto') {
    // auto also tries a season seen only once before a backtest fold (seasonal naive needs no more); folds and
    // models that need more history (Holt-Winters: two seasons) are skipped by their own checks and listed.
    const tried = o.period !== undefined ? periods : candidatePeriods(o.stepS).filter((p) => train.length >= p + o.horizon);
    selection = selectModel(train, { horizon: o.horizon, periods: tried, folds: o.folds ?? 3, logTransform: o.logTransform, seed: o.seed });
    ({ model, period, period2 } = selection.best);
  } else {
    model = o.model;
    period = SEASONAL[model] ? (periods[0] ?? 1) : 1;
    if (model === 'holt-winters-double') {
      // Day and week by default; with --period p the second season is 7p (a week over a day).
      period2 = o.period !== undefined ? 7 * o.period : periods[1];
      if (period < 2 || period2 === undefined) {
        throw new UserError(`holt-winters-double: needs two weeks of data for a daily and a weekly season (${train.length} points at ${o.stepS} s)`);
      }
    }
    if (model === 'sarima' && period < 2) {
      throw new UserError(`sarima: no seasonal period fits ${train.length} points at a ${o.stepS} s step; pass --period or use arima`);
    }
  }
  const fit = { period, period2, logTransform: o.logTransform, seed: o.seed };
  const f = forecasters[model]();
  f.fit(train, fit);
  const forecast = f.forecast(o.horizon);
  let metrics: Metrics;
  let metricsSource: RunResult['metricsSource'];
  if (actual.length > 0) {
    const n = actual.length;
    metrics = score([{ actual, forecast: { point: forecast.point.slice(0, n), p10: forecast.p10.slice(0, n), p50: forecast.p50.slice(0, n), p90: forecast.p90.slice(0, n) } }]);
    metricsSource = 'holdout';
  } else {
    const row = selection?.table.find((r) => r.candidate.model === model && r.candidate.period === period && r.candidate.period2 === period2);
    metrics = row?.metrics ?? backtest(forecasters[model], train, { horizon: o.horizon, folds: o.folds ?? 3, fit });
    metricsSource = 'backtest';
  }
  return { model, period, period2, forecast, trainPoints: train.length, actual, metrics, metricsSource, selection };
}
