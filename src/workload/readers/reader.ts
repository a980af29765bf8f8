import type { TraceRequest } from '../types.ts';
import type { LineReaderOptions } from '../line-reader.ts';

/** Options of one trace pass: read chunk size, and who else hears of skipped rows. */
export interface TraceOptions extends LineReaderOptions {
  /**
   * Called for every skipped row, in file order, with its reason and its arrival on the clock of the requests
   * (seconds from the file's first row). A workload uses it to count only the skipped rows its run replays
   * (`openWorkload`); `stats.skipped` itself counts every skipped row read.
   */
  onSkip?: (reason: string, arrivalS: number) => void;
}

/** Counts a skipped row in `stats` and tells `opts.onSkip`. */
export function skipRow(stats: TraceStats, opts: TraceOptions, reason: string, arrivalS: number): void {
  stats.skipped[reason] = (stats.skipped[reason] ?? 0) + 1;
  opts.onSkip?.(reason, arrivalS);
}

/** What one pass over a trace counted; reset at the start of each pass. */
export interface TraceStats {
  /** Requests yielded. */
  rows: number;
  /** Data rows read but not yielded (e.g. BurstGPT failures), by reason: every one this pass has read so far. */
  skipped: Record<string, number>;
}

export function newStats(): TraceStats {
  return { rows: 0, skipped: {} };
}

/**
 * One trace format: a generator over the file's requests in order, ids 0.., throwing ConfigError on a bad row
 * and UserError on an empty trace. It opens the file itself and closes it in `finally`.
 */
export type TraceReader = (path: string, opts: TraceOptions, stats: TraceStats) => Generator<TraceRequest, void, undefined>;
