import type { TraceRequest } from '../types.ts';
import { LineReader, type LineReaderOptions } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { MAX_TRACE_TOKENS, TOKENS_EXPECTED, emptyTrace, isBlank, outOfOrder } from '../fields.ts';
import type { TraceStats } from './reader.ts';

/**
 * Mooncake JSONL: one object per line, `{"timestamp": ms, "input_length": n, "output_length": n,
 * "hash_ids": [...]}`. Arrival = (timestamp − first timestamp) / 1000 s. `hash_ids` (prefix-cache block
 * hashes) and any other keys are ignored: TraceRequest has no field for them yet.
 */
export function* readMooncake(path: string, opts: LineReaderOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new LineReader(path, opts);
  try {
    let t0 = NaN;
    let prev = -Infinity;
    let id = 0;
    for (let line = lr.next(); line !== undefined; line = lr.next()) {
      if (isBlank(line)) continue;
      const o = parseObject(line, path, lr.lineNo);
      const t = o['timestamp'];
      if (typeof t !== 'number' || !Number.isFinite(t)) {
        throw new ConfigError({ source: path, line: lr.lineNo, path: 'timestamp', expected: 'a number of milliseconds', got: t });
      }
      if (t < prev) throw outOfOrder(path, lr.lineNo, 'timestamp', t);
      if (t0 !== t0) t0 = t;
      prev = t;
      const inputTokens = jsonTokens(o, 'input_length', path, lr.lineNo);
      const outputTokens = jsonTokens(o, 'output_length', path, lr.lineNo);
      stats.rows++;
      yield { id: id++, arrivalS: (t - t0) / 1000, inputTokens, outputTokens };
    }
    if (id === 0) throw emptyTrace(path);
  } finally {
    lr.close();
  }
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
  return o as Record<string, unknown>;
}

export function jsonTokens(o: Record<string, unknown>, key: string, source: string, line: number): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_TRACE_TOKENS) {
    throw new ConfigError({ source, line, path: key, expected: TOKENS_EXPECTED, got: v });
  }
  return v;
}
