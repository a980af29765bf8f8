import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, invariant } from '../util/errors.ts';
import { readHeadedCsv } from '../util/csv.ts';
import { parseDecimal } from '../util/decimal.ts';
import type { BatchShape, DecodeCoeffs, PerfModel } from './types.ts';

/** One measured grid point of a SplitwiseSim-format profile (times converted to seconds). */
export interface ProfileRow {
  model: string;
  hardware: string;
  tp: number;
  promptSize: number;
  batchSize: number;
  tokenSize: number;
  promptTimeS: number;
  tokenTimeS: number;
  /** Undefined when the file has no e2e_time column. */
  e2eTimeS: number | undefined;
  /** 1-based line in the file, for messages. */
  line: number;
}

export interface ProfileTable {
  source: string;
  rows: readonly ProfileRow[];
}

export interface ProfileKey {
  model: string;
  hardware: string;
  tp: number;
}

/**
 * Largest value a cell of a measurement table (profile, measured steps, Vidur) may hold: no batch, token count,
 * layer count or time in ms of a measurement comes near it (1e300 was read as a size, and a fit ran on it).
 */
export const MAX_MEASURED_CELL = 1e9;
/** Largest tensor-parallel degree a profile row may give (1e300 was taken, and pushed decode MAPE to 183 %). */
const MAX_TP = 1024;

const REQUIRED = ['model', 'hardware', 'prompt_size', 'batch_size', 'token_size', 'prompt_time', 'token_time', 'tensor_parallel'] as const;

/**
 * Parses the CSV format of SplitwiseSim's `perf_model.csv` (columns `model, hardware, prompt_size, batch_size,
 * token_size, …, prompt_time, token_time, e2e_time, tensor_parallel`, times in ms; column order free, extra
 * columns ignored). Walks the text line by line; errors name the line and column.
 */
export function parseProfileCsv(text: string, source: string): ProfileTable {
  const { col, rows: lines } = readHeadedCsv(text, source, REQUIRED);
  const rows = lines.map(({ line, cells }): ProfileRow => {
    const num = (name: string, check: (v: number) => boolean, what: string): number => {
      const s = cells[col.get(name)!]!;
      const v = parseDecimal(s);
      if (!Number.isFinite(v) || v > MAX_MEASURED_CELL || !check(v)) {
        throw new ConfigError({ source, line, path: name, expected: what, got: s });
      }
      return v;
    };
    const posInt = (v: number): boolean => Number.isInteger(v) && v > 0;
    const tpDegree = (v: number): boolean => posInt(v) && v <= MAX_TP;
    const str = (name: string): string => {
      const s = cells[col.get(name)!]!;
      if (s === '') throw new ConfigError({ source, line, path: name, expected: 'a non-empty name', got: s });
      return s;
    };
    return {
      model: str('model'),
      hardware: str('hardware'),
      tp: num('tensor_parallel', tpDegree, `a positive integer ≤ ${MAX_TP}`),
      promptSize: num('prompt_size', posInt, 'a positive integer'),
      batchSize: num('batch_size', posInt, 'a positive integer'),
      tokenSize: num('token_size', posInt, 'a positive integer'),
      promptTimeS: num('prompt_time', (v) => v > 0, 'a time in ms > 0') / 1000,
      tokenTimeS: num('token_time', (v) => v > 0, 'a time in ms > 0') / 1000,
      e2eTimeS: col.has('e2e_time') ? num('e2e_time', (v) => v > 0, 'a time in ms > 0') / 1000 : undefined,
      line,
    };
  });
  return { source, rows };
}

const cache = new Map<string, ProfileTable>();

/** Reads and parses a profile CSV once per absolute path (later calls share the parsed table). */
export function loadProfileTable(path: string): ProfileTable {
  const abs = resolve(path);
  const hit = cache.get(abs);
  if (hit) return hit;
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    throw new ConfigError({ source: path, expected: 'a readable profile CSV', got: (e as Error).message });
  }
  const table = parseProfileCsv(text, path);
  cache.set(abs, table);
  return table;
}

/** The keys (model, hardware, tp) a table has, sorted, as `llama2-70b/h100-80gb/tp8`. */
export function profileKeys(table: ProfileTable): string[] {
  return [...new Set(table.rows.map(keyString))].sort();
}

export function keyString(k: ProfileKey): string {
  return `${k.model}/${k.hardware}/tp${k.tp}`;
}

