import { z } from 'zod';
import { perfSectionSchema, perfSpecSchema } from '../perf/index.ts';
import { ROUTER_NAMES } from '../policy/routing/registry.ts';
import { SCALER_NAMES } from '../policy/scaling/registry.ts';
import { queueOrders } from '../policy/scheduling/registry.ts';
import { workloadSchema } from '../workload/schema.ts';
import { lengthPredictors, type LengthPredictorName } from '../forecast/length/registry.ts';
import { positiveSeconds, seconds, secondsFrom } from '../policy/options.ts';

const posInt = z.number().int().positive();
/**
 * Upper bounds of the scenario's durations. Every one of them moves a simulated time forward (an arrival at an
 * instance, an instance ready, an action, a cooldown's end); past about 1e10 s a double is too coarse for the
 * latencies measured (routing.dispatchDelayS 1e300 gave TPOT 0 and 6.8e297 USD, 1e9 a 5,000,000-row timeline
 * error blaming output.timelineIntervalS). So: any time or duration at most 1e10 s (`seconds`, shared with the
 * policies' options), and tighter where a physical maximum is plain: a delay every request pays (gateway, network,
 * migration stall) at most a day, a VM acquisition, model load or spot reclaim at most a week.
 */
export const MAX_REQUEST_DELAY_S = 86_400;
export const MAX_LEAD_TIME_S = 7 * 86_400;
/** A delay every request (or migration) pays on its way: a day is far past any gateway, network or stall. */
const requestDelay = z.number().min(0).max(MAX_REQUEST_DELAY_S, 's (one day; far past any gateway, network or migration delay)');
/** Provisioning and spot lead times: a week is far past any VM acquisition or model load (papers: minutes to 2 h). */
const LEAD_WHY = 's (one week; VM acquisition and model loads take minutes to hours)';
const leadSeconds = z.number().min(0).max(MAX_LEAD_TIME_S, LEAD_WHY);

/** Iteration-level batching of one instance (fields without defaults, so a pool can override a subset). */
const engineFields = {
  /** vllm: V1 (chunked prefill mixes with decodes); vllm-v0: V0 default (a step is all prefills or all decodes); splitwise: SplitwiseSim. */
  scheduler: z.enum(['vllm', 'vllm-v0', 'splitwise']),
  /** A number, or 'auto': what vLLM picks for the pool's scheduler, hardware and model (engine/vllm-defaults.ts). */
  maxNumSeqs: z.union([posInt, z.literal('auto')]),
  maxBatchedTokens: z.union([posInt, z.literal('auto')]),
  chunkedPrefill: z.boolean(),
  blockTokens: posInt,
  gpuMemoryUtilization: z.number().positive().max(1),
  /** Bytes per device kept for activations; default from the model (see perf/memory.ts). */
  activationReserveBytes: z.number().min(0),
  /** Fix the KV capacity instead of deriving it from memory (tests, or a measured vLLM log line). */
  kvBlocks: posInt,
  /** Fix the KV capacity in tokens (SplitwiseSim states it this way); rounded down to whole blocks. */
  kvCapacityTokens: posInt,
  queueOrder: z.enum(Object.keys(queueOrders) as [keyof typeof queueOrders]),
  /** vLLM's automatic prefix caching, for requests whose trace gives block hashes (engine/prefix-cache.ts). */
  prefixCache: z.boolean(),
};

/** Fixed limits in the range of vLLM V1's (its own depend on the GPU: `auto` asks for them, engine/vllm-defaults.ts). */
export const ENGINE_DEFAULTS = {
  scheduler: 'vllm',
  maxNumSeqs: 256,
  maxBatchedTokens: 8192,
  chunkedPrefill: true,
  blockTokens: 16,
  gpuMemoryUtilization: 0.9,
  queueOrder: 'fcfs',
  prefixCache: false,
} as const;

const engineOverrideSchema = z
  .object(engineFields)
  .partial()
  .strict()
  .refine((e) => !(e.chunkedPrefill === true && (e.scheduler === 'vllm-v0' || e.scheduler === 'splitwise')), {
    message: 'false or absent with scheduler vllm-v0 or splitwise (neither chunks prompts; chunked prefill is scheduler vllm)',
    path: ['chunkedPrefill'],
  })
  .refine((e) => !(e.prefixCache === true && e.scheduler === 'splitwise'), {
    message: 'false or absent with scheduler splitwise (SplitwiseSim has no prefix cache; use vllm or vllm-v0)',
    path: ['prefixCache'],
  });
