import { z } from 'zod';
import { FORECASTER_NAMES, forecasters, type ForecasterName } from '../../forecast/registry.ts';
import type { Forecaster } from '../../forecast/types.ts';
import { LoadAnticipator, anticipatorOptions, peak, stepsAbove } from '../preserve/anticipator.ts';
import { UserError } from '../../util/errors.ts';
import { secondsFrom } from '../options.ts';
import { defineScaler, type PoolStatus, type ScaleAction, type ScalingSignals } from './types.ts';

export const preserveScalerOptions = z
  .object({
    /**
     * Tier-1 window T (paper: 10 minutes); windows close at the scaler tick at their end, so T must be a multiple
     * of `scaling.intervalS` (checked at load). At least 1 ms: a window below the float resolution of the clock
     * could never be stepped past.
     */
    windowS: secondsFrom(0.001).default(600),
    /**
     * The output tokens of a window Tier 1 forecasts from: `actual`, the true tokens of the window's arrivals
     * (Alg. 2: "when T_i ends, append the true P_i, D_i"; μ_d is profiled in true tokens too), or `predicted`, the
     * per-request predictions (sessions 1–15; a biased predictor then shifts N). Where the arrivals carry no true
     * count (the live gateway), `actual` reads the predictions.
     */
    tier1Output: z.enum(['actual', 'predicted']).default('actual'),
    /** Seasonal period of the token series in windows (a day of 10-minute windows = 144). */
    windowsPerDay: z.number().int().min(1).default(144),
    /** Series forecaster from src/forecast (the paper's mLSTM is not there; see docs/fidelity/preserve.md). */
    forecaster: z.enum(FORECASTER_NAMES as [ForecasterName, ...ForecasterName[]]).default('holt-winters'),
    /** Most recent windows the forecaster is fitted on. */
    maxHistoryWindows: z.number().int().min(2).default(1008),
    /** Per-instance capacities in tokens/s (prefill, decode, both), from the capacity probe. */
    muPrefill: z.number().positive(),
    muDecode: z.number().positive(),
    muTotal: z.number().positive(),
    /**
     * Simulation only, when μ are left out and probed: the normalised-latency SLO the probe holds (s/token;
     * `isolated-3x` = the paper's rule, 3× the mix's isolated normalised latency). Default 0.2, the paper's value.
     */
    probeSloS: z.union([z.number().positive(), z.literal('isolated-3x')], { error: 'a number > 0 or "isolated-3x"' }).default(0.2),
    /**
     * Simulation only: the share of a probe trial's requests that must meet the SLO. Default 1, the paper's Alg. 1
     * ("every request … without an SLO violation"); sessions 1–12 used 0.99, which gives ≈ 22 % higher μ on the
     * routing mix (docs/fidelity/preserve.md).
     */
    probeAttainment: z.number().positive().max(1).default(1),
    /** `next`: the boundary target is N_{i+1} (Alg. 2 as printed); `max`: max(N̂_i, N_{i+1}), ready for both windows. */
    boundaryTarget: z.enum(['next', 'max']).default('max'),
    anticipator: anticipatorOptions.default(anticipatorOptions.parse({})),
    /** Rule B: an instance is potentially overloaded when more than `overloadShare` of the window projects above `overloadThreshold`. */
    overloadThreshold: z.number().min(0).max(1).default(0.95),
    overloadShare: z.number().min(0).max(1).default(0.1),
    /**
     * Rule B's de-duplication (the paper gives none): `window` re-arms every episode at each window boundary where
     * Tier 1 sets the target and adds one instance per trigger even while others are starting; `episode` (the
     * digest's §3.4 B reading) counts an instance once per overload episode, across window boundaries, and lets
     * instances already starting or ordered cover new triggers. `window` is the default because it was measured to
     * hold latency far better when Tier 1 under-forecasts (docs/fidelity/preserve.md, "Session 17": 6–13 % SLO
     * violations vs 23–27 %) and equal otherwise.
     */
    overloadDedup: z.enum(['episode', 'window']).default('window'),
    /** Rule C: one scale-in per window when every instance's projection stays below this (T_down). */
    scaleDownThreshold: z.number().min(0).max(1).default(0.3),
    /** keep = ceil(Σ max U / divisor): `threshold` (T_down, digest default), `max-peak` (largest single peak), `one`. */
    scaleDownDivisor: z.enum(['threshold', 'max-peak', 'one']).default('threshold'),
    /**
     * Rule C while instances of the pool are still starting [ours; the paper is silent]: `false` waits until they
     * are up (they have no projection yet, and a drain would cancel them first, undoing the scale-out rule A or B
     * just ordered); `true` judges the ready instances alone, as sessions 1–7 did (though not on the window's
     * boundary tick, where rule C never runs since session 8).
     */
    scaleDownWhileStarting: z.boolean().default(false),
    /**
     * Before Tier 1 has enough history (the paper's predictor "cold start", §6.6: fall back to default scaling):
     * `hold` keeps the fleet as it is; `rules-b-c` already applies the in-window rules B and C.
     */
    warmup: z.enum(['hold', 'rules-b-c']).default('hold'),
  })
  .strict();

