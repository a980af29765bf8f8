import { z } from 'zod';
import { formatPath, issueError, readConfigFile } from '../../util/config-file.ts';
import { ConfigError } from '../../util/errors.ts';

/**
 * The joint allocation problem of seed 002 (digest §2): query types i, models j, GPU tiers k (hardware ×
 * precision), TP degrees × PP depths. Units live in field names; "Kb" fields use the paper's "KB/token",
 * read as 1e-6 GB per token (digest §2.7).
 */

// Upper bounds (`LIMITS`) are far beyond any real fleet but keep every coefficient the MILP derives from them
// finite and within what HiGHS loads (it rejects matrix entries ≥ 1e15): a value past one is a typo or a unit
// mistake (e.g. arrivals per hour 1e19), and is rejected naming its file line instead of failing in the solver.
// Combinations at several bounds at once can still exceed HiGHS's range; `solveModel` then says so in one line.
export const LIMITS = {
  arrivalsPerHour: 1e12,      // ≈ 2.8e8 queries/s
  tokens: 1e8,                // per query, input or output
  delaySloS: 1e6,             // ≈ 11.6 days
  usdPerMsQuery: 1e6,         // ρ_i
  usdPerHour: 1e9,            // φ_i, p_k^c
  kbPerToken: 1e6,            // θ_i, β_j, activations: 1 GB per token
  factor: 1e3,                // τ_i, ν_k, μ_k
  gb: 1e9,                    // B_j, C_k, C^s (an exabyte)
  gflopPerToken: 1e9,
  tflops: 1e9,
  gbPerS: 1e9,                // BW_k, NVLink
  // Lower bounds of the fields the MILP divides by (a tiny positive value is a typo or a unit mistake, too): BW_k
  // (d^comp, paper-mode KV; 1e-12 GB/s put 7e16 into the delay rows and HiGHS refused the model), the NVLink
  // (d^comm), P_k and η (compute rows ÷ η·P_k) and C_k (memory rows ÷ C_k) — at 1e-300 each made HiGHS refuse the
  // model, naming a row instead of the field. These floors are far below any real GPU and keep those terms
  // within HiGHS's range with the other fields in their usual ranges.
  minGbPerS: 1e-3,            // BW_k, NVLink: 1 MB/s
  minTflops: 1e-3,            // P_k: 1 GFLOP/s
  minGb: 1e-3,                // C_k: 1 MB
  minEta: 1e-3,               // η
  hopLatencyS: 1e3,
  horizonHours: 1e5,          // ≈ 11 years
  minHorizonHours: 1 / 60,    // Δ_T: a minute (1e-300 h made every GPU free: a $0 rental term)
  budgetUsd: 1e12,
  storageUsdPerGbHour: 1e3,
  msPerS: 1e6,
} as const;

/**
 * Instance size caps, for problem files and `--generate` alike: at most 1000 query types, models or tiers, and
 * 1e7 (type, model, tier) triples — every solver keeps several arrays of that length (GH at 200³ = 8e6 triples:
 * 4 s, 0.7 GB). The exact MILP has a far smaller cap of its own (`milp.ts`, MAX_MILP_VARS).
 */
export const MAX_DIM = 1000;
export const MAX_TRIPLES = 10_000_000;

/** TP degrees and PP depths a deployment may use (the issue's {1,2,4,8} and {1,2,4}). */
export const TP_DEGREES = [1, 2, 4, 8] as const;
export const PP_DEPTHS = [1, 2, 4] as const;

const L = LIMITS;
/**
 * A type, model or tier name. Names key plain objects (`baseError`, `gpusByTier`), where `__proto__` sets the
 * prototype instead of a key: refused.
 */
const entryName = z.string().min(1).refine((n) => n !== '__proto__', { message: 'a name other than "__proto__"' });

const queryType = z.object({
  name: entryName,
  // λ_i > 0: a type with no arrivals would still pay its unmet penalty T·φ_i·u_i and its delay penalty (neither scales
  // with λ in (8a)), so zeroing a type's rate to drop it buys GPUs for nothing; the message says to remove it.
  arrivalsPerHour: z.number().max(L.arrivalsPerHour).refine((v) => v > 0, { message: '> 0 arrivals per hour (a type with λ = 0 still pays its unmet and delay penalties in (8a); to drop a type, remove it from types)' }),
  inputTokens: z.number().min(0).max(L.tokens),                // h_i
  outputTokens: z.number().min(0).max(L.tokens),               // f_i
  delaySloS: z.number().positive().max(L.delaySloS),           // Δ_i
  errorSlo: z.number().min(0).max(1),                          // ε_i
  delayPenaltyUsdPerMsQuery: z.number().min(0).max(L.usdPerMsQuery), // ρ_i
  unmetPenaltyUsdPerHour: z.number().min(0).max(L.usdPerHour), // φ_i
  storageKbPerToken: z.number().min(0).max(L.kbPerToken),      // θ_i
  delayOverhead: z.number().positive().max(L.factor).default(1), // τ_i in d^comp = τ B ν / BW
  unservedCap: z.number().min(0).max(1).default(1),            // ζ_i
}).strict();

const model = z.object({
  name: entryName,
  weightsGb: z.number().positive().max(L.gb),                  // B_j
  kvKbPerToken: z.number().min(0).max(L.kbPerToken),           // β_j
  gflopPerToken: z.number().positive().max(L.gflopPerToken).optional(), // α (default: B_j GFLOP/token = 2·params)
  activationKbPerToken: z.number().min(0).max(L.kbPerToken).default(16), // PP stage-boundary activation per token (d^comm)
  baseError: z.record(z.string(), z.number().min(0).max(1)),   // e^base_{i,j} by query-type name
}).strict();

