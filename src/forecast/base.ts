import { UserError, invariant } from '../util/errors.ts';
import type { CoreForecast, FitOptions, Forecast, Forecaster } from './types.ts';

/** The model-specific part of a forecaster: fits on already validated, possibly log-transformed values. */
export interface ForecasterCore {
  minHistory(opts: FitOptions): number;
  fit(y: readonly number[], opts: FitOptions): void;
  forecast(h: number): CoreForecast;
}

/**
 * Wraps a core with what every forecaster must do: reject series that are too short or hold NaN/negative
 * values (a UserError naming the model and the need), apply the log1p transform, and turn any non-finite
 * output into an error instead of a silent NaN. Forecasts are clamped at 0 (rates cannot be negative).
 */
export function makeForecaster(name: string, core: ForecasterCore): Forecaster {
  let fitted: FitOptions | undefined;
  return {
    name,
    minHistory: (opts) => core.minHistory(opts),
    fit(history, opts = {}) {
      validateHistory(name, history, core.minHistory(opts), opts);
      const y = opts.logTransform ? history.map((v) => Math.log1p(v)) : history.slice();
      core.fit(y, opts);
      fitted = opts;
    },
    forecast(h) {
      if (!fitted) throw new Error(`${name}: forecast() called before fit()`);
      if (!Number.isInteger(h) || h < 1) throw new UserError(`${name}: horizon must be an integer ≥ 1, got ${h}`);
      const c = core.forecast(h);
      invariant(c.point.length === h && c.p10.length === h && c.p90.length === h, `${name}: core returned wrong length`);
      const back = fitted.logTransform ? (v: number) => Math.expm1(v) : (v: number) => v;
      const out: Forecast = { point: [], p10: [], p50: [], p90: [] };
      for (let i = 0; i < h; i++) {
        const p = back(c.point[i]!);
        const lo = back(Math.min(c.p10[i]!, c.point[i]!));
        const hi = back(Math.max(c.p90[i]!, c.point[i]!));
        if (!Number.isFinite(p)) {
          throw new UserError(`${name}: the fitted model diverged (non-finite forecast at step ${i + 1}); try another model or --log`);
        }
        if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
          throw new UserError(`${name}: the 80% interval overflowed at step ${i + 1} (point ${p}); try --log or rescale the series`);
        }
        out.point.push(Math.max(0, p));
        out.p50.push(Math.max(0, p));
        out.p10.push(Math.max(0, lo));
        out.p90.push(Math.max(0, hi));
      }
      return out;
    },
  };
}

/** Largest value a series may hold: squared errors and variances of larger values overflow a double. */
export const MAX_SERIES_VALUE = 1e100;

export function validateHistory(name: string, y: readonly number[], min: number, opts: FitOptions): void {
  if (opts.period !== undefined && (!Number.isInteger(opts.period) || opts.period < 1)) {
    throw new UserError(`${name}: period must be an integer ≥ 1, got ${opts.period}`);
  }
  for (let i = 0; i < y.length; i++) {
    const v = y[i]!;
    if (!Number.isFinite(v)) throw new UserError(`${name}: series value ${i} is ${v}; expected a finite number`);
    if (v < 0) throw new UserError(`${name}: series value ${i} is ${v}; expected a value ≥ 0`);
    if (v > MAX_SERIES_VALUE) throw new UserError(`${name}: series value ${i} is ${v}; expected at most ${MAX_SERIES_VALUE} (rescale the series)`);
  }
  if (y.length < min) {
    const season = opts.period && opts.period > 1 ? ` with period ${opts.period}` : '';
    throw new UserError(`${name}: series too short${season}: needs at least ${min} points, got ${y.length}`);
  }
}

/** Sample standard deviation of finite values (0 for fewer than 2). */
export function stdev(xs: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  let m = 0;
  for (const x of xs) m += x;
  m /= n;
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return Math.sqrt(s / (n - 1));
}

export function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length ? s / xs.length : 0;
}