/**
 * Why a Tier-1 window cannot be kept at a scaler tick interval, or undefined: windows close at ticks, so a window
 * that is not a whole number of intervals would gather 1 to 2 windows' tokens and still be divided by one window.
 */
export function windowIntervalProblem(windowS: number, intervalS: number, intervalName = 'scaling.intervalS'): string | undefined {
  const k = windowS / intervalS;
  return Math.abs(k - Math.round(k)) <= 1e-9 * Math.max(1, k) && Math.round(k) >= 1
    ? undefined
    : `a whole multiple of ${intervalName} (${intervalS} s): windows close at scaler ticks`;
}

/**
 * Tier-1 instance count (Alg. 2): N = ceil(max(P̂/μ_p, D̂/μ_d, (P̂ + D̂)/μ_pd)), with P̂, D̂ the forecast prompt and
 * output tokens of one window and μ the per-instance token rates times the window length. E.g. P̂ = 1.2 M,
 * D̂ = 0.9 M over 600 s with μ_p = 1,500, μ_d = 1,100, μ_pd = 2,600 tokens/s ⇒ max(1.33, 1.36, 1.35) ⇒ 2.
 */
export function tier1Target(promptTokens: number, outputTokens: number, windowS: number, mu: { muPrefill: number; muDecode: number; muTotal: number }): number {
  const r = Math.max(promptTokens / (mu.muPrefill * windowS), outputTokens / (mu.muDecode * windowS), (promptTokens + outputTokens) / (mu.muTotal * windowS));
  // 1e-9 keeps a ratio of exactly 2 (up to float noise) at 2 rather than 3.
  return Math.max(0, Math.ceil(r - 1e-9));
}

/**
 * Rule B's scale-out when `entering` instances enter an overload episode: one each (the paper's "one potentially
 * overloaded instance, one more instance"). With `episode` dedup the `inFlight` instances (starting, or ordered and
 * not yet started) are subtracted: they relieve the pool as soon as a new one would, e.g. 2 entering with 1
 * starting → +1.
 */
export function ruleBScaleOut(entering: number, inFlight: number, dedup: 'episode' | 'window'): number {
  return dedup === 'episode' ? Math.max(0, entering - inFlight) : entering;
}

interface PoolState {
  /** Token sums of completed windows, oldest first. */
  promptHist: number[];
  outputHist: number[];
  accPrompt: number;
  accOutput: number;
  windowEnd: number;
  /** The instance count this policy wants (Tier-1 target ± in-window changes); undefined until first set. */
  desired: number | undefined;
  scaledInThisWindow: boolean;
  /** Instances in an overload episode (each triggers rule B once, re-arming when the episode ends). */
  overloaded: Set<number>;
}

/**
 * PreServe's proactive scaler (seed 001 §3.1 Alg. 2, §3.4 rules A–C), per pool:
 * A. at each window boundary, fit the forecaster on the window token sums seen so far (accumulated from the
 *    per-interval arrival stats: no look-ahead), forecast two windows (the two-step rollout) and set the target
 *    to N_{i+1} (or max(N̂_i, N_{i+1})); until the forecaster has enough history the fleet is held (`warmup`);
 * B. every tick, +1 instance per instance entering an overload episode (> 10 % of the next 100 projected
 *    iterations above 95 % KV), less the instances already starting or ordered (`overloadDedup`);
 * C. at most once per window, when every ready instance's projection stays below 30 %, shrink to
 *    max(1, ceil(Σ max U / divisor)).
 * It then asks for whatever closes the gap between the wanted and the current (ready + provisioning) count, so
 * a governor veto is retried at the next tick (e.g. a scale-out while drained instances still fill `maxCount`). Arrival stats are per model: one pool per model is expected.
 */
