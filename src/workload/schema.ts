import { existsSync, lstatSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { UserError } from '../util/errors.ts';
import type { Rng } from '../util/rng.ts';
import { TRACE_FORMATS, type RequestSource } from './types.ts';
import { detectFormat, openTrace, type TraceOptions } from './trace.ts';
import type { TraceStats } from './readers/reader.ts';
import { applyTransforms } from './transforms.ts';
import { MAX_TRACE_TOKENS } from './fields.ts';
import { SkipTally } from './skip-tally.ts';
import { TieCheck } from './tie-check.ts';
import { synthetic } from './generators/synthetic.ts';
import { O365_DEFAULTS, O365_MODELS, O365_PRESETS, O365_REGIONS, o365 } from './generators/o365.ts';
import { fitEmpirical, fitLognormal, type LengthModel } from './generators/lengths.ts';
import { MAX_GAMMA_CV, MIN_GAMMA_CV } from './generators/arrivals.ts';

/** The scenario's `workload:` section (see src/workload/README.md for an example). Unknown keys are errors. */

const traceRef = z
  .object({
    path: z.string().min(1),
    /** Omitted ⇒ detected from the file's first line. */
    format: z.enum(TRACE_FORMATS).optional(),
  })
  .strict();

/** ln MAX_TRACE_TOKENS: a side whose median e^mu is past the cap every token count has (1e9, as a trace row's) is refused. */
const MAX_LOG_TOKENS = Math.log(MAX_TRACE_TOKENS);

const lognormalSide = z
  .object({
    mu: z.number().refine((mu) => mu <= MAX_LOG_TOKENS, { message: `≤ ln(1e9) ≈ ${MAX_LOG_TOKENS.toFixed(2)} (the median e^mu at most 1e9 tokens, the cap on token counts)` }),
    sigma: z.number().min(0),
    // Draws are clamped to [min, max]; ≤ 1e9 as trace token counts are (the request log stores 32-bit integers).
    min: z.number().int().min(1).max(MAX_TRACE_TOKENS).default(1),
    max: z.number().int().min(1).max(MAX_TRACE_TOKENS).default(1_000_000),
  })
  .strict()
  .refine((s) => s.max >= s.min, { message: 'max must be ≥ min', path: ['max'] });

const lengthsSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('lognormal'), input: lognormalSide, output: lognormalSide }).strict(),
  /** (input, output) pairs sampled from a trace's rows. */
  z
    .object({
      kind: z.literal('empirical'),
      ...traceRef.shape,
      maxPairs: z.number().int().min(1).default(1_000_000),
    })
    .strict(),
  /** A lognormal per side fitted to a trace (mu, sigma of ln tokens; clamped to the observed min and max). */
  z.object({ kind: z.literal('fitted-lognormal'), ...traceRef.shape }).strict(),
]);

/** A million requests per second: far beyond any fleet, and a bound on what a synthetic workload generates. */
const MAX_RATE_PER_S = 1_000_000;
/**
 * A year: the longest span a generated workload covers (the simulator also refuses a first arrival later than
 * that). Without it a durationS or startS like 1e308 never ends: minute steps stop advancing the clock (1e308 + 60
 * is 1e308) and arrivals keep coming.
 */
