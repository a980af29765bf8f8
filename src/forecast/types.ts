/**
 * The forecasting contract. A forecaster is fitted once on a history (one value per step, oldest first) and
 * then forecasts h steps ahead with a point value and an 80% interval (P10..P90). Every implementation goes
 * through `makeForecaster` (base.ts), which validates the history, applies the optional log transform and
 * guarantees finite, non-negative output: a forecaster never returns NaN.
 */
export interface Forecast {
  point: number[];
  p10: number[];
  p50: number[];
  p90: number[];
}

export interface FitOptions {
  /** Seasonal period in points (e.g. 1440 for a daily cycle at 1-minute steps). 1 or unset = non-seasonal. */
  period?: number;
  /** A second, longer seasonal period (a multiple of `period`, e.g. one week over one day); only
   * `holt-winters-double` uses it, others ignore it. */
  period2?: number;
  /** Fit on log1p(y) and back-transform (the point is then a median, not a mean). */
  logTransform?: boolean;
  /** Seed for stochastic fitting (LSTM initialisation); ignored by deterministic models. */
  seed?: number;
}

export interface Forecaster {
  readonly name: string;
  /** Fewest history points this forecaster accepts with these options; `fit` throws a UserError below it. */
  minHistory(opts: FitOptions): number;
  fit(history: readonly number[], opts?: FitOptions): void;
  forecast(h: number): Forecast;
}

/** What a model core returns on its own (possibly log) scale; base.ts turns it into a `Forecast`. */
export interface CoreForecast {
  point: number[];
  p10: number[];
  p90: number[];
}

/** z for the 10th/90th percentile of a normal: the 80% interval is point ± 1.2816·σ. */
export const Z80 = 1.2815515655446004;