const tier = z.object({
  name: entryName,
  hardware: z.string().min(1),                                 // for simulator fleet pools
  memoryGb: z.number().min(L.minGb).max(L.gb),                 // C_k
  priceUsdPerHour: z.number().min(0).max(L.usdPerHour),        // p_k^c
  tflops: z.number().min(L.minTflops).max(L.tflops),           // P_k
  bandwidthGbPerS: z.number().min(L.minGbPerS).max(L.gbPerS),  // BW_k
  latencyScale: z.number().positive().max(L.factor).default(1), // ν_k
  errorScale: z.number().positive().max(L.factor).default(1),  // μ_k
  linkGbPerS: z.number().min(L.minGbPerS).max(L.gbPerS).default(600), // NVLink (d^comm)
  hopLatencyS: z.number().min(0).max(L.hopLatencyS).default(2e-5), // per-stage per-token latency (d^comm) [A]
}).strict();

export const problemSchema = z.object({
  horizonHours: z.number().min(L.minHorizonHours).max(L.horizonHours).default(24), // Δ_T
  budgetUsd: z.number().min(0).max(L.budgetUsd),               // δ
  storageCapGb: z.number().min(0).max(L.gb),                   // C^s
  storagePriceUsdPerGbHour: z.number().min(0).max(L.storageUsdPerGbHour), // p^s
  eta: z.number().min(L.minEta).max(1).default(0.9),           // η
  tpDegrees: z.array(z.literal(TP_DEGREES)).min(1).default([...TP_DEGREES]),
  ppDepths: z.array(z.literal(PP_DEPTHS)).min(1).default([...PP_DEPTHS]),
  options: z.object({
    kvMode: z.enum(['paper', 'little']).default('paper'),
    quantizedWeights: z.boolean().default(false),
    storageScope: z.enum(['global', 'per-type', 'per-pair']).default('global'),
    msPerS: z.number().positive().max(L.msPerS).default(1000), // ρ is $/ms; D is in s
  }).strict().default({ kvMode: 'paper', quantizedWeights: false, storageScope: 'global', msPerS: 1000 }),
  types: z.array(queryType).min(1).max(MAX_DIM),
  models: z.array(model).min(1).max(MAX_DIM),
  tiers: z.array(tier).min(1).max(MAX_DIM),
}).strict();

export type Problem = z.infer<typeof problemSchema>;
export type Tier = Problem['tiers'][number];

/** Validates a parsed object; `source` names the file for messages. Cross-field checks included. */
export function parseProblem(raw: unknown, source = 'problem', lineOf?: (path: readonly PropertyKey[]) => number | undefined): Problem {
  // An empty file (or one holding only `null`) reads as {}: say so, not "budgetUsd: … (the field is missing)".
  const isMapping = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
  if (!isMapping || Object.keys(raw).length === 0) {
    const expected = 'a mapping of the problem\'s fields (budgetUsd, storageCapGb, storagePriceUsdPerGbHour, types, models, tiers, …)';
    throw new ConfigError(isMapping ? { source, expected: `${expected}, but the document is empty` } : { source, line: lineOf?.([]), expected, got: raw });
  }
  const r = problemSchema.safeParse(raw);
  if (!r.success) throw issueError(r.error, raw, { source, lineOf });
  const p = r.data;
  const bad = (path: PropertyKey[], expected: string, got: unknown) => new ConfigError({ source, line: lineOf?.(path), path: formatPath(path), expected, got });
  const uniq = (xs: string[], what: string) => {
    const seen = new Set<string>();
    xs.forEach((x, i) => {
      if (seen.has(x)) throw bad([what, i, 'name'], `a unique ${what} name`, x);
      seen.add(x);
    });
  };
  const triples = p.types.length * p.models.length * p.tiers.length;
  if (triples > MAX_TRIPLES) {
    throw new ConfigError({ source, path: 'types × models × tiers', expected: `at most ${MAX_TRIPLES} (type, model, tier) triples`, got: triples });
  }
  // A repeated TP degree or PP depth would enter every deployment choice twice (duplicate MILP columns).
  for (const list of ['tpDegrees', 'ppDepths'] as const) {
    const xs: readonly number[] = p[list];
    xs.forEach((v, i) => {
      if (xs.indexOf(v) !== i) throw bad([list, i], `a value not listed before (${list} must be distinct)`, v);
    });
  }
  uniq(p.types.map((t) => t.name), 'types');
  uniq(p.models.map((m) => m.name), 'models');
  uniq(p.tiers.map((t) => t.name), 'tiers');
  p.models.forEach((m, j) => {
    for (const t of p.types) {
      if (!Object.hasOwn(m.baseError, t.name)) {
        throw bad(['models', j, 'baseError'], `an error rate for every query type (missing "${t.name}")`, m.baseError);
      }
    }
    for (const k of Object.keys(m.baseError)) {
      if (!p.types.some((t) => t.name === k)) throw bad(['models', j, 'baseError', k], `a query type name (${p.types.map((t) => t.name).join(', ')})`, k);
    }
  });
  return p;
}

/** Reads a YAML or JSON problem file; errors name the file, line and field. */
export function loadProblem(file: string): Problem {
  const doc = readConfigFile(file);
  return parseProblem(doc.raw, file, doc.lineOf);
}