/** Rows of one key; a ConfigError listing the table's keys when there are none. */
export function selectRows(table: ProfileTable, key: ProfileKey): ProfileRow[] {
  const rows = table.rows.filter((r) => r.model === key.model && r.hardware === key.hardware && r.tp === key.tp);
  if (rows.length === 0) {
    const err = new ConfigError({ source: table.source, path: 'perf', expected: `one of ${profileKeys(table).join(', ')}`, got: keyString(key) });
    err.message = `${table.source} has no rows for ${keyString(key)}; it has ${profileKeys(table).join(', ')}`;
    throw err;
  }
  return rows;
}

/**
 * y(x) through sorted points, linear between them and extended linearly from the first and last segments
 * (scipy `interp1d(..., fill_value="extrapolate")`, which SplitwiseSim uses). One point ⇒ constant.
 */
export class PiecewiseLinear {
  constructor(
    readonly xs: readonly number[],
    readonly ys: readonly number[],
  ) {
    invariant(xs.length === ys.length && xs.length > 0, 'PiecewiseLinear needs matching, non-empty xs and ys');
    for (let i = 1; i < xs.length; i++) invariant(xs[i]! > xs[i - 1]!, 'PiecewiseLinear xs strictly increasing');
  }

  at(x: number): number {
    const { xs, ys } = this;
    const n = xs.length;
    if (n === 1) return ys[0]!;
    // Segment index: first segment below xs[1], last above xs[n-2]; binary search in between.
    let lo = 0;
    let hi = n - 1;
    if (x <= xs[1]!) hi = 1;
    else if (x >= xs[n - 2]!) lo = n - 2;
    else {
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (xs[mid]! <= x) lo = mid;
        else hi = mid;
      }
    }
    lo = hi - 1;
    const t = (x - xs[lo]!) / (xs[hi]! - xs[lo]!);
    return ys[lo]! + t * (ys[hi]! - ys[lo]!);
  }
}

/** Median with the even case averaged (pandas `median`). */
export function median(values: readonly number[]): number {
  invariant(values.length > 0, 'median of nothing');
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * SplitwiseSim's two curves for one key: ALL rows grouped by x = prompt_size × batch_size (token_size pooled),
 * the median prompt_time and token_time per x, interpolated linearly in x.
 */
export function splitwiseCurves(rows: readonly ProfileRow[]): { prompt: PiecewiseLinear; token: PiecewiseLinear } {
  const groups = new Map<number, ProfileRow[]>();
  for (const r of rows) {
    const x = r.promptSize * r.batchSize;
    const g = groups.get(x);
    if (g) g.push(r);
    else groups.set(x, [r]);
  }
  const xs = [...groups.keys()].sort((a, b) => a - b);
  const prompt = xs.map((x) => median(groups.get(x)!.map((r) => r.promptTimeS)));
  const token = xs.map((x) => median(groups.get(x)!.map((r) => r.tokenTimeS)));
  return { prompt: new PiecewiseLinear(xs, prompt), token: new PiecewiseLinear(xs, token) };
}

// Extrapolation far below a falling first segment could reach zero or less; no bundled table gets near it.
const MIN_STEP_S = 1e-6;

/**
 * SplitwiseSim's step rules over a profile (its `get_duration`): decode-only batch of k ⇒ token curve at x = k
 * (context length ignored, so perContextTokenS = 0); prefill-only ⇒ prompt curve at Σ prompt tokens; mixed ⇒
 * 1.1 × prompt curve at Σ prompt tokens + number of decodes.
 */
export function profilePerfModel(table: ProfileTable, key: ProfileKey): PerfModel {
  const { prompt, token } = splitwiseCurves(selectRows(table, key));
  return {
    name: `profile(${keyString(key)})`,
    stepTimeS(b: BatchShape): number {
      if (b.prefillTokens === 0) return Math.max(MIN_STEP_S, token.at(b.decodeSeqs));
      if (b.decodeSeqs === 0) return Math.max(MIN_STEP_S, prompt.at(b.prefillTokens));
      return Math.max(MIN_STEP_S, 1.1 * prompt.at(b.prefillTokens + b.decodeSeqs));
    },
    decodeStepCoeffs(k: number): DecodeCoeffs {
      return { baseS: Math.max(MIN_STEP_S, token.at(k)), perContextTokenS: 0 };
    },
  };
}