const MAX_SPAN_S = 365 * 86_400;
const point = z.tuple([z.number().min(0), z.number().min(0).max(MAX_RATE_PER_S)]);
const arrivalsSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('poisson'), ratePerS: z.number().positive().max(MAX_RATE_PER_S) }).strict(),
  // cv in [1e-6, 20] (generators/arrivals.ts): above 20 the shape 1/cv² makes gaps underflow to 0 (endless arrivals at
  // one instant); below 1e-6 (shape > 1e12) the gamma sampler loses its precision, and a cv under 1e-154 overflows the
  // shape to Infinity, where it never returns. cv: 1e-6 is evenly spaced arrivals for any purpose.
  z
    .object({
      kind: z.literal('gamma'),
      ratePerS: z.number().positive().max(MAX_RATE_PER_S),
      cv: z.number().min(MIN_GAMMA_CV).max(MAX_GAMMA_CV),
    })
    .strict(),
  z
    .object({
      kind: z.literal('curve'),
      baseRatePerS: z.number().positive().max(MAX_RATE_PER_S),
      diurnalAmplitude: z.number().min(0).max(1).default(0.5),
      peakHour: z.number().min(0).max(24).default(14),
      weekendFactor: z.number().min(0).default(1),
      startDay: z.number().int().min(0).max(6).default(0),
      startHour: z.number().min(0).max(24).default(0),
    })
    .strict()
    // The thinning envelope (generators/arrivals.ts `maxRate`) is the peak rate: bounded like poisson's, else candidates never pass endS.
    .superRefine((a, ctx) => {
      const diurnalPeak = a.baseRatePerS * (1 + a.diurnalAmplitude);
      if (diurnalPeak > MAX_RATE_PER_S) {
        ctx.addIssue({ code: 'custom', path: ['baseRatePerS'], input: a.baseRatePerS, message: `baseRatePerS·(1 + diurnalAmplitude) ≤ ${MAX_RATE_PER_S} (the peak rate per second)` });
      } else if (diurnalPeak * a.weekendFactor > MAX_RATE_PER_S) {
        ctx.addIssue({ code: 'custom', path: ['weekendFactor'], input: a.weekendFactor, message: `baseRatePerS·(1 + diurnalAmplitude)·weekendFactor ≤ ${MAX_RATE_PER_S} (the peak weekend rate per second)` });
      }
    }),
  z
    .object({
      kind: z.literal('table'),
      points: z
        .array(point)
        .min(1)
        .refine((p) => p.every((x, i) => i === 0 || x[0] > p[i - 1]![0]), { message: 'point times must increase' })
        .refine((p) => p.some((x) => x[1] > 0), { message: 'some rate must be > 0' }),
      periodS: z.number().positive().optional(),
    })
    .strict()
    .refine((a) => a.periodS === undefined || a.points.every(([t]) => t <= a.periodS!), {
      message: 'point times ≤ periodS (a point past the period is never reached)',
      path: ['points'],
    }),
]);

const nonEmpty = z.string().min(1);

/**
 * A name, or a map from names to `value`s. z.record skips a `__proto__` key (assigning it would set the result's
 * prototype), which silently lost that entry (a trace's model label `__proto__` stayed unmapped, a label weight was
 * dropped); a map holding that key is validated as a Map instead and comes out as a prototype-less object, where
 * `__proto__` is an ordinary own key. (The transform sits outside the union, so a bad entry is still reported at
 * its own path: a failed transform would make the union report only "one of the allowed shapes".) Config files and
 * `--set` refuse a `__proto__` key outright (`parseConfigText`), so this serves specs built in code.
 */
function nameOrMap<T>(value: z.ZodType<T>) {
  return z
    .preprocess(
      (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Map) && Object.hasOwn(v, '__proto__') ? new Map(Object.entries(v)) : v),
      z.union([nonEmpty, z.record(nonEmpty, value), z.map(nonEmpty, value)]),
    )
    .transform((m): string | Record<string, T> => {
      if (!(m instanceof Map)) return m;
      const o = Object.create(null) as Record<string, T>;
      for (const [k, x] of m) o[k] = x;
      return o;
    });
}

// Weights are scaled by the largest when their sum overflows (generators/labels.ts), so any finite weights work.
const labelValue = nameOrMap(z.number().min(0).finite()).refine((m) => typeof m === 'string' || Object.values(m).reduce((a, w) => a + w, 0) > 0, {
  message: 'a name or a map of names to weights ≥ 0 with a positive sum',
});
const labelsSchema = z
  .object({ model: labelValue.optional(), tier: labelValue.optional(), region: labelValue.optional(), app: labelValue.optional() })
  .strict();

const syntheticSchema = z
  .object({
    durationS: z.number().positive().max(MAX_SPAN_S),
    maxRequests: z.number().int().min(1).optional(),
    arrivals: arrivalsSchema,
    lengths: lengthsSchema,
    labels: labelsSchema.optional(),
    /** Shared prompt prefixes (system prompts) with block hashes for `engine.prefixCache` (generators/prefix-groups.ts). */
    sharedPrefix: z
      .object({
        groups: z.number().int().min(1).max(1_000_000),
        tokens: z.number().int().min(1).max(1_000_000),
        blockTokens: z.number().int().min(1).max(1_000_000).default(16),
        zipf: z.number().min(0).max(100).default(0),
      })
      .strict()
      .optional(),
  })
  .strict();

/** The factors `transforms.compress` may take (also the load factors `llmfleet capacity` may try). */
export const COMPRESS_RANGE = { min: 1e-3, max: 1e6 } as const;

/** A million copies of each request: past any useful scaling of a trace (and of `MAX_RATE_PER_S` from one request a second). */
const MAX_RATE_SCALE = 1_000_000;

/** A day: far past any timestamp resolution a trace is logged at (spreadS = 60 spreads minute-granular ones). */
const MAX_SPREAD_S = 86_400;