export const preserve = defineScaler({
  options: preserveScalerOptions,
  make(opts) {
    const ant = new LoadAnticipator(opts.anticipator);
    const overloadSteps = opts.overloadShare * opts.anticipator.horizonSteps;
    const states = new Map<string, PoolState>();
    const period = opts.windowsPerDay > 1 ? opts.windowsPerDay : undefined;
    const probe: Forecaster = forecasters[opts.forecaster]();
    const minHistory = probe.minHistory({ period });

    // A forecaster that rejects its history (e.g. a diverging fit) falls back to the last window: the scaler must
    // keep running, and the seasonal models only refuse series they cannot fit.
    const forecast2 = (hist: readonly number[]): [number, number] => {
      try {
        const f = forecasters[opts.forecaster]();
        f.fit(hist.slice(-opts.maxHistoryWindows), { period, seed: 1 });
        const p = f.forecast(2).point;
        return [p[0]!, p[1]!];
      } catch (err) {
        if (!(err instanceof UserError)) throw err;
        const last = hist[hist.length - 1] ?? 0;
        return [last, last];
      }
    };

    const decidePool = (s: ScalingSignals, p: PoolStatus, out: ScaleAction[]) => {
      let st = states.get(p.name);
      if (!st) {
        st = {
          promptHist: [], outputHist: [], accPrompt: 0, accOutput: 0, windowEnd: opts.windowS,
          desired: undefined, scaledInThisWindow: false, overloaded: new Set(),
        };
        states.set(p.name, st);
      }
      for (const a of s.arrivals) {
        if (a.model !== p.model) continue;
        st.accPrompt += a.inputTokens;
        st.accOutput += opts.tier1Output === 'actual' ? (a.outputTokens ?? a.predictedOutputTokens) : a.predictedOutputTokens;
      }
      const current = p.provisioning + p.ready;
      st.desired ??= current;
      // Rule A: window boundary.
      const boundary = s.now >= st.windowEnd - 1e-9;
      if (boundary) {
        st.promptHist.push(st.accPrompt);
        st.outputHist.push(st.accOutput);
        st.accPrompt = 0;
        st.accOutput = 0;
        // Windows far shorter than the tick interval: skip whole windows at once, not one per loop turn.
        const behind = Math.floor((s.now + 1e-9 - st.windowEnd) / opts.windowS);
        if (behind > 1000) st.windowEnd += behind * opts.windowS;
        while (st.windowEnd <= s.now + 1e-9) st.windowEnd += opts.windowS;
        st.scaledInThisWindow = false;
        if (st.promptHist.length >= minHistory) {
          const [pNow, pNext] = forecast2(st.promptHist);
          const [dNow, dNext] = forecast2(st.outputHist);
          const next = tier1Target(pNext, dNext, opts.windowS, opts);
          const target = opts.boundaryTarget === 'max' ? Math.max(next, tier1Target(pNow, dNow, opts.windowS, opts)) : next;
          st.desired = Math.max(1, target);
          if (opts.overloadDedup === 'window') st.overloaded.clear();
        }
      }
      const warm = st.promptHist.length >= minHistory;
      if (!warm && opts.warmup === 'hold') {
        st.desired = Math.max(p.minCount, Math.min(p.maxCount, st.desired));
        const d0 = st.desired - current;
        if (d0 > 0) out.push({ kind: 'add', pool: p.name, count: d0, reason: 'warmup-hold' });
        else if (d0 < 0) out.push({ kind: 'remove', pool: p.name, count: -d0, reason: 'warmup-hold' });
        return;
      }
      // Rules B and C over the ready instances' projections.
      let allLow = p.ready > 0;
      let sumPeak = 0;
      let maxPeak = 0;
      let newlyOverloaded = 0;
      const seen = new Set<number>();
      for (const inst of s.view.instances) {
        if (inst.pool !== p.name || inst.state !== 'ready') continue;
        const proj = ant.project(inst);
        const pk = peak(proj);
        sumPeak += pk;
        maxPeak = Math.max(maxPeak, pk);
        if (pk >= opts.scaleDownThreshold) allLow = false;
        if (stepsAbove(proj, opts.overloadThreshold) > overloadSteps) {
          seen.add(inst.id);
          if (!st.overloaded.has(inst.id)) newlyOverloaded++;
        }
      }
      st.overloaded = seen;
      let reason = 'tier1-target';
      if (newlyOverloaded > 0) {
        // Ordered but not started yet counts too: a governor veto leaves the gap to be asked for again.
        const inFlight = p.provisioning + Math.max(0, st.desired - current);
        st.desired += ruleBScaleOut(newlyOverloaded, inFlight, opts.overloadDedup);
        reason = 'anticipated-overload';
      } else if (allLow && !st.scaledInThisWindow && !boundary && (opts.scaleDownWhileStarting || p.provisioning === 0)) {
        // Inside the window only: on the boundary tick rule A has just set this window's target.
        const divisor = opts.scaleDownDivisor === 'threshold' ? opts.scaleDownThreshold : opts.scaleDownDivisor === 'max-peak' ? maxPeak : 1;
        const keep = Math.max(1, divisor > 0 ? Math.ceil(sumPeak / divisor - 1e-9) : 1);
        if (keep < Math.min(st.desired, current)) {
          st.desired = keep;
          st.scaledInThisWindow = true;
          reason = 'anticipated-underload';
        }
      }
      st.desired = Math.max(p.minCount, Math.min(p.maxCount, st.desired));
      const delta = st.desired - current;
      if (delta > 0) out.push({ kind: 'add', pool: p.name, count: delta, reason });
      else if (delta < 0) out.push({ kind: 'remove', pool: p.name, count: -delta, reason });
    };

    return {
      name: 'preserve',
      decide(s) {
        const out: ScaleAction[] = [];
        for (const p of s.pools) decidePool(s, p, out);
        return out.length > 0 ? out : [{ kind: 'hold', reason: 'at-target' }];
      },
    };
  },
});