export const engineSchema = engineOverrideSchema.transform((e) => ({ ...ENGINE_DEFAULTS, ...e }));

/**
 * A lead time in seconds: a fixed number, or a lognormal with that `median`, drawn again while above `max`
 * (`sigma` defaults to ln(max / median) / 2.326, so that `max` is the untruncated 99th percentile;
 * `src/policy/sageserve/lead-time.ts`).
 */
export const leadTimeDistSchema = z
  .object({
    median: z.number().positive().max(MAX_LEAD_TIME_S, LEAD_WHY),
    max: z.number().positive().max(MAX_LEAD_TIME_S, LEAD_WHY),
    sigma: z.number().positive().finite().optional(),
  })
  .strict()
  .refine((d) => d.median <= d.max, { path: ['max'], message: 'a max ≥ median' });
export const leadTimeSchema = z.union([leadSeconds, leadTimeDistSchema], {
  error: (iss) =>
    iss.input !== null && typeof iss.input === 'object'
      ? `{ median, max, sigma? } with positive numbers of seconds ≤ ${MAX_LEAD_TIME_S} (median ≤ max)`
      : `a number of seconds ≥ 0 and ≤ ${MAX_LEAD_TIME_S} (one week) or { median, max, sigma? }`,
});

export const poolSchema = z
  .object({
    name: z.string().min(1).optional(),
    model: z.string().min(1),
    hardware: z.string().min(1),
    tp: posInt.default(1),
    pp: posInt.default(1),
    region: z.string().default(''),
    /** Instances ready at t = 0 (at most a million per pool, like maxCount). */
    count: z.number().int().min(0).max(1_000_000),
    /**
     * Bounds of every scaling decision (the governor's, and scheduled `actions`). `minCount` bounds the active
     * instances (provisioning + ready); `maxCount` every instance that holds devices: provisioning + ready +
     * draining (a drained instance runs its requests to the end). A scale-out only fills the room draining instances
     * leave (none is re-activated), even below `minCount`: the pool reaches it as they stop.
     */
    minCount: z.number().int().min(0).default(0),
    maxCount: z.number().int().min(0).default(1_000_000),
    /**
     * Longest prompt + output the pool accepts; default the model's context length. A longer request is dropped
     * ('context-length') on arrival when no pool of its model accepts it, else at the instance a router sends it to.
     */
    contextLength: posInt.optional(),
    /** This pool's start-up times, each over `fleet.provisioning`'s (e.g. a bigger model loads longer). */
    provisioning: z.object({ vmAcquireS: leadTimeSchema.optional(), modelLoadS: leadTimeSchema.optional() }).strict().optional(),
    // Without the default: an absent pool `perf` must fall back to the scenario's top-level one.
    perf: perfSectionSchema.optional(),
    engine: engineOverrideSchema.optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.minCount > p.maxCount) ctx.addIssue({ code: 'custom', path: ['maxCount'], message: `≥ minCount (${p.minCount})` });
    else if (p.count > p.maxCount) ctx.addIssue({ code: 'custom', path: ['count'], message: `≤ maxCount (${p.maxCount})` });
    else if (p.count < p.minCount) ctx.addIssue({ code: 'custom', path: ['count'], message: `≥ minCount (${p.minCount}): a pool starts with count instances` });
  });

export const networkSchema = z
  .object({
    /** Seconds between any two different regions (requests or pools without a region pay nothing). */
    crossRegionS: requestDelay.default(0),
    /** Per pair, `latencyS[origin][serving]` seconds; overrides `crossRegionS` (a same-region pair may be listed too). */
    latencyS: z.record(z.string(), z.record(z.string(), requestDelay)).default({}),
  })
  .strict();

