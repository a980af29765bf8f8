import { readFileSync } from 'node:fs';
import { ConfigError, UserError } from '../util/errors.ts';

/** A plain `timestamp_s,value` series: regular step, oldest first. */
export interface SeriesData {
  timestampsS: number[];
  values: number[];
  stepS: number;
}

/**
 * How to treat missing steps: 'error' (default) rejects a gap naming the line; 'linear' fills the missing
 * points by linear interpolation between its neighbours; 'zero' fills them with 0 (for count series where
 * an absent row means no arrivals). Anything else wrong (NaN, negative, unsorted, duplicate, uneven step
 * that is not a whole multiple) is always an error.
 */
export type Imputation = 'error' | 'linear' | 'zero';
export const IMPUTATIONS: readonly Imputation[] = ['error', 'linear', 'zero'];

export function readSeriesCsv(path: string, impute: Imputation = 'error'): SeriesData {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read series file (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  return parseSeriesCsv(text, path, impute);
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
      if (cells.length !== 2) throw new ConfigError({ source, line, expected: 'header "timestamp_s,value"', got: raw });
      lineOf.push(-1); // header seen
      continue;
    }
    if (cells.length !== 2) throw new ConfigError({ source, line, expected: '2 columns "timestamp_s,value"', got: raw });
    const t = num(cells[0]!);
    const v = num(cells[1]!);
    if (!Number.isFinite(t)) throw new ConfigError({ source, line, path: 'timestamp_s', expected: 'a finite number of seconds', got: cells[0]!.trim() });
    if (!Number.isFinite(v)) throw new ConfigError({ source, line, path: 'value', expected: 'a finite number', got: cells[1]!.trim() });
    if (v < 0) throw new ConfigError({ source, line, path: 'value', expected: 'a value ≥ 0', got: v });
    if (ts.length > 0 && t <= ts[ts.length - 1]!) {
      throw new ConfigError({ source, line, path: 'timestamp_s', expected: `a timestamp after ${ts[ts.length - 1]} (rows must be sorted, no duplicates)`, got: t });
    }
    ts.push(t);
    vs.push(v);
    lineOf.push(line);
  }
  if (ts.length < 2) throw new UserError(`${source}: expected at least 2 data rows "timestamp_s,value", got ${ts.length}`);
  const rows = lineOf.filter((l) => l >= 0);
  // The step is the smallest spacing; every spacing must be a whole multiple of it (a gap) or equal.
  let step = Infinity;
  for (let i = 1; i < ts.length; i++) step = Math.min(step, ts[i]! - ts[i - 1]!);
  const outT: number[] = [ts[0]!];
  const outV: number[] = [vs[0]!];
  for (let i = 1; i < ts.length; i++) {
    const k = (ts[i]! - ts[i - 1]!) / step;
    const whole = Math.round(k);
    if (Math.abs(k - whole) > 1e-6 * whole) {
      throw new ConfigError({ source, line: rows[i], path: 'timestamp_s', expected: `a multiple of the ${step} s step after ${ts[i - 1]}`, got: ts[i]! });
    }
    if (whole > 1) {
      if (impute === 'error') {
        throw new ConfigError({
          source,
          line: rows[i],
          path: 'timestamp_s',
          expected: `${ts[i - 1]! + step} (the next ${step} s step; ${whole - 1} missing, use --impute linear|zero to fill gaps)`,
          got: ts[i]!,
        });
      }
      for (let j = 1; j < whole; j++) {
        outT.push(ts[i - 1]! + j * step);
        outV.push(impute === 'zero' ? 0 : vs[i - 1]! + ((vs[i]! - vs[i - 1]!) * j) / whole);
      }
    }
    outT.push(ts[i]!);
    outV.push(vs[i]!);
  }
  return { timestampsS: outT, values: outV, stepS: step };
}

function num(s: string): number {
  const t = s.trim();
  return t === '' ? NaN : Number(t);
}