const transformsSchema = z
  .object({
    /** Spread requests sharing one arrival time evenly over [t, t + spreadS) trace seconds (transforms.ts `spreadTies`). */
    spreadS: z.number().positive().max(MAX_SPREAD_S, 's (one day; a whole-second trace needs 1)').optional(),
    window: z
      .object({ startS: z.number().min(0).default(0), endS: z.number().positive().optional() })
      .strict()
      .superRefine((w, ctx) => {
        if (w.endS !== undefined && !(w.endS > w.startS)) ctx.addIssue({ code: 'custom', path: ['endS'], input: w.endS, message: `> startS (${w.startS})` });
      })
      .optional(),
    // [1e-3, 1e6]: a trace played 1000× slower to a million times faster. Far below, a trace's span (and the
    // per-interval metrics over it) grows without bound; far above, its times shrink into float noise.
    compress: z.number().min(COMPRESS_RANGE.min).max(COMPRESS_RANGE.max).optional(),
    // Each request is copied ⌊rateScale⌋ times (transforms.ts): unbounded, a factor like 1e308 exhausts memory on the first request.
    rateScale: z.number().positive().max(MAX_RATE_SCALE).optional(),
    rateScaleJitterS: z.number().min(0).default(1),
    limit: z.number().int().min(1).optional(),
    /** A model name for every request, or a map from the trace's model labels to the fleet's models. */
    model: nameOrMap(nonEmpty).optional(),
  })
  .strict();

const MAX_O365_SCALE = 1000;
const MAX_BURST_FACTOR = 100;

/** SageServe's O365-like multi-region, multi-tier week (src/workload/generators/o365.ts), or a preset slice of it. */
const o365Schema = z
  .object({
    preset: z.enum(Object.keys(O365_PRESETS) as [string, ...string[]]).default('week'),
    /**
     * Multiplies the production rate (≈ 10 M requests a day at 1); ≤ 1000 (10 G a day). A rate near the largest
     * double makes every gap 0 (t + 0 = t) and the generator never leaves its minute.
     */
    scale: z.number().positive().max(MAX_O365_SCALE).default(1),
    /** Override the preset's slice of the week, its models, regions or bursts (spans within a year). */
    startS: z.number().min(0).max(MAX_SPAN_S).optional(),
    durationS: z.number().positive().max(MAX_SPAN_S).optional(),
    models: z.array(z.enum(O365_MODELS)).min(1).optional(),
    regions: z.array(z.enum(O365_REGIONS)).min(1).optional(),
    // factor ≤ 100: the paper's burst test goes to 8×; the bound keeps scale × factor a finite, advancing rate.
    bursts: z.array(z.object({ startS: z.number().min(0), durationS: z.number().positive(), factor: z.number().positive().max(MAX_BURST_FACTOR) }).strict()).optional(),
  })
  .strict();

export const workloadSchema = z
  .object({
    trace: traceRef.optional(),
    synthetic: syntheticSchema.optional(),
    o365: o365Schema.optional(),
    transforms: transformsSchema.optional(),
  })
  .strict()
  .refine((w) => [w.trace, w.synthetic, w.o365].filter((x) => x !== undefined).length === 1, {
    message: "exactly one of trace, synthetic or o365 (to replace a scenario's workload from the command line, use --trace FILE)",
  });

export type WorkloadSpec = z.output<typeof workloadSchema>;

/** Opens a trace a scenario field names (`field` goes in front of a missing-file error, so the user knows which). */
function openRef(ref: { path: string; format?: (typeof TRACE_FORMATS)[number] | undefined }, baseDir: string, field: string, opts: TraceOptions = {}) {
  const path = isAbsolute(ref.path) ? ref.path : resolve(baseDir, ref.path);
  if (!existsSync(path)) {
    // existsSync is false for a link that leads nowhere too: say which (a loop, ELOOP, read as "not found").
    const link = lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
    const what = link ? 'a symbolic link that leads to no file (dangling, or a loop)' : 'file not found';
    throw new UserError(`${field}: ${ref.path}: ${what}${isAbsolute(ref.path) ? '' : ` (relative paths are resolved against ${baseDir})`}`);
  }
  return openTrace(path, ref.format ?? detectFormat(path), opts);
}

/**
 * A scenario's requests; `traceStats` (trace workloads only) counts, for the latest pass, the requests handed
 * on and the skipped rows the run replayed past (the rule: `SkipTally` in skip-tally.ts).
 */
export interface Workload extends RequestSource {
  readonly traceStats?: TraceStats;
  /** Notes on the latest pass for the run's summary (trace workloads: whole-second ties, `TieCheck`). */
  notes?(): string[];
}

