import { ConfigError, UserError } from '../util/errors.ts';
import { readTextFile } from '../util/read-file.ts';
import { MAX_SERIES_VALUE } from './base.ts';

/** A plain `timestamp_s,value` series: regular step, oldest first. */
export interface SeriesData {
  timestampsS: number[];
  values: number[];
  stepS: number;
  /** True where --impute filled a missing grid point (not an observation). */
  imputed: boolean[];
}

/**
 * How to treat missing steps: 'error' (default) rejects a gap naming the line; 'linear' fills the missing
 * points by linear interpolation between its neighbours; 'zero' fills them with 0 (for count series where
 * an absent row means no arrivals), at most one filled point per data row. The step is the most common spacing;
 * a row off its grid, NaN, negative, unsorted, duplicate or with |timestamp| past MAX_SERIES_TIMESTAMP_S is always
 * an error.
 */
export type Imputation = 'error' | 'linear' | 'zero';
export const IMPUTATIONS: readonly Imputation[] = ['error', 'linear', 'zero'];

/**
 * The largest |timestamp_s| a series may have: 2^53 − 1 s (about 285 million years; epoch seconds are ~1.8e9).
 * Past it doubles are more than a second apart, so a step grid, a gap count and the forecast's own timestamps are
 * rounding noise (a row at 1e300 was told it was "off the 60 s grid" or that 1.7e298 steps were missing).
 */
export const MAX_SERIES_TIMESTAMP_S = Number.MAX_SAFE_INTEGER;

