import type { TraceRequest } from '../types.ts';
import { LineReader } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { MAX_TRACE_ARRIVAL_S, arrivalTooLate, MAX_TRACE_TOKENS, SKIPPED_INPUT_EXPECTED, TOKENS_EXPECTED, emptyTrace, isBlank, outOfOrder } from '../fields.ts';
import { skipRow, type TraceOptions, type TraceReader, type TraceStats } from './reader.ts';

/** A JSONL trace of one object per request with an arrival time and two token counts (Mooncake, Qwen-Bailian, …). */
export interface LengthJsonlSpec {
  /** Keys of the arrival time, the prompt tokens and the output tokens. */
  keys: { time: string; input: string; output: string };
  /** Timestamp units per second (Mooncake: 1000, milliseconds); arrivals are divided by it, as the format reads. */
  unitsPerSecond: number;
  /** What a timestamp is, for errors ('a number of milliseconds'). */
  timestampExpected: string;
  /** Rows with output 0 are skipped and counted under this reason, whatever their input (0 included); else 0 is an error. */
  skipZeroOutput?: string;
  /** A key whose string value becomes the request's `app`. */
  app?: string;
  /** Tokens per block of the optional `hash_ids` list (the prompt's block hashes, for the prefix cache). */
  hashBlockTokens?: number;
}

export const MOONCAKE_KEYS = { time: 'timestamp', input: 'input_length', output: 'output_length' };

export function lengthJsonlReader(spec: LengthJsonlSpec): TraceReader {
  return function* read(path: string, opts: TraceOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
    const lr = new LineReader(path, opts);
    try {
      let t0 = NaN;
      let prev = -Infinity;
      let id = 0;
      for (let line = lr.next(); line !== undefined; line = lr.next()) {
        if (isBlank(line)) continue;
        const o = parseObject(line, path, lr.lineNo);
        const { time, input, output } = spec.keys;
        const t = o[time];
        if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) {
          throw new ConfigError({ source: path, line: lr.lineNo, path: time, expected: spec.timestampExpected, got: t });
        }
        if (t < prev) throw outOfOrder(path, lr.lineNo, time, t);
        if (t0 !== t0) t0 = t;
        prev = t;
        if ((t - t0) / spec.unitsPerSecond > MAX_TRACE_ARRIVAL_S) throw arrivalTooLate(path, lr.lineNo, time, t, 'first row');
        if (spec.skipZeroOutput !== undefined && o[output] === 0) {
          // No output (a failed request): the prompt may be 0 too, but must still be an integer.
          const v = o[input];
          if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TRACE_TOKENS) {
            throw new ConfigError({ source: path, line: lr.lineNo, path: input, expected: SKIPPED_INPUT_EXPECTED, got: v });
          }
          skipRow(stats, opts, spec.skipZeroOutput, (t - t0) / spec.unitsPerSecond);
          continue;
        }
        const inputTokens = jsonTokens(o, input, path, lr.lineNo);
        const outputTokens = jsonTokens(o, output, path, lr.lineNo);
        const req: TraceRequest = { id: id++, arrivalS: (t - t0) / spec.unitsPerSecond, inputTokens, outputTokens };
        if (spec.app !== undefined && o[spec.app] !== undefined) {
          const v = o[spec.app];
          if (typeof v !== 'string' || v === '') throw new ConfigError({ source: path, line: lr.lineNo, path: spec.app, expected: 'a non-empty string', got: v });
          req.app = v;
        }
        if (spec.hashBlockTokens !== undefined && o.hash_ids !== undefined) {
          const h = hashIds(o.hash_ids, path, lr.lineNo);
          if (h.length > 0) {
            req.prefixHashes = h;
            req.prefixBlockTokens = spec.hashBlockTokens;
          }
        }
        stats.rows++;
        yield req;
      }
      if (id === 0) throw emptyTrace(path, stats.skipped);
    } finally {
      lr.close();
    }
  };
}

/** A `hash_ids` value: a list of integers (the prompt's block hashes), or a ConfigError naming the line. */
export function hashIds(v: unknown, source: string, line: number): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) {
    throw new ConfigError({ source, line, path: 'hash_ids', expected: "a list of integers (the prompt's block hashes)", got: v });
  }
  return v as number[];
}

/** JSON.parse of one line that must be an object, or a ConfigError naming the line. */
export function parseObject(line: string, source: string, lineNo: number): Record<string, unknown> {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    throw new ConfigError({ source, line: lineNo, path: 'line', expected: 'a JSON object', got: line });
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new ConfigError({ source, line: lineNo, path: 'line', expected: 'a JSON object', got: line });
  }
  // JSON.parse keeps the last of two equal keys and drops the first without a word. Fast path: a line with no more
  // '":' than keys in its object repeats none; only otherwise (a repeat, a nested object, '":' inside a string) is
  // it scanned key by key. (A line written with spaces before its colons, '"a" : 1', is not checked.) Cost,
  // measured (session 22): a 1M-line canonical JSONL trace reads in 0.98–1.04 s instead of 0.87–0.89 s.
  if (countOf(line, '":') > Object.keys(o as object).length) {
    const dup = repeatedKey(line);
    if (dup !== undefined) throw new ConfigError({ source, line: lineNo, path: dup, expected: 'each key once in an object (JSON.parse would keep the last value and drop the first)', got: line });
  }
  return o as Record<string, unknown>;
}

function countOf(s: string, sub: string): number {
  let n = 0;
  for (let i = s.indexOf(sub); i >= 0; i = s.indexOf(sub, i + sub.length)) n++;
  return n;
}

/** The first key that appears twice in one object of a valid JSON text (as written, escapes kept), if any. */
export function repeatedKey(text: string): string | undefined {
  const objects: (Set<string> | null)[] = []; // null: an array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = objects[objects.length - 1];
      if (expectKey && top) {
        const key = text.slice(i + 1, j);
        if (top.has(key)) return key;
        top.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === '{') {
      objects.push(new Set());
      expectKey = true;
    } else if (c === '[') objects.push(null);
    else if (c === '}' || c === ']') objects.pop();
    else if (c === ',') expectKey = objects[objects.length - 1] != null;
  }
  return undefined;
}

export function jsonTokens(o: Record<string, unknown>, key: string, source: string, line: number): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_TRACE_TOKENS) {
    throw new ConfigError({ source, line, path: key, expected: TOKENS_EXPECTED, got: v });
  }
  return v;
}
