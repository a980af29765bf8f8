import { UserError } from '../util/errors.ts';
import type { TraceRequest } from '../workload/types.ts';

/** Fields a series can be keyed by; `type` is the workload-type label from a classifier (workload-types.ts). */
export const KEY_FIELDS = ['model', 'region', 'tier', 'app', 'type'] as const;
export type KeyField = (typeof KEY_FIELDS)[number];

/** One key's series on a regular grid: point i covers [startS + i·stepS, startS + (i+1)·stepS). */
export interface WorkloadSeries {
  key: string;
  startS: number;
  stepS: number;
  requestsPerS: number[];
  inputTokensPerS: number[];
  outputTokensPerS: number[];
}

export const SERIES_METRICS = ['requestsPerS', 'inputTokensPerS', 'outputTokensPerS'] as const;
export type SeriesMetric = (typeof SERIES_METRICS)[number];

/** '1m' → 60, '10m' → 600, '1h' → 3600, '30s' → 30, '600' → 600 (seconds). */
export function parseGranularity(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$/.exec(text);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
  const v = m ? Number(m[1]) * unit[(m[2] ?? 's') as keyof typeof unit] : NaN;
  if (!Number.isFinite(v) || v <= 0) {
    throw new UserError(`granularity: expected a duration like 1m, 10m, 1h or 60 (seconds), got ${JSON.stringify(text)}`);
  }
  return v;
}

export function parseKeyFields(text: string): KeyField[] {
  if (text.trim() === '') return [];
  const seen = new Set<string>();
  return text.split(',').map((f) => {
    const t = f.trim();
    if (!(KEY_FIELDS as readonly string[]).includes(t)) {
      throw new UserError(`key: unknown field ${JSON.stringify(t)}; valid: ${KEY_FIELDS.join(', ')}`);
    }
    // "model,model" split by one field twice: series keys like "model=a,model=a", every count the same.
    if (seen.has(t)) throw new UserError(`key: field ${JSON.stringify(t)} is given twice; expected distinct fields from ${KEY_FIELDS.join(', ')}`);
    seen.add(t);
    return t as KeyField;
  });
}

export interface BuildOptions {
  stepS: number;
  /** Fields the series are split by; [] gives one series with key 'all'. */
  keys?: KeyField[];
  /** Workload type of a request, required when `keys` holds 'type'. */
  typeOf?: (r: TraceRequest) => string;
  /** Grid origin; defaults to 0 (trace clocks start at the first arrival). */
  startS?: number;
  /** Grid end (exclusive); defaults to the end of the last arrival's bucket. All keys share one grid. */
  endS?: number;
}

/**
 * Buckets a request stream into per-key rate series. Streams once, holding only per-bucket sums, so a
 * multi-million-row trace costs memory per bucket, not per request. Empty buckets are 0 (no arrivals is a
 * real observation, not a gap). A key value that is absent reads '-'.
 */
/** Most points one series may have (each key holds three arrays of this length). */
const MAX_SERIES_POINTS = 10_000_000;

export function buildSeries(requests: Iterable<TraceRequest>, o: BuildOptions): WorkloadSeries[] {
  const keys = o.keys ?? [];
  if (keys.includes('type') && !o.typeOf) throw new Error('buildSeries: key "type" needs a typeOf classifier');
  const start = o.startS ?? 0;
  const sums = new Map<string, { req: number[]; inp: number[]; out: number[] }>();
  let last = -1;
  for (const r of requests) {
    if (r.arrivalS < start) throw new UserError(`request ${r.id}: arrival ${r.arrivalS} s is before the series start ${start} s`);
    const b = Math.floor((r.arrivalS - start) / o.stepS);
    if (o.endS !== undefined && r.arrivalS >= o.endS) continue;
    if (b >= MAX_SERIES_POINTS) {
      throw new UserError(`granularity ${o.stepS} s: request ${r.id} at ${r.arrivalS} s falls in bucket ${b}; a series has at most ${MAX_SERIES_POINTS.toLocaleString('en-US')} points (use a coarser granularity)`);
    }
    const key = keys.length === 0 ? 'all' : keys.map((k) => `${k}=${(k === 'type' ? o.typeOf!(r) : r[k]) ?? '-'}`).join(',');
    let s = sums.get(key);
    if (!s) sums.set(key, (s = { req: [], inp: [], out: [] }));
    while (s.req.length <= b) {
      s.req.push(0);
      s.inp.push(0);
      s.out.push(0);
    }
    s.req[b]!++;
    s.inp[b]! += r.inputTokens;
    s.out[b]! += r.outputTokens;
    if (b > last) last = b;
  }
  const n = o.endS !== undefined ? Math.ceil((o.endS - start) / o.stepS) : last + 1;
  const pad = (a: number[]) => {
    const out = a.slice(0, n);
    while (out.length < n) out.push(0);
    return out.map((v) => v / o.stepS);
  };
  return [...sums.keys()].sort().map((key) => {
    const s = sums.get(key)!;
    return { key, startS: start, stepS: o.stepS, requestsPerS: pad(s.req), inputTokensPerS: pad(s.inp), outputTokensPerS: pad(s.out) };
  });
}
