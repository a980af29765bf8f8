import { z } from 'zod';
import { positiveSeconds, seconds, withPresets } from '../options.ts';
import { own } from '../../util/own.ts';

/**
 * Options every SageServe scaler accepts (reactive, lt-i, lt-u, lt-ua, siloed, chiron), so a scenario can
 * switch `scaling.policy` without touching `scaling.options`; each scaler reads the keys it needs.
 * Paper values by default (digest §3.11); `preset: code` gives the released code's where they differ (memory
 * thresholds 50 % / 25 %, peak window minutes 20–60, Chiron's start pools 20 / 10 / 10, LT-U's emergency
 * scale-out above 90 %); keys set explicitly still win. Not in the preset: the code's LT-UA override (scale-out
 * only, at any time, > 5 over all models' tokens; docs/fidelity/sageserve.md "Deviations"). The code's cooldowns (65 s after a reclaim, 155 s after a
 * redeploy) are not part of the preset: set `cooldownS` for them.
 */
export const SCALING_CODE_PRESET = {
  scaleUpAbove: 0.5,
  scaleDownBelow: 0.25,
  peakWindowMin: [20, 60],
  chironStart: { interactive: 20, mixed: 10, batch: 10 },
  ltuEmergencyAbove: 0.9,
} as const;

/** θ per model (input tokens/s per instance; `default` for models not named), see `thetaTps`. */
export const THETA_TPS_DEFAULTS: Readonly<Record<string, number>> = { 'llama2-70b': 6000, 'bloom-176b': 2500, default: 20000 };