/**
 * Builds the workload a scenario describes. Relative paths resolve against `baseDir` (the scenario file's
 * folder). Randomness: synthetic draws from rng.fork('synthetic'), empirical reservoir sampling from
 * rng.fork('empirical'), transforms from rng.fork('transforms'). The result is re-iterable and the same on
 * every pass. Throws a UserError when the workload has no request at all (e.g. a window past the end).
 */
export function openWorkload(spec: WorkloadSpec, rng: Rng, baseDir: string): Workload {
  let src: RequestSource;
  let tally: SkipTally | undefined;
  let ties: TieCheck | undefined;
  if (spec.trace !== undefined) {
    const t = (tally = new SkipTally(spec.transforms));
    src = openRef(spec.trace, baseDir, 'workload.trace.path', { onSkip: (reason, arrivalS) => t.add(reason, arrivalS) });
    if (spec.transforms?.spreadS === undefined) {
      // Watches the raw arrivals (before a window or compress) for whole-second ties, to suggest spreadS.
      const c = (ties = new TieCheck(`workload.trace (${spec.trace.path})`));
      const raw = src;
      src = { [Symbol.iterator]: () => c.pass(raw[Symbol.iterator]()) };
    }
  } else if (spec.synthetic !== undefined) {
    const s = spec.synthetic;
    let lengths: LengthModel;
    switch (s.lengths.kind) {
      case 'lognormal':
        lengths = s.lengths;
        break;
      case 'empirical':
        lengths = { kind: 'empirical', pairs: fitEmpirical(openRef(s.lengths, baseDir, 'workload.synthetic.lengths.path'), { maxPairs: s.lengths.maxPairs, rng: rng.fork('empirical') }) };
        break;
      case 'fitted-lognormal':
        lengths = { kind: 'lognormal', ...fitLognormal(openRef(s.lengths, baseDir, 'workload.synthetic.lengths.path')) };
        break;
    }
    src = synthetic({ ...s, lengths }, rng.fork('synthetic'));
  } else if (spec.o365 !== undefined) {
    const { preset, scale, ...over } = spec.o365;
    const defined = Object.fromEntries(Object.entries(over).filter(([, v]) => v !== undefined));
    src = o365({ ...O365_PRESETS[preset], ...defined, meanRequestsPerS: O365_DEFAULTS.meanRequestsPerS * scale }, rng.fork('o365'));
  } else {
    throw new UserError('workload: expected exactly one of trace, synthetic or o365');
  }
  const base = src;
  if (spec.transforms !== undefined) src = applyTransforms(src, spec.transforms, rng.fork('transforms'));
  if (isEmpty(src)) throw new UserError(whyEmpty(spec, base));
  if (tally === undefined) return src;
  const all = src;
  const t = tally;
  const c = ties;
  return {
    [Symbol.iterator]: () => t.pass(all[Symbol.iterator]()),
    traceStats: t,
    notes: () => {
      const n = c?.note();
      return n === undefined ? [] : [n];
    },
  };
}

function isEmpty(src: RequestSource): boolean {
  const it = src[Symbol.iterator]();
  const first = it.next();
  it.return?.();
  return first.done === true;
}

/** Names the field that left a workload without requests: the source itself, or the transform that emptied it. */
function whyEmpty(spec: WorkloadSpec, base: RequestSource): string {
  const source = spec.trace ? `workload.trace (${spec.trace.path})` : spec.synthetic ? 'workload.synthetic' : 'workload.o365';
  if (isEmpty(base)) return `${source}: no requests${spec.synthetic ? ' (raise durationS or the arrival rate)' : spec.o365 ? ' (check startS, durationS and scale)' : ''}`;
  let n = 0;
  let firstS = Infinity;
  let lastS = -Infinity;
  for (const r of base) {
    n++;
    firstS = Math.min(firstS, r.arrivalS);
    lastS = Math.max(lastS, r.arrivalS);
  }
  const span = `${source} has ${n} requests arriving in [${firstS}, ${lastS}] s`;
  const t = spec.transforms;
  const w = t?.window;
  if (w !== undefined) {
    let hit = false;
    for (const r of base) if ((hit = r.arrivalS >= w.startS && r.arrivalS < (w.endS ?? Infinity))) break;
    if (!hit) return `workload.transforms.window: [${w.startS}, ${w.endS ?? '∞'}) s holds no request; ${span}`;
  }
  if (t?.rateScale !== undefined && t.rateScale < 1) return `workload.transforms.rateScale: thinning by ${t.rateScale} kept none of the requests${w ? ' in the window' : ''}; ${span}`;
  return `workload.transforms: no requests left; ${span}`;
}
