import { makeForecaster, stdev } from './base.ts';
import { Z80, type Forecaster } from './types.ts';

/**
 * Seasonal naive: ŷ(t+h) = y(t+h−m·k), the value one season earlier (m = period; m = 1 is the plain naive
 * forecast). Interval: σ of the in-sample seasonal differences, widened as σ·√(k) where k is the number of
 * seasons the step reaches ahead (Hyndman & Athanasopoulos, FPP3 §5.5).
 */
export function seasonalNaive(): Forecaster {
  let y: readonly number[] = [];
  let m = 1;
  let sigma = 0;
  return makeForecaster('seasonal-naive', {
    // One season to repeat plus up to two seasonal differences for σ (2 days of 10-minute points forecast a third).
    minHistory: (o) => (o.period ?? 1) + Math.min(o.period ?? 1, 2),
    fit(values, o) {
      y = values;
      m = o.period ?? 1;
      const d: number[] = [];
      for (let i = m; i < y.length; i++) d.push(y[i]! - y[i - m]!);
      sigma = stdev(d);
    },
    forecast(h) {
      const point: number[] = [];
      const p10: number[] = [];
      const p90: number[] = [];
      const n = y.length;
      for (let i = 0; i < h; i++) {
        const k = Math.floor(i / m) + 1; // seasons ahead
        const v = y[n - m + (i % m)]!;
        const s = sigma * Math.sqrt(k);
        point.push(v);
        p10.push(v - Z80 * s);
        p90.push(v + Z80 * s);
      }
      return { point, p10, p90 };
    },
  });
}
