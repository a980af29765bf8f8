/** One request as a trace or generator gives it, before the simulator sees it. */
export interface TraceRequest {
  /** 0-based position in arrival order (after transforms); the simulator's request id. */
  id: number;
  /** Arrival time in seconds, relative to the trace's start (first arrival of the file = 0 unless the format is canonical). */
  arrivalS: number;
  inputTokens: number;
  outputTokens: number;
  model?: string;
  tier?: string;
  region?: string;
  app?: string;
  /** Absolute deadline in seconds on the same clock as arrivalS. */
  deadlineS?: number;
  /**
   * Hashes of the prompt's blocks of `prefixBlockTokens` tokens each (Mooncake's and Qwen-Bailian's `hash_ids`):
   * hash i stands for the prompt up to the end of block i, so equal leading hashes are a shared prefix. Read by the
   * engine's prefix cache (`engine.prefixCache`).
   */
  prefixHashes?: readonly number[];
  prefixBlockTokens?: number;
}

export const TRACE_FORMATS = ['azure', 'burstgpt', 'mooncake', 'bailian', 'llmservingsim', 'apex', 'splitwise', 'vidur', 'blis', 'csv', 'jsonl'] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];

/**
 * A workload is a pull-based stream in arrival order: the simulator takes the next request only when the
 * clock reaches it, so a 40 M-row trace never sits in memory.
 */
export type RequestSource = Iterable<TraceRequest>;