const scalingOptionsObject = z
  .object({
    preset: z.enum(['paper', 'code']).default('paper'),
    /** Memory thresholds (§3.9–3.10): scale out above, in below (paper 70 % / 30 %; code 50 % / 25 %). */
    scaleUpAbove: z.number().min(0).max(1).default(0.7),
    scaleDownBelow: z.number().min(0).max(1).default(0.3),
    /**
     * LT-U only: once the hour's target is reached, one more instance past it while utilisation is above this
     * (the released code's `GlobalAribiterMemoryUtilizationScaling`: 0.9; the paper has no such rule, so null =
     * off). Each one is owed back: the next scale-in below `scaleDownBelow` returns to the target.
     */
    ltuEmergencyAbove: z.number().min(0).max(1).nullable().default(null),
    /** Seconds between two scaling events of one endpoint (Reactive: 15 s). */
    cooldownS: seconds.default(15),
    /** Reactive: also wait until the previous scale-out is ready (false = the paper's plain cooldown). */
    waitForProvisioning: z.boolean().default(false),
    /**
     * θ: input tokens/s one instance of the model sustains (per model name; `default` for the rest), measured
     * in our perf model on 8×H100 with Poisson arrivals and Azure-conversation lengths (docs/fidelity/sageserve.md):
     * llama2-70b 6000 (6.9k ⇒ p90 TTFT 0.50 s, 9.1k saturates), bloom-176b 2500 (2.3k ⇒ p90 0.69 s, 3.4k
     * saturates). `default` (20000) is an unmeasured placeholder for the small Llamas. A scenario's map is merged
     * over these: `{llama2-70b: 7500}` leaves bloom-176b at 2500 and `default` at 20000 (name a model to change it).
     */
    thetaTps: z
      .record(z.string(), z.number().positive())
      .default({})
      .transform((t): Record<string, number> => ({ ...THETA_TPS_DEFAULTS, ...t })),
    /** Forecaster for the hourly plan: ARIMA(p,d,q) on per-minute IW input tokens/s. */
    arimaOrder: z.tuple([z.number().int().min(0), z.number().int().min(0), z.number().int().min(0)]).default([3, 1, 2]),
    /** Minutes of history fitted (the latest ones) and the least needed before the first forecast. */
    historyMin: z.number().int().min(20).default(1440),
    minHistoryMin: z.number().int().min(20).default(60),
    /**
     * Directory of a content-addressed cache of hourly forecast peaks (peak-cache.ts), null = none. A run on a
     * workload some earlier run already planned for (same IW history) reads the peaks instead of refitting
     * ARIMA, with the same decisions. Relative to the working directory.
     */
    forecastCacheDir: z.string().min(1).nullable().default(null),
    /** Peak window inside the next hour, minutes ahead [from, to] (paper [1, 60]; code [20, 60]). */
    peakWindowMin: z.tuple([z.number().int().min(1), z.number().int().min(1)]).default([1, 60]),
    /** β = this share of the past hour's NIW input tokens/s, added to the forecast peak. */
    niwBuffer: z.number().min(0).default(0.1),
    /** ILP: ε (local coverage share), α (VM price per hour), model start-up time (σ = α × hours). */
    epsilon: z.number().positive().max(1).default(1),
    alphaUsdPerHour: z.number().min(0).default(98.32),
    startupS: seconds.default(600),
    /** LT-UA override: last `overrideWindowS` of each hour, observed/forecast ≥ up ⇒ out, ≤ down ⇒ in. */
    overrideWindowS: seconds.default(1200),
    overrideUpRatio: z.number().positive().default(5),
    overrideDownRatio: z.number().min(0).default(0.5),
    /** Window over which LT-UA's "observed TPS" is averaged [infer: the paper leaves it open]. */
    observeS: positiveSeconds.default(300),
    /**
     * LT-UA: act on the ratio only when capacity disagrees too: out only while observed > instances × θ, in only
     * while observed ≤ (instances − 1) × θ [infer: without it a near-zero night forecast turns noise into churn].
     */
    overrideCapacityGuard: z.boolean().default(true),
    /** LT-UA: also require the memory thresholds during the override (default off, see the digest). */
    overrideNeedsMemory: z.boolean().default(false),
    /** Pools whose name ends with this serve only NIW (siloed; Chiron's batch pool); the other scalers leave them alone. */
    niwPoolSuffix: z.string().min(1).default('-niw'),
    /** Pools whose name ends with this are Chiron's mixed pools (IW overflow + NIW); every other scaler leaves them alone. */
    mixedPoolSuffix: z.string().min(1).default('-mixed'),
    /** The tier Chiron treats as batch (its IBP counts only instances running a request of another tier). */
    niwTier: z.string().min(1).default('niw'),
    /** Siloed: NIW pools are kept at least this large. */
    niwPoolMin: z.number().int().min(0).default(2),
    /**
     * Chiron: pool sizes per endpoint (model × region) at the first tick, topped up from the scenario's counts:
     * the paper's 10 interactive / 5 mixed / 5 batch (§7.1); the code preset's 20 / 10 / 10.
     */
    chironStart: z
      .object({ interactive: z.number().int().min(0), mixed: z.number().int().min(0), batch: z.number().int().min(0) })
      .strict()
      .default({ interactive: 10, mixed: 5, batch: 5 }),
    /**
     * Chiron: which pools follow the interactive backpressure (both, as the released code scales whichever of the
     * interactive and mixed endpoints a request reached; see scalers.ts).
     */
    chironScaledPools: z.array(z.enum(['interactive', 'mixed'])).min(1).default(['interactive', 'mixed']),
    /**
     * Chiron: the interactive and mixed pools are not scaled in below this (nor below the pool's `minCount`): the
     * code's scale-in never breaks an endpoint's last 2-instance deployment.
     */
    chironFloor: z.number().int().min(0).default(2),
    /**
     * Chiron: no scale-out of a pool while one of its instances is still provisioning. The code's cooldown after a
     * scale-out is the lead time itself (its Chiron overheads are 0, instances are instant); here instances take
     * the scenario's lead time, and IBP, measured on ready instances, would keep asking for more until the first
     * one arrives (false: a plain `cooldownS`).
     */
    chironWaitForProvisioning: z.boolean().default(true),
    /** Chiron: interactive backpressure threshold Θ and the batch drain-time rule (code's constants). */
    chironIbp: z.number().min(0).max(1).default(0.6),
    chironPromptTimeS: seconds.default(10),
    chironDecodeTps: z.number().positive().default(100),
    chironDeadlineS: positiveSeconds.default(86_400),
  })
  .strict()
  .refine((o) => o.scaleDownBelow < o.scaleUpAbove, { message: 'scaleDownBelow must be < scaleUpAbove', path: ['scaleDownBelow'] })
  .refine((o) => o.peakWindowMin[0] <= o.peakWindowMin[1] && o.peakWindowMin[1] <= 60, { message: 'expected 1 ≤ from ≤ to ≤ 60', path: ['peakWindowMin'] });

export const sageserveScalingOptions = withPresets({ paper: {}, code: SCALING_CODE_PRESET }, scalingOptionsObject);

export type SageServeScalingOptions = z.output<typeof sageserveScalingOptions>;

export function thetaOf(o: SageServeScalingOptions, model: string): number {
  // thetaTps always holds the defaults' `default` (merged over them), so the last fallback is never reached.
  return own(o.thetaTps, model) ?? o.thetaTps.default ?? THETA_TPS_DEFAULTS.default!;
}
