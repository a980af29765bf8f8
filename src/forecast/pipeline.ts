import { UserError } from '../util/errors.ts';
import { AUTO_MODELS, DEFAULT_FOLDS, backtest, candidatePeriods, candidatesFor, score, selectModel, type Metrics, type Selection } from './backtest.ts';
import { FORECASTER_NAMES, SEASONAL, forecasters, type ForecasterName } from './registry.ts';
import type { Forecast } from './types.ts';

export const MODEL_CHOICES = ['auto', ...FORECASTER_NAMES] as const;
export type ModelChoice = ForecasterName | 'auto';

export interface RunOptions {
  model: ModelChoice;
  horizon: number;
  /** Last points kept out of fitting and scored against the forecast (0 = forecast past the end); at most `horizon`. */
  holdout: number;
  stepS: number;
  /** Seasonal period in points; default: one day in points when the series holds two days, else none. */
  period?: number;
  logTransform?: boolean;
  seed?: number;
  folds?: number;
  /** True where a value was filled in (--impute), one per value: such holdout points are not scored. */
  imputed?: readonly boolean[];
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
  /** One per holdout actual: false where it was imputed, so it is neither scored nor written as an actual. */
  scored: boolean[];
  /** Against the scored holdout points when there are any, else the rolling-origin backtest on the training
   * part; null ('none') when neither can be had, with the reason in `note`. */
  metrics: Metrics | null;
  metricsSource: 'holdout' | 'backtest' | 'none';
  note?: string;
  selection?: Selection;
}

/**
 * The refusal of a holdout longer than the horizon: the forecast covers only the first `horizon` held-out points, so
 * the rest would be neither fitted nor scored (they were dropped silently). `dashes` is '--' for the CLI's flags.
 * The rolling-origin backtest (`--folds`) runs on the training part only, so it does not use them either.
 */
export function holdoutPastHorizon(dashes: '' | '--', holdout: number, horizon: number): string {
  const n = holdout - horizon;
  return `${dashes}holdout ${holdout}: more than ${dashes}horizon ${horizon}; the last ${n} point${n === 1 ? '' : 's'} would be neither fitted nor scored (use ${dashes}holdout ≤ ${dashes}horizon)`;
}

/**
 * The `forecast` command's library half: split off the holdout, choose the model (auto: rolling-origin
 * backtest on the training part only, so the holdout never leaks into the choice), fit, forecast, score.
 */
export function runForecast(values: readonly number[], o: RunOptions): RunResult {
  if (!Number.isInteger(o.horizon) || o.horizon < 1) throw new UserError(`horizon: expected an integer ≥ 1, got ${o.horizon}`);
  if (!Number.isInteger(o.holdout) || o.holdout < 0) throw new UserError(`holdout: expected an integer ≥ 0, got ${o.holdout}`);
  if (o.holdout >= values.length) throw new UserError(`holdout: ${o.holdout} points leaves nothing to fit (series has ${values.length})`);
  if (o.holdout > o.horizon) throw new UserError(holdoutPastHorizon('', o.holdout, o.horizon));
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
    checkAutoCanBacktest(train.length, o.horizon, tried, o.logTransform);
    selection = selectModel(train, { horizon: o.horizon, periods: tried, folds: o.folds ?? DEFAULT_FOLDS, logTransform: o.logTransform, seed: o.seed });
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
  const scored = actual.map((_, i) => !o.imputed?.[train.length + i]);
  const run = { model, period, period2, forecast, trainPoints: train.length, actual, scored, selection };
  if (actual.length > 0) return { ...run, ...holdoutMetrics(run) };
  const row = selection?.table.find((r) => r.candidate.model === model && r.candidate.period === period && r.candidate.period2 === period2);
  if (row?.metrics) return { ...run, metrics: row.metrics, metricsSource: 'backtest' };
  const needs = forecasters[model]().minHistory(fit) + o.horizon;
  if (train.length < needs) {
    // A named model fits on far less history than a backtest of this horizon needs: forecast, say why unscored.
    const note = `${train.length} points are too short to backtest ${model} over a ${o.horizon}-step horizon (needs ${needs}); use --holdout to score`;
    return { ...run, metrics: null, metricsSource: 'none', note };
  }
  return { ...run, metrics: backtest(forecasters[model], train, { horizon: o.horizon, folds: o.folds ?? DEFAULT_FOLDS, fit }), metricsSource: 'backtest' };
}

function holdoutMetrics(r: Pick<RunResult, 'actual' | 'scored' | 'forecast'>): Pick<RunResult, 'metrics' | 'metricsSource' | 'note'> {
  const w = holdoutWindow(r);
  const skipped = r.actual.length - w.actual.length;
  if (w.actual.length === 0) return { metrics: null, metricsSource: 'none', note: `all ${skipped} holdout points were imputed: nothing to score` };
  return { metrics: score([w]), metricsSource: 'holdout', note: skipped > 0 ? `${skipped} imputed holdout points not scored` : undefined };
}

/** The holdout's observed points and the forecast at those steps (imputed points are left out). */
export function holdoutWindow(r: Pick<RunResult, 'actual' | 'scored' | 'forecast'>): { actual: number[]; forecast: Forecast } {
  const keep = (xs: readonly number[]) => xs.slice(0, r.actual.length).filter((_, i) => r.scored[i]);
  const f = r.forecast;
  return { actual: keep(r.actual), forecast: { point: keep(f.point), p10: keep(f.p10), p50: keep(f.p50), p90: keep(f.p90) } };
}

/** auto chooses by backtest, so a series too short to backtest the horizon for every candidate is an error. */
function checkAutoCanBacktest(n: number, horizon: number, periods: number[], logTransform?: boolean): void {
  const needs = Math.min(
    ...AUTO_MODELS.flatMap((m) => candidatesFor(m, periods).map((c) => forecasters[m]().minHistory({ period: c.period, period2: c.period2, logTransform }) + horizon)),
  );
  if (n < needs) {
    throw new UserError(
      `auto: ${n} training points are too short to backtest a ${horizon}-step horizon (the least any model needs is ${needs}); name a model with --model to forecast without backtest metrics, or shorten --horizon`,
    );
  }
}
