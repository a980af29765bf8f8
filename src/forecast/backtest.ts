import { UserError } from '../util/errors.ts';
import { FORECASTER_NAMES, SEASONAL, forecasters, type ForecasterName } from './registry.ts';
import type { FitOptions, Forecast, Forecaster } from './types.ts';

/**
 * Accuracy of a forecast against what happened. Percent metrics are in %. Where a ratio is 0/0 (actual and
 * forecast both 0) the point counts as no error in sMAPE and peak error; MAPE skips zero actuals.
 */
export interface Metrics {
  /** Mean absolute percentage error over non-zero actuals; null when every actual is 0. */
  mape: number | null;
  /** Symmetric MAPE, 200·|f−a|/(|f|+|a|), a point where f and a are both 0 scoring 0; null only without points. */
  smape: number | null;
  rmse: number;
  /** RMSE / mean(actual) in % (OServe's RRMSE as the digest defines it); null when the mean is 0. */
  rrmse: number | null;
  /** Share of actuals inside [P10, P90], in %; a calibrated 80% interval scores ≈ 80. */
  coverage80: number;
  /** |max forecast − max actual| / max actual over each window, in % (SageServe's ILP uses the window peak);
   * a window whose actual and forecast peaks are both 0 scores 0; null when every window's actual peak is 0 otherwise. */
  peakError: number | null;
  points: number;
}

/** Scores one or more forecast windows (each window's peak is compared separately). */
export function score(windows: { actual: readonly number[]; forecast: Forecast }[]): Metrics {
  let ape = 0;
  let apeN = 0;
  let sape = 0;
  const errors: number[] = [];
  const actuals: number[] = [];
  let inside = 0;
  let peak = 0;
  let peakN = 0;
  for (const { actual, forecast } of windows) {
    let maxA = -Infinity;
    let maxF = -Infinity;
    for (let i = 0; i < actual.length; i++) {
      const a = actual[i]!;
      const f = forecast.point[i]!;
      const e = f - a;
      errors.push(e);
      actuals.push(a);
      if (a !== 0) {
        ape += Math.abs(e / a);
        apeN++;
      }
      if (a !== 0 || f !== 0) sape += (2 * Math.abs(e)) / (Math.abs(a) + Math.abs(f));
      if (a >= forecast.p10[i]! && a <= forecast.p90[i]!) inside++;
      maxA = Math.max(maxA, a);
      maxF = Math.max(maxF, f);
    }
    if (maxA > 0 || maxF === 0) {
      peak += maxA > 0 ? Math.abs(maxF - maxA) / maxA : 0;
      peakN++;
    }
  }
  const n = errors.length;
  const rmse = rms(errors);
  const meanA = mean(actuals);
  return {
    mape: apeN ? (100 * ape) / apeN : null,
    smape: n ? (100 * sape) / n : null,
    rmse,
    rrmse: meanA > 0 ? (100 * rmse) / meanA : null,
    coverage80: n ? (100 * inside) / n : 0,
    peakError: peakN ? (100 * peak) / peakN : null,
    points: n,
  };
}

/** Root mean square, scaled by the largest |x| first so that squares of huge values do not overflow. */
function rms(xs: readonly number[]): number {
  let m = 0;
  for (const x of xs) m = Math.max(m, Math.abs(x));
  if (m === 0) return 0;
  let s = 0;
  for (const x of xs) s += (x / m) ** 2;
  return m * Math.sqrt(s / xs.length);
}

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x / xs.length;
  return s;
}

/** Rolling-origin folds when none are asked for (the `forecast` command's `--folds` default). */
export const DEFAULT_FOLDS = 3;

export interface BacktestOptions {
  horizon: number;
  /** Number of forecast origins; the last one leaves exactly `horizon` points to score. */
  folds: number;
  fit: FitOptions;
}

/**
 * Rolling-origin evaluation: for k = folds..1 fit on y[0, n − k·h) and score the next h points. Origins
 * whose training part is shorter than the model needs are skipped; if none remains it throws a UserError.
 */
