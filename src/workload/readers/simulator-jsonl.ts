import { lengthJsonlReader } from './length-jsonl.ts';

/**
 * LLMServingSim's flat request JSONL: `{"input_toks": n, "output_toks": n, "arrival_time_ns": t}` (token-id
 * lists, when present, are ignored: no prefix cache). Arrival = (t − first t) / 1e9 s.
 */
export const readLlmServingSim = lengthJsonlReader({
  keys: { time: 'arrival_time_ns', input: 'input_toks', output: 'output_toks' },
  unitsPerSecond: 1e9,
  timestampExpected: 'a number of nanoseconds ≥ 0',
});

/** APEX+'s request JSONL: `{"StartTimeOffset": ns, "ContextTokens": n, "GeneratedTokens": n}`. */
export const readApex = lengthJsonlReader({
  keys: { time: 'StartTimeOffset', input: 'ContextTokens', output: 'GeneratedTokens' },
  unitsPerSecond: 1e9,
  timestampExpected: 'a number of nanoseconds ≥ 0',
});
