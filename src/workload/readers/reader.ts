import type { TraceRequest } from '../types.ts';
import type { LineReaderOptions } from '../line-reader.ts';

/** What one pass over a trace counted; reset at the start of each pass. */
export interface TraceStats {
  /** Requests yielded. */
  rows: number;
  /** Data rows read but not yielded (e.g. BurstGPT failures), by reason. */
  skipped: Record<string, number>;
}

export function newStats(): TraceStats {
  return { rows: 0, skipped: {} };
}

/**
 * One trace format: a generator over the file's requests in order, ids 0.., throwing ConfigError on a bad row
 * and UserError on an empty trace. It opens the file itself and closes it in `finally`.
 */
export type TraceReader = (path: string, opts: LineReaderOptions, stats: TraceStats) => Generator<TraceRequest, void, undefined>;
