import { ConfigError, UserError } from '../util/errors.ts';
import type { LineReader } from './line-reader.ts';
import { DECIMAL } from '../util/decimal.ts';

/** Shared row-parsing helpers for the trace readers: every bad value becomes a ConfigError with file and line. */

/** Largest token count a trace row may give: far above any context length, and within the 32-bit integers the request log stores. */
export const MAX_TRACE_TOKENS = 1_000_000_000;
export const TOKENS_EXPECTED = 'an integer ≥ 1 and ≤ 1e9';
/** The prompt of a row skipped for 0 output tokens (a failed request): 0 is allowed there, junk is not. */
export const SKIPPED_INPUT_EXPECTED = 'an integer ≥ 0 and ≤ 1e9 (0 only in a row with 0 output tokens, skipped)';

/**
 * A bad cell. `got` is the number when the text is one written plainly (so "-5" prints as -5), else the raw
 * text (so "0.0", "00" or "1e3" print as written, not as the number they would round to).
 */
export function badValue(source: string, line: number, path: string, expected: string, raw: unknown): ConfigError {
  let got = raw;
  if (typeof raw === 'string') {
    const t = raw.trim();
    got = DECIMAL.test(t) && String(Number(t)) === t ? Number(t) : raw;
  }
  return new ConfigError({ source, line, path, expected, got });
}

/**
 * Parses s[start, end) as a token count: plain decimal digits (leading zeros allowed, at most 15), value in
 * [0, MAX_TRACE_TOKENS]. Returns -1 when the text is anything else; the caller then builds the error (keeps
 * the hot path free of allocation). Callers that need ≥ 1 check the value themselves.
 */
export function parseTokenCount(s: string, start: number, end: number): number {
  const len = end - start;
  if (len <= 0 || len > 15) return -1;
  let v = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v <= MAX_TRACE_TOKENS ? v : -1;
}

/** A token count cell (trimmed), ≥ 1, or a ConfigError. */
export function tokenCell(raw: string, source: string, line: number, column: string): number {
  const t = raw.trim();
  const v = parseTokenCount(t, 0, t.length);
  if (v < 1) throw badValue(source, line, column, TOKENS_EXPECTED, raw);
  return v;
}

/**
 * An output token count cell that may be 0 (`0`, `00`, ` 0 `): the Azure and BurstGPT readers skip those rows
 * and count them. Anything else that is not a plain integer (`0.0`, `-1`) is a ConfigError saying `expected`.
 */
export function tokenCellOrZero(raw: string, source: string, line: number, column: string, expected: string): number {
  const t = raw.trim();
  const v = parseTokenCount(t, 0, t.length);
  if (v < 0) throw badValue(source, line, column, expected, raw);
  return v;
}

/**
 * The latest arrival a trace may give, in seconds (after its first row; the canonical formats, which keep their
 * times, after 0): 1e10 s, about 317 years, which holds epoch seconds. Past it a double's spacing grows toward
 * the latencies the simulator measures (at 1e15 s it is 0.125 s: a request there "completed" with TTFT 0 and
 * the fleet billed for 5.6e11 instance-hours), so such a row is an error, not a run.
 */
export const MAX_TRACE_ARRIVAL_S = 1e10;

/** A row whose arrival is past MAX_TRACE_ARRIVAL_S; `got` is the cell as written, `from` what the time counts from. */
export function arrivalTooLate(source: string, line: number, column: string, got: unknown, from: 'first row' | 'zero'): ConfigError {
  return new ConfigError({
    source,
    line,
    path: column,
    expected: `an arrival at most 1e10 s (about 317 years) after ${from === 'zero' ? '0' : "the trace's first row"}; later times are out of range (a double there is too coarse for the latencies simulated)`,
    got,
  });
}

/** A finite number cell in decimal notation (trimmed, not empty), or a ConfigError. */
export function numberCell(raw: string, source: string, line: number, column: string, expected: string): number {
  const t = raw.trim();
  const v = DECIMAL.test(t) ? Number(t) : NaN;
  if (!Number.isFinite(v)) throw badValue(source, line, column, expected, raw);
  return v;
}

/** The cells of one data row, which must have exactly `width` fields (else a ConfigError naming the line). */
export function rowCells(line: string, width: number, path: string, lineNo: number): string[] {
  const cells = splitCsvLine(line);
  if (cells === undefined || cells.length !== width) throw badRow(path, lineNo, width, line);
  return cells;
}

/** The error for a data row that does not split into `width` fields: says when its quoting is what is wrong. */
function badRow(source: string, line: number, width: number, text: string): ConfigError {
  const split = splitQuoted(text);
  const quoting = typeof split === 'string' ? `, and ${split}` : '';
  return new ConfigError({ source, line, path: 'row', expected: `${width} comma-separated fields${quoting}`, got: text });
}