export function backtest(make: () => Forecaster, y: readonly number[], o: BacktestOptions): Metrics {
  const windows: { actual: number[]; forecast: Forecast }[] = [];
  const probe = make();
  // Origins before the series' start are skipped anyway: start at the first one inside it, so a huge `folds`
  // (2^53 − 1 looped for ever) costs nothing.
  for (let k = Math.min(o.folds, Math.floor(y.length / o.horizon)); k >= 1; k--) {
    const origin = y.length - k * o.horizon;
    if (origin < probe.minHistory(o.fit)) continue;
    const f = make();
    f.fit(y.slice(0, origin), o.fit);
    windows.push({ actual: y.slice(origin, origin + o.horizon), forecast: f.forecast(o.horizon) });
  }
  if (windows.length === 0) {
    throw new UserError(
      `${probe.name}: series of ${y.length} points too short to backtest a ${o.horizon}-step horizon (needs ${probe.minHistory(o.fit) + o.horizon})`,
    );
  }
  return score(windows);
}

export interface Candidate {
  model: ForecasterName;
  period: number;
  /** Second season (holt-winters-double only). */
  period2?: number;
}

export interface Selection {
  best: Candidate;
  /** Every candidate tried, in order, with its backtest metrics or why it was skipped. */
  table: { candidate: Candidate; metrics?: Metrics; skipped?: string }[];
}

/** Models `auto` tries by default. The LSTM is left out: it costs seconds per fit and the backtest refits it per fold. */
export const AUTO_MODELS: ForecasterName[] = ['seasonal-naive', 'holt-winters', 'holt-winters-mul', 'holt-winters-double', 'arima', 'sarima', 'auto-arima'];

/**
 * `auto`: backtests every (model, period) pair on `y` (pass the training part only) and keeps the lowest
 * RMSE; ties keep the earlier candidate. Non-seasonal models are tried once with period 1. A candidate that
 * cannot fit (too short, non-positive values for the multiplicative model, a diverging ARIMA) is skipped.
 */
export function selectModel(
  y: readonly number[],
  o: { horizon: number; periods: number[]; folds?: number; logTransform?: boolean; models?: ForecasterName[]; seed?: number },
): Selection {
  const models = o.models ?? AUTO_MODELS;
  const table: Selection['table'] = [];
  let best: { c: Candidate; rmse: number } | undefined;
  for (const model of models) {
    if (!FORECASTER_NAMES.includes(model)) throw new UserError(`unknown model '${model}'; valid: ${FORECASTER_NAMES.join(', ')}`);
    for (const candidate of candidatesFor(model, o.periods)) {
      try {
        const fit: FitOptions = { period: candidate.period, period2: candidate.period2, logTransform: o.logTransform, seed: o.seed };
        const metrics = backtest(forecasters[model], y, { horizon: o.horizon, folds: o.folds ?? DEFAULT_FOLDS, fit });
        table.push({ candidate, metrics });
        if (!best || metrics.rmse < best.rmse) best = { c: candidate, rmse: metrics.rmse };
      } catch (e) {
        if (!(e instanceof UserError)) throw e;
        table.push({ candidate, skipped: e.message });
      }
    }
  }
  if (!best) {
    throw new UserError(`auto: no model could be backtested on ${y.length} points with horizon ${o.horizon}: ${table.map((t) => t.skipped).join('; ')}`);
  }
  return { best: best.c, table };
}

/** (period, period2) pairs `auto` tries for a model: each period > 1 for seasonal models (plus 1 for the
 * seasonal naive, i.e. the plain naive), nested pairs for the double-seasonal model, period 1 otherwise. */
export function candidatesFor(model: ForecasterName, periods: readonly number[]): Candidate[] {
  const ps = [...new Set(periods)].filter((p) => p > 1).sort((a, b) => a - b);
  if (model === 'holt-winters-double') {
    return ps.flatMap((p1) => ps.filter((p2) => p2 > p1 && p2 % p1 === 0).map((p2) => ({ model, period: p1, period2: p2 })));
  }
  if (!SEASONAL[model]) return [{ model, period: 1 }];
  const out = ps.map((period) => ({ model, period }));
  if (model === 'seasonal-naive') out.push({ model, period: 1 });
  return out;
}

/** Seasonal periods worth trying for a step size: one day and one week, in points (e.g. 600 s → 144, 1008). */
export function candidatePeriods(stepS: number): number[] {
  const out: number[] = [];
  for (const spanS of [86_400, 7 * 86_400]) {
    const p = spanS / stepS;
    if (Number.isInteger(p) && p >= 2) out.push(p);
  }
  return out;
}