/** A series file's text (read once: a pipe cannot be read again), or a UserError naming the file. */
export function readSeriesText(path: string): string {
  try {
    return readTextFile(path);
  } catch (e) {
    throw new UserError(`${path}: cannot read series file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

export function parseSeriesCsv(text: string, source: string, impute: Imputation = 'error'): SeriesData {
  const lines = text.split(/\r?\n/);
  const ts: number[] = [];
  const vs: number[] = [];
  const lineOf: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const cells = raw.split(',');
    const line = i + 1;
    // A first row that does not start like a number is the header, unless it is a non-finite number (NaN, Infinity),
    // which is a bad data row and must fail naming its line, not vanish as a header.
    const first = cells[0]!.trim();
    if (ts.length === 0 && lineOf.length === 0 && !/^[-+\d.]/.test(first) && !/^(nan|infinity|inf)$/i.test(first)) {
      if (cells.length !== 2 || !namesTime(cells[0]!, true) || namesTime(cells[1]!, false)) {
        throw new ConfigError({ source, line, path: 'header', expected: '"timestamp_s,value" (the time column first)', got: raw });
      }
      lineOf.push(-1); // header seen
      continue;
    }
    if (cells.length !== 2) throw new ConfigError({ source, line, expected: '2 columns "timestamp_s,value"', got: raw });
    const t = num(cells[0]!);
    const v = num(cells[1]!);
    if (!Number.isFinite(t)) throw new ConfigError({ source, line, path: 'timestamp_s', expected: 'a finite number of seconds', got: cells[0]!.trim() });
    if (Math.abs(t) > MAX_SERIES_TIMESTAMP_S) {
      throw new ConfigError({ source, line, path: 'timestamp_s', expected: `|t| ≤ ${MAX_SERIES_TIMESTAMP_S} s (timestamp out of range: past 2^53 − 1 consecutive doubles are more than 1 s apart, so no step grid holds; write times relative to the series start)`, got: cells[0]!.trim() });
    }
    if (!Number.isFinite(v)) throw new ConfigError({ source, line, path: 'value', expected: 'a finite number', got: cells[1]!.trim() });
    if (v < 0) throw new ConfigError({ source, line, path: 'value', expected: 'a value ≥ 0', got: v });
    if (v > MAX_SERIES_VALUE) throw new ConfigError({ source, line, path: 'value', expected: `a value ≤ ${MAX_SERIES_VALUE} (squares of larger values overflow; rescale the series)`, got: v });
    if (ts.length > 0 && t <= ts[ts.length - 1]!) {
      throw new ConfigError({ source, line, path: 'timestamp_s', expected: `a timestamp after ${ts[ts.length - 1]} (rows must be sorted, no duplicates)`, got: t });
    }
    ts.push(t);
    vs.push(v);
    lineOf.push(line);
  }
  if (ts.length < 2) throw new UserError(`${source}: expected at least 2 data rows "timestamp_s,value", got ${ts.length}`);
  const rows = lineOf.filter((l) => l >= 0);
  const step = inferStep(ts);
  const origin = gridOrigin(ts, step);
  const idx = ts.map((t, i) => {
    const k = (t - origin) / step;
    const whole = Math.round(k);
    if (Math.abs(k - whole) > GRID_TOLERANCE) {
      throw new ConfigError({
        source,
        line: rows[i],
        path: 'timestamp_s',
        expected: `a time on the ${step} s grid through ${origin} (the step is the most common spacing; nearest ${origin + Math.floor(k) * step} or ${origin + Math.ceil(k) * step})`,
        got: t,
      });
    }
    return whole;
  });
  checkGaps(ts, idx, rows, step, source, impute);
  return fill(ts, vs, idx, step, impute);
}

/**
 * Whether a header cell names a time column (`timestamp_s`, `time`, `date`, `epoch`, `ts`…): the header is the one
 * place a file says which column is which, and swapped columns otherwise forecast the timestamps as values. `loose`
 * also counts bare units (`t`, `s`, `sec`), which name a value column too (`requests_per_s`).
 */
function namesTime(cell: string, loose: boolean): boolean {
  const words = cell.trim().replace(/^\uFEFF/, '').toLowerCase().split(/[^a-z]+/).filter(Boolean);
  return words.some((w) => /time|date|epoch/.test(w) || w === 'ts' || (loose && ['t', 's', 'sec', 'secs', 'second', 'seconds'].includes(w)));
}

/** Most common spacing between consecutive rows (ties: the smaller), so one stray row cannot change the step. */
function inferStep(ts: readonly number[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < ts.length; i++) gaps.push(ts[i]! - ts[i - 1]!);
  gaps.sort((a, b) => a - b);
  const eps = timeEps(ts);
  let best = gaps[0]!;
  let bestN = 0;
  for (let i = 0; i < gaps.length; ) {
    let j = i;
    while (j < gaps.length && gaps[j]! - gaps[i]! <= 1e-6 * gaps[i]! + 2 * eps) j++;
    if (j - i > bestN) [best, bestN] = [gaps[(i + j - 1) >> 1]!, j - i];
    i = j;
  }
  // A difference of two parsed times is off by up to ~eps (0.1 s at epoch times reads 0.10000002): round it
  // to the decimal that rounding error cannot reach, so the grid does not drift over a long series.
  const quantum = Math.min(10 ** Math.ceil(Math.log10(4 * eps)), 10 ** Math.floor(Math.log10(best * 1e-3)));
  return Number((Math.round(best / quantum) * quantum).toPrecision(15));
}

/** A timestamp on the grid most rows share (the first row, unless that row is the stray one). */
function gridOrigin(ts: readonly number[], step: number): number {
  const count = new Map<number, { n: number; t: number }>();
  let best = { n: 0, t: ts[0]! };
  for (const t of ts) {
    const k = (t - ts[0]!) / step;
    const phase = Math.round((k - Math.floor(k)) * 1e4) % 1e4;
    const c = count.get(phase) ?? { n: 0, t };
    c.n++;
    count.set(phase, c);
    if (c.n > best.n) best = c;
  }
  return best.t;
}

/** Rounding error of a parsed timestamp of this series' magnitude, in seconds. */
function timeEps(ts: readonly number[]): number {
  return 4 * Number.EPSILON * Math.max(Math.abs(ts[0]!), Math.abs(ts[ts.length - 1]!), 1);
}

/** How far from a whole number of steps a row may be, in steps (1e-4: 6 ms on a 60 s step). */
const GRID_TOLERANCE = 1e-4;

/** Filling gaps may add at most one point per data row: beyond that the series is more guess than data. */
function checkGaps(ts: readonly number[], idx: readonly number[], rows: readonly number[], step: number, source: string, impute: Imputation): void {
  let total = 0;
  let worst = 0; // row after the widest gap
  let widest = 0;
  for (let i = 1; i < ts.length; i++) {
    const missing = idx[i]! - idx[i - 1]! - 1;
    if (missing < 0) {
      throw new ConfigError({ source, line: rows[i], path: 'timestamp_s', expected: `a timestamp a whole ${step} s step after ${ts[i - 1]}`, got: ts[i]! });
    }
    if (missing === 0) continue;
    if (impute === 'error') {
      throw new ConfigError({
        source,
        line: rows[i],
        path: 'timestamp_s',
        expected: `${ts[i - 1]! + step} (the next ${step} s step; ${missing} missing, use --impute linear|zero to fill gaps)`,
        got: ts[i]!,
      });
    }
    total += missing;
    if (missing > widest) [worst, widest] = [i, missing];
  }
  if (total > ts.length) {
    throw new ConfigError({
      source,
      line: rows[worst],
      path: 'timestamp_s',
      expected: `at most ${ts.length} imputed points in all (one per data row), but filling the ${step} s grid needs ${total}, ${widest} of them in the gap after ${ts[worst - 1]}; check that timestamp or write the missing rows`,
      got: ts[worst]!,
    });
  }
}

function fill(ts: readonly number[], vs: readonly number[], idx: readonly number[], step: number, impute: Imputation): SeriesData {
  const out: SeriesData = { timestampsS: [ts[0]!], values: [vs[0]!], stepS: step, imputed: [false] };
  for (let i = 1; i < ts.length; i++) {
    const whole = idx[i]! - idx[i - 1]!;
    for (let j = 1; j < whole; j++) {
      out.timestampsS.push(ts[i - 1]! + j * step);
      out.values.push(impute === 'zero' ? 0 : vs[i - 1]! + ((vs[i]! - vs[i - 1]!) * j) / whole);
      out.imputed.push(true);
    }
    out.timestampsS.push(ts[i]!);
    out.values.push(vs[i]!);
    out.imputed.push(false);
  }
  return out;
}

function num(s: string): number {
  const t = s.trim();
  return t === '' ? NaN : Number(t);
}
