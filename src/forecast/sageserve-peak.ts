import { UserError } from '../util/errors.ts';
import { arima } from './arima.ts';
import type { Forecast, Forecaster } from './types.ts';

/**
 * SageServe's load predictor (digest §3.7): ARIMA on per-minute IW input tokens per (region, model), run
 * every hour; the demand handed to the ILP is the peak of the forecast over the next hour plus a buffer
 * β. Paper: peak over the whole hour, β = 10% of the NIW load seen in the past hour. Code: ARIMA(3,1,2),
 * peak over [t+20 min, t+60 min], β = 0.1 × the largest single dev prompt of the past hour.
 */
export interface PeakOptions {
  /** Steps (of the series' step) forecast; 60 one-minute steps = SageServe's hour. */
  horizon: number;
  /** Peak window [from, to] in steps ahead, 1-based inclusive: paper [1, 60], code [20, 60]. */
  window: [number, number];
  /** β added to the peak, in the series' unit (e.g. 0.1 × past-hour NIW tokens/s). */
  buffer: number;
  /** Forecaster to use; default ARIMA(3,1,2) as in SageServe's code. */
  forecaster?: Forecaster;
}

export interface PeakDemand {
  peak: number;
  /** peak + buffer: what the planner should provision for. */
  demand: number;
  /** Upper (P90) forecast peak over the same window, a hedge a planner may prefer. */
  peakP90: number;
  forecast: Forecast;
}

export function forecastPeak(history: readonly number[], o: PeakOptions): PeakDemand {
  const [from, to] = o.window;
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 1 && from <= to && to <= o.horizon)) {
    throw new UserError(`peak window: expected 1 ≤ from ≤ to ≤ horizon (${o.horizon}), got [${from}, ${to}]`);
  }
  if (!(o.buffer >= 0)) throw new UserError(`peak buffer: expected a value ≥ 0, got ${o.buffer}`);
  const f = o.forecaster ?? arima({ p: 3, d: 1, q: 2 });
  f.fit(history, {});
  const forecast = f.forecast(o.horizon);
  const peak = Math.max(...forecast.point.slice(from - 1, to));
  const peakP90 = Math.max(...forecast.p90.slice(from - 1, to));
  return { peak, demand: peak + o.buffer, peakP90, forecast };
}
