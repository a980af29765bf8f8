import type { TraceRequest } from '../types.ts';
import { LineReader } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { emptyTrace, isBlank, outOfOrder } from '../fields.ts';
import { jsonTokens, parseObject } from './mooncake.ts';
import { skipRow, type TraceOptions, type TraceStats } from './reader.ts';

/**
 * Alibaba's Qwen-Bailian usage traces (KVCache in the wild, ATC '25), JSONL:
 * `{"chat_id", "parent_chat_id", "timestamp": s, "input_length", "output_length", "type", "turn", "hash_ids"}`.
 * The same keys as Mooncake but the timestamp is in SECONDS (61.114), so `detectFormat` tells them apart by
 * the chat keys. Arrival = timestamp − first timestamp; `type` (text, search, image, file) → `app`. Chat
 * structure and `hash_ids` are not modelled (no prefix cache). A row with `output_length` 0 produced no output
 * and is skipped and counted, as Azure's are.
 */
export const BAILIAN_SKIP_NO_OUTPUT = 'output_length 0';

export function* readBailian(path: string, opts: TraceOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new LineReader(path, opts);
  try {
    let t0 = NaN;
    let prev = -Infinity;
    let id = 0;
    for (let line = lr.next(); line !== undefined; line = lr.next()) {
      if (isBlank(line)) continue;
      const o = parseObject(line, path, lr.lineNo);
      const t = o['timestamp'];
      if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) {
        throw new ConfigError({ source: path, line: lr.lineNo, path: 'timestamp', expected: 'a number of seconds ≥ 0', got: t });
      }
      if (t < prev) throw outOfOrder(path, lr.lineNo, 'timestamp', t);
      if (t0 !== t0) t0 = t;
      prev = t;
      const inputTokens = jsonTokens(o, 'input_length', path, lr.lineNo);
      const out = o['output_length'];
      if (out === 0) {
        skipRow(stats, opts, BAILIAN_SKIP_NO_OUTPUT, t - t0);
        continue;
      }
      const outputTokens = jsonTokens(o, 'output_length', path, lr.lineNo);
      const type = o['type'];
      if (type !== undefined && (typeof type !== 'string' || type === '')) {
        throw new ConfigError({ source: path, line: lr.lineNo, path: 'type', expected: 'a non-empty string (text, search, image, file)', got: type });
      }
      stats.rows++;
      const req: TraceRequest = { id: id++, arrivalS: t - t0, inputTokens, outputTokens };
      if (type !== undefined) req.app = type;
      yield req;
    }
    if (id === 0) throw emptyTrace(path);
  } finally {
    lr.close();
  }
}

