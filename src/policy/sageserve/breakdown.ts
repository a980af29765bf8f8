import { arima } from '../../forecast/arima.ts';
import { forecastPeak } from '../../forecast/sageserve-peak.ts';

/**
 * Per-hour breakdowns used to explain the LT-vs-Reactive instance-hour gap (docs/fidelity/sageserve.md,
 * `node --import tsx bench/sageserve.ts --lt-gap`): instance-hours per hour and key (e.g. region), and an
 * endpoint's per-minute input tokens/s with the plans an hourly planner would make from it.
 */

/** What the breakdown reads of an instance (a `sim/fleet.ts` Instance fits). */
export interface InstanceLife {
  createdS: number;
  /** −1 while it runs. */
  stoppedS: number;
}

/** Instance-hours of each key in each hour [h, h + 1) of the run (`hours` bins; provisioning included). */
export function hourlyInstanceHours<T extends InstanceLife>(instances: readonly T[], endS: number, hours: number, key: (i: T) => string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const inst of instances) {
    const k = key(inst);
    let arr = out.get(k);
    if (!arr) out.set(k, (arr = new Array<number>(hours).fill(0)));
    const a = inst.createdS;
    const b = inst.stoppedS >= 0 ? inst.stoppedS : endS;
    for (let h = Math.max(0, Math.floor(a / 3600)); h < hours && h * 3600 < b; h++) {
      const lo = Math.max(a, h * 3600);
      const hi = Math.min(b, (h + 1) * 3600);
      if (hi > lo) arr[h]! += (hi - lo) / 3600;
    }
  }
  return out;
}

/** One hour of an endpoint's per-minute input tokens/s series. */
export interface HourLoad {
  meanTps: number;
  /** The busiest minute. */
  peakTps: number;
}

export function hourLoad(perMinuteTps: readonly number[], hour: number): HourLoad {
  let s = 0;
  let peak = 0;
  for (let m = hour * 60; m < hour * 60 + 60; m++) {
    const v = perMinuteTps[m] ?? 0;
    s += v;
    peak = Math.max(peak, v);
  }
  return { meanTps: s / 60, peakTps: peak };
}

/**
 * The planner's forecast for `hour`, replayed offline: ARIMA(order) on the last `historyMin` minutes before the
 * hour, peak over minutes [1, 60] ahead (as `planner.ts`). NaN when the fit fails or there is under an hour of
 * history (the planner then scales reactively).
 */
export function replayForecastPeak(perMinuteTps: readonly number[], hour: number, order: readonly [number, number, number] = [3, 1, 2], historyMin = 1440): number {
  const end = hour * 60;
  if (end < 60) return NaN;
  const hist: number[] = [];
  for (let m = Math.max(0, end - historyMin); m < end; m++) hist.push(perMinuteTps[m] ?? 0);
  try {
    const peak = forecastPeak(hist, { horizon: 60, window: [1, 60], buffer: 0, forecaster: arima({ p: order[0], d: order[1], q: order[2] }) }).peak;
    return Number.isFinite(peak) ? peak : NaN;
  } catch {
    return NaN;
  }
}

/** Instances an hourly plan asks for with ε = 1: ⌈demand / θ⌉, at least `min` (the ILP's C1 floor, `ilp.ts`). */
export function planInstances(demandTps: number, thetaTps: number, min: number): number {
  return Math.max(min, Math.ceil(demandTps / thetaTps));
}
