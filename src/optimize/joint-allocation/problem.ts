import { readFileSync } from 'node:fs';
import { parseDocument, LineCounter } from 'yaml';
import { z } from 'zod';
import { ConfigError, UserError } from '../../util/errors.ts';

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
export function parseProblem(raw: unknown, source = 'problem', lineOf?: (path: (string | number)[]) => number | undefined): Problem {
  const r = problemSchema.safeParse(raw);
  if (!r.success) {
    const iss = r.error.issues[0]!;
    const path = iss.path.map(String);
    const line = lineOf?.(iss.path as (string | number)[]);
    throw new ConfigError({ source, ...(line !== undefined ? { line } : {}), path: path.join('.'), expected: iss.message, got: getAt(raw, iss.path as (string | number)[]) });
  }
  const p = r.data;
  const uniq = (xs: string[], what: string) => {
    const seen = new Set<string>();
    xs.forEach((x, i) => {
      if (seen.has(x)) throw new ConfigError({ source, path: `${what}[${i}].name`, expected: `a unique ${what} name`, got: x });
      seen.add(x);
    });
  };
  uniq(p.types.map((t) => t.name), 'types');
  uniq(p.models.map((m) => m.name), 'models');
  uniq(p.tiers.map((t) => t.name), 'tiers');
  p.models.forEach((m, j) => {
    for (const t of p.types) {
      if (m.baseError[t.name] === undefined) {
        throw new ConfigError({ source, path: `models[${j}].baseError`, expected: `an error rate for every query type (missing "${t.name}")`, got: m.baseError });
      }
    }
    for (const k of Object.keys(m.baseError)) {
      if (!p.types.some((t) => t.name === k)) throw new ConfigError({ source, path: `models[${j}].baseError.${k}`, expected: `a query type name (${p.types.map((t) => t.name).join(', ')})`, got: k });
    }
  });
  return p;
}

function getAt(o: unknown, path: (string | number)[]): unknown {
  let v: unknown = o;
  for (const k of path) v = v && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

/** Reads a YAML or JSON problem file; errors name the file, line and field. */
export function loadProblem(file: string): Problem {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UserError(`${file}: cannot read problem file`);
  }
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new ConfigError({ source: file, line: lc.linePos(e.pos[0]).line, expected: 'valid YAML/JSON', got: e.message.split('\n')[0] });
  }
  const lineOf = (path: (string | number)[]) => {
    for (let n = path.length; n > 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node && node.range) return lc.linePos(node.range[0]).line;
    }
    return undefined;
  };
  return parseProblem(doc.toJS(), file, lineOf);
}