export const spotSchema = z
  .object({
    /**
     * Reclaiming a donated instance that still holds the pool's model (paper: ≈ 1 min; median 1 min, max 5 min
     * in its evaluation). A number, or a distribution `{ median, max, sigma? }` drawn per reclaim.
     */
    sameModelS: leadTimeSchema.default(60),
    /**
     * Reclaiming a donated instance of another model (same region, hardware, tp, pp) and loading this one (≈ 10 min);
     * a number or a distribution, as `sameModelS`.
     */
    otherModelS: leadTimeSchema.default(600),
    /**
     * Regions holding each model's weights (a model not listed has them everywhere). Loading a model in a region
     * without them takes `remoteWeightsS` instead of `otherModelS` (paper: ≈ 2 h), on a reclaimed or a fresh VM.
     */
    weightsRegions: z.record(z.string(), z.array(z.string())).default({}),
    remoteWeightsS: leadSeconds.default(7200),
    /** What a donated instance earns per hour in the spot market (USD); the paper gives no price. */
    revenueUsdPerInstanceHour: z.number().min(0).default(0),
    /** Donated instances at t = 0. */
    initial: z
      .array(
        z
          .object({
            region: z.string().default(''),
            model: z.string().min(1),
            hardware: z.string().min(1),
            tp: posInt.default(1),
            pp: posInt.default(1),
            count: z.number().int().min(0),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();

export const scheduledActionSchema = z.discriminatedUnion('action', [
  z.object({ atS: seconds, action: z.literal('add'), pool: z.string().min(1), count: posInt.default(1) }).strict(),
  z.object({ atS: seconds, action: z.literal('drain'), pool: z.string().min(1), count: posInt.default(1) }).strict(),
]);

/**
 * A request's utility: bounded so that summing it over every request of a run stays finite (summary.json's
 * `utility.earned` / `possible`); 1e12 per request is far past any price.
 */
const utility = z.number().min(0).max(1e12);

export const sloSchema = z
  .object({
    ttftS: positiveSeconds.default(2),
    tpotS: positiveSeconds.default(0.2),
    /** PreServe's SLO on normalised latency (E2E / output tokens, s): when set it alone judges a request (TTFT and TPOT reported only). */
    normalizedE2eS: positiveSeconds.optional(),
    /** What a request earns when it meets these targets (SageServe's per-request utility); unset: not reported. */
    utility: utility.optional(),
  })
  .strict();

/** `slo.tiers.<tier>`: the same fields without defaults. */
export const tierSloSchema = z
  .object({ ttftS: positiveSeconds.optional(), tpotS: positiveSeconds.optional(), utility: utility.optional() })
  .strict();

export const scenarioSchema = z
  .object({
    name: z.string().default('scenario'),
    description: z.string().optional(),
    seed: z.number().int().default(1),
    /** A YAML file adding hardware or models to the built-in catalog (relative to the scenario file). */
    catalog: z.string().min(1).optional(),
    workload: workloadSchema,
    fleet: z
      .object({
        pools: z.array(poolSchema).min(1),
        provisioning: z
          // Each a fixed number of seconds or a lognormal { median, max, sigma? } drawn per instance started.
          .object({ vmAcquireS: leadTimeSchema.default(120), modelLoadS: leadTimeSchema.default(60) })
          .strict()
          .default({ vmAcquireS: 120, modelLoadS: 60 }),
        /**
         * A spot pool per region (SageServe §6.4; policy/sageserve/spot.ts). Unset: none (a scale-in stops the
         * instance, a scale-out provisions a fresh VM after `provisioning`).
         */
        spot: spotSchema.optional(),
      })
      .strict(),
    engine: engineSchema.default({ ...ENGINE_DEFAULTS }),
    perf: perfSpecSchema,
    routing: z
      .object({
        policy: z.enum(ROUTER_NAMES).default('round-robin'),
        /**
         * Options of the selected policy, deep-merged over its `perPolicy` entry ({@link selectedOptions}): a nested
         * block (`migration`, `anticipator`) keeps the entry's keys this one leaves out; lists and scalars replace.
         */
        options: z.record(z.string(), z.unknown()).default({}),
        /**
         * Options per policy name, so one scenario can be switched between policies with `--set routing.policy=…`.
         * Every entry is checked at load (unknown keys, bad values), selected or not.
         */
        perPolicy: z.partialRecord(z.enum(ROUTER_NAMES), z.record(z.string(), z.unknown())).default({}),
        /**
         * Seconds between a request's routing decision and its arrival at the instance, for every request: the
         * gateway's own management time (length prediction, routing), paid in TTFT and E2E on top of `network`.
         * Default 0 (our routers' decisions take microseconds); PreServe measured 45.6 ms per request, 35.9 of them
         * its DistilBERT length predictor (paper RQ4): `--set routing.dispatchDelayS=0.0456` charges that.
         */
        dispatchDelayS: requestDelay.default(0),
      })
      .strict()
      .default({ policy: 'round-robin', options: {}, perPolicy: {}, dispatchDelayS: 0 }),
    /**
     * The waiting-queue order of every instance (fcfs, edf, pf, dpa; see policy/scheduling/). Unset: the
     * top-level `engine.queueOrder` (default fcfs) decides, so older scenarios run as before; a pool's own
     * `engine.queueOrder` still wins. `options` go to the order (tier deadlines, DPA's τ_n / τ_p).
     */
    scheduling: z
      .object({
        policy: z.enum(Object.keys(queueOrders) as [keyof typeof queueOrders]).optional(),
        options: z.record(z.string(), z.unknown()).default({}),
      })
      .strict()
      .default({ options: {} }),
    scaling: z
      .object({
        /**
         * A registered scaling policy, run every `intervalS` (`none`: the fleet stays as configured).
         * `scheduled` runs no policy, only `actions` (which any policy may be given as well).
         */
        policy: z.enum([...SCALER_NAMES, 'scheduled']).default('none'),
        intervalS: positiveSeconds.default(60),
        /**
         * Options of the selected policy, deep-merged over its `perPolicy` entry ({@link selectedOptions}): a nested
         * block keeps the entry's keys this one leaves out; lists and scalars replace.
         */
        options: z.record(z.string(), z.unknown()).default({}),
        /**
         * Options per policy name, so one scenario can be switched between policies with `--set scaling.policy=…`.
         * Every entry is checked at load (unknown keys, bad values), selected or not.
         */
        perPolicy: z.partialRecord(z.enum(SCALER_NAMES), z.record(z.string(), z.unknown())).default({}),
        /**
         * Policy names this scenario maps to other registered policies, so a paper's own names switch the paper's
         * strategies (the SageServe scenarios map `reactive` to `sageserve-reactive`). Options and `perPolicy`
         * apply to the policy the name resolves to: an entry `perPolicy.<alias>` would never be read and is refused
         * at load (put it under the target's name).
         */
        aliases: z.partialRecord(z.enum(SCALER_NAMES), z.enum(SCALER_NAMES)).default({}),
        /** Fixed add/drain actions at fixed times (experiments, tests). */
        actions: z.array(scheduledActionSchema).default([]),
        /** Enforced outside the policy (see policy/scaling/governor.ts). */
        upCooldownS: seconds.default(0),
        downCooldownS: seconds.default(300),
        maxStep: posInt.default(1_000_000),
        /**
         * Scale-in stabilization window, s (Kubernetes HPA semantics): a scale-in goes down only to the highest
         * count the policy recommended for the pool within the last this many seconds; scale-ups are not held.
         * 0 (default): off.
         */
        downStabilizationS: seconds.default(0),
        /**
         * Which instances (ready or provisioning) a scale-in drains: the `newest` (latest added, so provisioning ones
         * first unless a spot reclaim made a later one ready sooner), or the `least-loaded` (fewest outstanding
         * requests, so they stop sooner; provisioning and idle ones have none; ties: newest).
         */
        drainOrder: z.enum(['newest', 'least-loaded']).default('newest'),
      })
      .strict()
      .default({ policy: 'none', intervalS: 60, options: {}, perPolicy: {}, aliases: {}, actions: [], upCooldownS: 0, downCooldownS: 300, maxStep: 1_000_000, downStabilizationS: 0, drainOrder: 'newest' }),
    /** Output-length prediction policies see (`predictedOutputTokens`); the engine always uses the true length. */
    prediction: z
      .object({
        /** A predictor name, or PreServe's experiment names: `noisy` (= noisy-oracle), `learned` (= online-regressor). */
        length: z
          .enum([...(Object.keys(lengthPredictors) as LengthPredictorName[]), 'noisy', 'learned'])
          .default('oracle')
          .transform((n): LengthPredictorName => (n === 'noisy' ? 'noisy-oracle' : n === 'learned' ? 'online-regressor' : n)),
        /**
         * The noisy oracle's knobs (digest §9.1a): `biasTokens` added to every prediction (negative: under-predict,
         * which stresses the anticipator's +0.2·D̂ extension); `relativeErrors`, a list of error proportions ρ (e.g.
         * your predictor's test errors): D̂ = D·(1 + ρ), ρ drawn per request, instead of PreServe's absolute mixture.
         */
        noisy: z
          .object({
            biasTokens: z.number().min(-1e6).max(1e6).default(0),
            relativeErrors: z.array(z.number().gt(-1).max(1000)).min(1).max(1_000_000).optional(),
          })
          .strict()
          .default({ biasTokens: 0 }),
      })
      .strict()
      .refine((p) => p.length === 'noisy-oracle' || (p.noisy.biasTokens === 0 && p.noisy.relativeErrors === undefined), {
        message: 'prediction.length noisy (noisy-oracle) for these knobs: the other predictors take none',
        path: ['noisy'],
      })
      .default({ length: 'oracle', noisy: { biasTokens: 0 } }),
    slo: sloSchema
      // A tier's targets: what it leaves out comes from the top-level ones (metrics/summary.ts), not the defaults above.
      .extend({ tiers: z.record(z.string(), tierSloSchema).default({}) })
      .default({ ttftS: 2, tpotS: 0.2, tiers: {} }),
    output: z
      // A row per interval is kept in memory: the simulator stops past MAX_TIMELINE_ROWS (timeline.ts); below 1 ms a
      // run would only reach that limit, slowly.
      .object({
        timelineIntervalS: secondsFrom(0.001).default(60),
        /**
         * Warm-up: requests arriving before this many seconds are served but left out of every latency, SLO and
         * throughput figure of summary.json (requests.csv keeps them); the fleet's cost still covers the whole run.
         */
        warmupS: seconds.default(0),
      })
      .strict()
      .default({ timelineIntervalS: 60, warmupS: 0 }),
    /** Stop the simulation at this time (seconds); by default it runs until every request has finished. */
    endS: positiveSeconds.optional(),
    /**
     * Network delay from a request's region (origin) to the region of the instance it is sent to, added before
     * it reaches the instance (so it is part of TTFT and E2E). Unset or 0: none.
     */
    network: networkSchema.optional(),
    /**
     * How live migration moves a request's KV between instances when a router orders it (Llumnix with
     * `routing.options.migration.enabled`; sim/migration.ts). Defaults [ours]: 10 GB/s between instances (PCIe 4.0
     * peaks at 25; Llumnix's default gloo backend stages through host memory), 20 ms of fixed suspension, and
     * Llumnix's own `--migration-last-stage-max-blocks` 16 and `--migration-max-stages` 3.
     */
    migration: z
      .object({
        bandwidthGBps: z.number().positive().default(10),
        stallS: requestDelay.default(0.02),
        lastStageMaxBlocks: posInt.default(16),
        maxStages: posInt.default(3),
      })
      .strict()
      .default({ bandwidthGBps: 10, stallS: 0.02, lastStageMaxBlocks: 16, maxStages: 3 }),
    /** Run-time safety net: a request routed nowhere for this long is dropped with reason 'no-instance'. */
    maxDeferS: positiveSeconds.default(3600),
  })
  .strict();

export type Scenario = z.output<typeof scenarioSchema>;

/** A pool's name: its `name`, else `pool<index>` (its place in `fleet.pools`). */
export const poolName = (pool: { name?: string | undefined }, index: number): string => pool.name ?? `pool${index}`;

/**
 * The options a policy family's selected policy gets: its `perPolicy` entry, overridden by `options`. The merge is
 * deep for plain objects (`options.migration.intervalS` keeps `perPolicy.llumnix.migration.enabled`); a list, a
 * scalar or null replaces what the entry has at that key.
 */
export function selectedOptions(section: { policy: string; options: Record<string, unknown>; perPolicy: Partial<Record<string, Record<string, unknown>>> }): Record<string, unknown> {
  return deepMerge(section.perPolicy[section.policy] ?? {}, section.options);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && [Object.prototype, null].includes(Object.getPrototypeOf(v));

/** `over` merged into `base`, recursively where both have a plain object; new objects (the inputs are left alone). */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  // Own data properties throughout (Object.fromEntries), so a key such as `__proto__` stays a key (and is refused by the strict schema).
  const out = new Map<string, unknown>(Object.entries(base));
  for (const [k, v] of Object.entries(over)) {
    const prev = out.get(k);
    out.set(k, isPlainObject(prev) && isPlainObject(v) ? deepMerge(prev, v) : v);
  }
  return Object.fromEntries(out);
}

/** The scaling section with its policy alias resolved (`scaling.aliases`; `scheduled` is never an alias). */
export function resolvedScaling(sc: Scenario): Scenario['scaling'] {
  const asked = sc.scaling.policy;
  return { ...sc.scaling, policy: asked === 'scheduled' ? asked : (sc.scaling.aliases[asked] ?? asked) } as Scenario['scaling'];
}
export type EngineSpec = z.output<typeof engineSchema>;