/**
 * Splits one CSV line. Fast path: no quote character ⇒ a plain split on ','. Otherwise RFC 4180 quoting
 * ("a,b" and "" for a quote inside quotes), with spaces or tabs allowed around a quoted cell (` "a" ` is a);
 * returns undefined for an unterminated quote or text after a closing quote. Unquoted cells keep their spaces.
 */
export function splitCsvLine(line: string): string[] | undefined {
  if (line.indexOf('"') < 0) return line.split(',');
  const r = splitQuoted(line);
  return typeof r === 'string' ? undefined : r;
}

/** `splitCsvLine`'s quoted path: the cells, or what the line lacks to be valid CSV. */
function splitQuoted(line: string): string[] | string {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let j = i;
    while (isSpace(line.charCodeAt(j))) j++;
    if (line.charCodeAt(j) === 34) {
      let cell = '';
      i = j + 1;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) return `a closing quote for the one at column ${j + 1} (a quoted cell cannot span lines)`;
        cell += line.slice(i, q);
        if (line.charCodeAt(q + 1) === 34) {
          cell += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      const q1 = i;
      while (isSpace(line.charCodeAt(i))) i++;
      out.push(cell);
      if (i >= line.length) return out;
      if (line.charCodeAt(i) !== 44) return `a comma right after the quoted cell that ends at column ${q1} (a quote inside a quoted cell is written "")`;
      i++;
    } else {
      const c = line.indexOf(',', i);
      if (c < 0) {
        out.push(line.slice(i));
        return out;
      }
      out.push(line.slice(i, c));
      i = c + 1;
    }
  }
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * A CSV header's column names: split like a data row (quoted names, spaces around them), each trimmed, a BOM
 * dropped. The one header normaliser of every CSV reader and of `detectFormat`, so they always agree.
 */
export function headerNames(line: string): string[] {
  const text = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
  return (splitCsvLine(text) ?? [text]).map((n) => n.trim());
}

/** True when a line holds nothing but whitespace; readers skip such lines. */
export function isBlank(line: string): boolean {
  return line.length === 0 || line.trim().length === 0;
}

/** The first non-blank line (a CSV header), or undefined when the file has none: blank lines before it are skipped too. */
export function headerLine(lr: LineReader): string | undefined {
  let line: string | undefined;
  do line = lr.next();
  while (line !== undefined && isBlank(line));
  return line;
}

/** "No requests", with the rows that were read but skipped (e.g. every row had 0 output tokens). */
export function emptyTrace(source: string, skipped: Readonly<Record<string, number>> = {}): UserError {
  const why = Object.entries(skipped).map(([reason, n]) => `${n} ${reason}`);
  return new UserError(`${source}: the trace has no requests${why.length > 0 ? ` (rows skipped: ${why.join('; ')})` : ''}`);
}

export function outOfOrder(source: string, line: number, column: string, got: unknown): ConfigError {
  return new ConfigError({
    source,
    line,
    path: column,
    expected: 'arrivals in non-decreasing order (not earlier than the previous row)',
    got,
  });
}

/**
 * Maps header names to column indexes. `required` names must be present; names in neither list are an error
 * when `allowUnknown` is false. Returns the index per name (-1 when an optional name is absent). `line` is the
 * header's line number (1 unless blank lines precede it).
 */
export function headerColumns(
  header: string[],
  source: string,
  required: readonly string[],
  optional: readonly string[],
  allowUnknown: boolean,
  line = 1,
): Map<string, number> {
  const cols = new Map<string, number>();
  const unknown: string[] = [];
  header.forEach((raw, i) => {
    const name = raw.trim();
    if (!required.includes(name) && !optional.includes(name)) {
      if (!allowUnknown) unknown.push(name);
      return;
    }
    if (cols.has(name)) {
      throw new ConfigError({ source, line, path: name, expected: 'each column named once', got: header.join(',') });
    }
    cols.set(name, i);
  });
  if (unknown.length > 0) {
    throw new ConfigError({
      source,
      line,
      path: unknown.join(', '),
      expected: `known column names (${[...required, ...optional].join(', ')})`,
      got: unknown.length === 1 ? unknown[0] : unknown,
    });
  }
  const missing = required.filter((n) => !cols.has(n));
  if (missing.length > 0) {
    throw new ConfigError({
      source,
      line,
      path: missing.join(', '),
      expected: `a header with column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
      got: header.join(','),
    });
  }
  for (const n of optional) if (!cols.has(n)) cols.set(n, -1);
  return cols;
}
