import { arima } from '../../forecast/arima.ts';
import { forecastPeak } from '../../forecast/sageserve-peak.ts';
import type { PoolStatus, ScalingSignals } from '../scaling/types.ts';
import { greedySageServe, type IlpInput } from './ilp.ts';
import { thetaOf, type SageServeScalingOptions } from './options.ts';
import { PeakCache, peakKey } from './peak-cache.ts';

/** One endpoint's hourly plan. */
export interface EndpointPlan {
  pool: string;
  /** Instances (ready + provisioning) when the plan was made, and the ILP's target. */
  current: number;
  target: number;
  /** Forecast peak IW input tokens/s over the hour's window (without β); NaN when it fell back. */
  forecastPeakTps: number;
  /** ρ handed to the ILP: peak + β. */
  demandTps: number;
  /** 'arima', or 'last-hour-peak' when the fit failed. */
  source: string;
}

/**
 * SageServe's load predictor + optimiser (§5, §6.3; digest §3.7–3.8), run once an hour. It keeps its own
 * per-minute history of input tokens per endpoint (model × region) from the arrivals the simulator reports
 * each tick — only arrivals up to `now`, so a forecast never sees the future. At the hour it fits ARIMA on
 * the IW series, takes the peak of the next hour's forecast (window `peakWindowMin`), adds β = 10 % of the past
 * hour's NIW tokens/s, and solves the ILP (closed form for one GPU type, identical to HiGHS — see ilp.ts).
 */
export class HourlyPlanner {
  /** endpoint key → per-minute IW / NIW input tokens (index = minute since t = 0). */
  private readonly iw = new Map<string, number[]>();
  private readonly niw = new Map<string, number[]>();
  lastHour = -1;
  plans: EndpointPlan[] = [];
  /** ARIMA fits run, and peaks read from `forecastCacheDir` instead. */
  fits = 0;
  cacheHits = 0;
  /** Endpoint forecasts made, and those whose fit failed and fell back to the last hour's peak minute. */
  forecasts = 0;
  fallbacks = 0;
  private readonly cache: PeakCache | null;

  constructor(private readonly o: SageServeScalingOptions, private readonly niwTier = 'niw') {
    this.cache = o.forecastCacheDir === null ? null : new PeakCache(o.forecastCacheDir);
  }

  /** A line when some hourly forecasts fell back to the last hour's peak (the ARIMA fit failed), else none. */
  notes(): string[] {
    if (this.fallbacks === 0) return [];
    return [`SageServe planner: ${this.fallbacks} of ${this.forecasts} hourly endpoint forecasts fell back to the last hour's peak minute (the ARIMA(${this.o.arimaOrder.join(',')}) fit failed)`];
  }

  /** Peak of the next hour's ARIMA forecast on `hist`, or null when the fit fails (through the cache, if any). */
  private forecastPeakOf(hist: number[]): number | null {
    const [p, d, q] = this.o.arimaOrder;
    const window = this.o.peakWindowMin;
    const key = this.cache ? peakKey({ order: [p, d, q], window, horizon: 60, history: hist }) : '';
    if (this.cache) {
      const v = this.cache.get(key);
      if (v !== undefined) {
        this.cacheHits++;
        return v;
      }
    }
    this.fits++;
    let peak: number | null;
    try {
      peak = forecastPeak(hist, { horizon: 60, window, buffer: 0, forecaster: arima({ p, d, q }) }).peak;
      if (!Number.isFinite(peak)) peak = null;
    } catch {
      peak = null;
    }
    // Failed fits are not stored: a failure that depended on the process (say, WASM memory) must not outlive it.
    if (peak !== null) this.cache?.set(key, peak);
    return peak;
  }

