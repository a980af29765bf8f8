import { z } from 'zod';
import { formatPath, issueError, readConfigFile } from '../../util/config-file.ts';
import { ConfigError } from '../../util/errors.ts';

/**
 * The joint allocation problem of seed 002 (digest §2): query types i, models j, GPU tiers k (hardware ×
 * precision), TP degrees × PP depths. Units live in field names; "Kb" fields use the paper's "KB/token",
 * read as 1e-6 GB per token (digest §2.7).
 */

const queryType = z.object({
  name: z.string().min(1),
  arrivalsPerHour: z.number().min(0),                      // λ_i
  inputTokens: z.number().min(0),                          // h_i
  outputTokens: z.number().min(0),                         // f_i
  delaySloS: z.number().positive(),                        // Δ_i
  errorSlo: z.number().min(0).max(1),                      // ε_i
  delayPenaltyUsdPerMsQuery: z.number().min(0),            // ρ_i
  unmetPenaltyUsdPerHour: z.number().min(0),               // φ_i
  storageKbPerToken: z.number().min(0),                    // θ_i
  delayOverhead: z.number().positive().default(1),         // τ_i in d^comp = τ B ν / BW
  unservedCap: z.number().min(0).max(1).default(1),        // ζ_i
}).strict();

const model = z.object({
  name: z.string().min(1),
  weightsGb: z.number().positive(),                        // B_j
  kvKbPerToken: z.number().min(0),                         // β_j
  gflopPerToken: z.number().positive().optional(),         // α (default: B_j GFLOP/token = 2·params)
  activationKbPerToken: z.number().min(0).default(16),     // PP stage-boundary activation per token (d^comm)
  baseError: z.record(z.string(), z.number().min(0).max(1)), // e^base_{i,j} by query-type name
}).strict();

const tier = z.object({
  name: z.string().min(1),
  hardware: z.string().min(1),                             // for simulator fleet pools
  memoryGb: z.number().positive(),                         // C_k
  priceUsdPerHour: z.number().min(0),                      // p_k^c
  tflops: z.number().positive(),                           // P_k
  bandwidthGbPerS: z.number().positive(),                  // BW_k
  latencyScale: z.number().positive().default(1),          // ν_k
  errorScale: z.number().positive().default(1),            // μ_k
  linkGbPerS: z.number().positive().default(600),          // NVLink (d^comm)
  hopLatencyS: z.number().min(0).default(2e-5),            // per-stage per-token latency (d^comm) [A]
}).strict();

export const problemSchema = z.object({
  horizonHours: z.number().positive().default(24),          // Δ_T
  budgetUsd: z.number().min(0),                             // δ
  storageCapGb: z.number().min(0),                          // C^s
  storagePriceUsdPerGbHour: z.number().min(0),              // p^s
  eta: z.number().gt(0).max(1).default(0.9),                // η
  tpDegrees: z.array(z.number().int().positive()).min(1).default([1, 2, 4, 8]),
  ppDepths: z.array(z.number().int().positive()).min(1).default([1, 2, 4]),
  options: z.object({
    kvMode: z.enum(['paper', 'little']).default('paper'),
    quantizedWeights: z.boolean().default(false),
    storageScope: z.enum(['global', 'per-type', 'per-pair']).default('global'),
    msPerS: z.number().positive().default(1000),            // ρ is $/ms; D is in s
  }).strict().default({ kvMode: 'paper', quantizedWeights: false, storageScope: 'global', msPerS: 1000 }),
  types: z.array(queryType).min(1),
  models: z.array(model).min(1),
  tiers: z.array(tier).min(1),
}).strict();

export type Problem = z.infer<typeof problemSchema>;
export type QueryType = Problem['types'][number];
export type ModelEntry = Problem['models'][number];
export type Tier = Problem['tiers'][number];

/** Validates a parsed object; `source` names the file for messages. Cross-field checks included. */
export function parseProblem(raw: unknown, source = 'problem', lineOf?: (path: readonly PropertyKey[]) => number | undefined): Problem {
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
  uniq(p.types.map((t) => t.name), 'types');
  uniq(p.models.map((m) => m.name), 'models');
  uniq(p.tiers.map((t) => t.name), 'tiers');
  p.models.forEach((m, j) => {
    for (const t of p.types) {
      if (m.baseError[t.name] === undefined) {
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