  /** Adds the last interval's arrivals to the minute buckets (attributed to the interval's midpoint). */
  observe(s: ScalingSignals): void {
    const minute = Math.max(0, Math.floor((s.now - s.intervalS / 2) / 60));
    for (const a of s.arrivals) {
      const key = `${a.model}\u0000${a.region}`;
      const map = a.tier === this.niwTier ? this.niw : this.iw;
      let arr = map.get(key);
      if (!arr) map.set(key, (arr = []));
      while (arr.length <= minute) arr.push(0);
      arr[minute]! += a.inputTokens;
    }
  }

  /** Input tokens/s of the endpoint's IW (or NIW) arrivals over the last `seconds` before `now`. */
  observedTps(model: string, region: string, now: number, seconds: number, niw = false): number {
    const arr = (niw ? this.niw : this.iw).get(`${model}\u0000${region}`) ?? [];
    const end = Math.floor(now / 60);
    const n = Math.max(1, Math.round(seconds / 60));
    let s = 0;
    for (let m = end - n; m < end; m++) s += m >= 0 ? (arr[m] ?? 0) : 0;
    return s / (n * 60);
  }

  /** True once per hour boundary (the first tick at or after it). */
  due(now: number): boolean {
    return Math.floor(now / 3600) > this.lastHour;
  }

  /** Forecast + ILP for the endpoints among `pools`; returns null before `minHistoryMin` minutes of history. */
  plan(now: number, pools: readonly PoolStatus[]): EndpointPlan[] | null {
    this.lastHour = Math.floor(now / 3600);
    const minutes = Math.floor(now / 60);
    if (minutes < this.o.minHistoryMin || pools.length === 0) return null;
    const rho: number[] = [];
    const peaks: number[] = [];
    const sources: string[] = [];
    for (const p of pools) {
      const arr = this.iw.get(`${p.model}\u0000${p.region}`) ?? [];
      const hist: number[] = [];
      for (let m = Math.max(0, minutes - this.o.historyMin); m < minutes; m++) hist.push((arr[m] ?? 0) / 60);
      const beta = this.o.niwBuffer * this.observedTps(p.model, p.region, now, 3600, true);
      let peak = this.forecastPeakOf(hist);
      let source = 'arima';
      this.forecasts++;
      if (peak === null) {
        // A failed fit must not stop the run: plan for the last hour's peak minute instead (counted in `notes`).
        peak = Math.max(0, ...hist.slice(-60));
        source = 'last-hour-peak';
        this.fallbacks++;
      }
      peaks.push(peak);
      rho.push(peak + beta);
      sources.push(source);
    }
    const models = [...new Set(pools.map((p) => p.model))].sort();
    const regions = [...new Set(pools.map((p) => p.region))].sort();
    const cell = <T>(f: (p: PoolStatus, i: number) => T, dflt: T): T[][][] =>
      models.map((m) => regions.map((r) => {
        const i = pools.findIndex((p) => p.model === m && p.region === r);
        return [i < 0 ? dflt : f(pools[i]!, i)];
      }));
    const input: IlpInput = {
      models, regions, gpus: ['gpu'],
      n: cell((p) => p.ready + p.provisioning, 0),
      rho: models.map((m) => regions.map((r) => {
        const i = pools.findIndex((p) => p.model === m && p.region === r);
        return i < 0 ? 0 : rho[i]!;
      })),
      theta: models.map((m) => [thetaOf(this.o, m)]),
      alpha: [this.o.alphaUsdPerHour],
      sigma: models.map(() => [(this.o.alphaUsdPerHour * this.o.startupS) / 3600]),
      epsilon: this.o.epsilon,
      minCount: cell((p) => p.minCount, 0),
      maxCount: cell((p) => p.maxCount, 0),
    };
    const sol = greedySageServe(input);
    this.plans = pools.map((p, idx) => {
      const i = models.indexOf(p.model);
      const j = regions.indexOf(p.region);
      const current = p.ready + p.provisioning;
      return { pool: p.name, current, target: current + sol.delta[i]![j]![0]!, forecastPeakTps: peaks[idx]!, demandTps: rho[idx]!, source: sources[idx]! };
    });
    return this.plans;
  }
}
