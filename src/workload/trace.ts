import { UserError } from '../util/errors.ts';
import { TRACE_FORMATS, type TraceFormat, type TraceRequest } from './types.ts';
import { LineReader } from './line-reader.ts';
import { headerNames } from './fields.ts';
import { newStats, type TraceOptions, type TraceReader, type TraceStats } from './readers/reader.ts';
import { readAzure } from './readers/azure.ts';
import { readBurstGpt } from './readers/burstgpt.ts';
import { readMooncake } from './readers/mooncake.ts';
import { readBailian } from './readers/bailian.ts';
import { readVidur } from './readers/vidur.ts';
import { readApex, readLlmServingSim } from './readers/simulator-jsonl.ts';
import { readSplitwise } from './readers/splitwise.ts';
import { readBlisTrace } from './readers/blis-trace.ts';
import { readCanonicalCsv, readCanonicalJsonl } from './readers/canonical.ts';

export const readers = {
  azure: readAzure,
  burstgpt: readBurstGpt,
  mooncake: readMooncake,
  bailian: readBailian,
  vidur: readVidur,
  llmservingsim: readLlmServingSim,
  apex: readApex,
  splitwise: readSplitwise,
  blis: readBlisTrace,
  csv: readCanonicalCsv,
  jsonl: readCanonicalJsonl,
} satisfies Record<TraceFormat, TraceReader>;

export type { TraceOptions };

/**
 * A trace file as a re-iterable RequestSource: each `for…of` opens the file again and streams it (ids 0..,
 * arrivals from 0 except the canonical formats, which keep their times). `stats` counts the latest pass
 * (so far, if it is still running).
 */
export interface TraceSource extends Iterable<TraceRequest> {
  readonly path: string;
  readonly format: TraceFormat;
  readonly stats: TraceStats;
}

/**
 * Opens a trace. Checks now that the file exists, the header fits the format and the first row is valid
 * (so a wrong path or format fails before a simulation starts); later rows are checked as they stream.
 * An iterator that is dropped before its end keeps its file open: end it with `return()` (for…of does).
 */
export function openTrace(path: string, format: TraceFormat, opts: TraceOptions = {}): TraceSource {
  const read: TraceReader | undefined = (readers as Record<string, TraceReader>)[format];
  if (read === undefined) throw new UserError(`unknown trace format '${String(format)}'; valid: ${TRACE_FORMATS.join(', ')}`);
  const source: TraceSource = {
    path,
    format,
    stats: newStats(),
    [Symbol.iterator]() {
      const stats = source.stats;
      stats.rows = 0;
      stats.skipped = {};
      return read(path, opts, stats);
    },
  };
  const first = source[Symbol.iterator]();
  first.next();
  first.return?.();
  source.stats.rows = 0;
  source.stats.skipped = {};
  return source;
}

/**
 * Guesses a trace's format from its first non-blank line: a header for the CSV formats, the keys of the
 * first object for JSONL. Throws a UserError when nothing fits.
 */
export function detectFormat(path: string): TraceFormat {
  const lr = new LineReader(path, { chunkBytes: 64 * 1024 });
  let first: string | undefined;
  let firstLineNo = 0;
  try {
    do first = lr.next();
    while (first !== undefined && first.trim() === '');
    firstLineNo = lr.lineNo;
  } finally {
    lr.close();
  }
  if (first === undefined) throw new UserError(`${path}: the trace is empty`);
  const line = first.trim();
  if (line.startsWith('{')) {
    let keys: string[] = [];
    try {
      keys = Object.keys(JSON.parse(line) as object);
    } catch {
      throw new UserError(`${path}:${firstLineNo}: cannot tell the trace format: the line starts with '{' but is not JSON`);
    }
    // Qwen-Bailian has Mooncake's keys plus chat ones, and its timestamps are seconds, Mooncake's milliseconds.
    if (keys.includes('input_length') && keys.includes('timestamp')) return keys.includes('chat_id') || keys.includes('turn') ? 'bailian' : 'mooncake';
    if (keys.includes('arrival_time_ns') && keys.includes('input_toks')) return 'llmservingsim';
    if (keys.includes('StartTimeOffset') && keys.includes('ContextTokens')) return 'apex';
    return 'jsonl';
  }
  const names = headerNames(line);
  if (names[0] === 'TIMESTAMP' && names.includes('ContextTokens')) return 'azure';
  if (names.includes('Request tokens') && names.includes('Response tokens')) return 'burstgpt';
  if (names.includes('arrival_timestamp') && names.includes('prompt_size')) return 'splitwise';
  if (names.includes('num_prefill_tokens') && names.includes('num_decode_tokens')) return 'vidur';
  // BLIS TraceV2's data CSV (its YAML header is a separate file).
  if (names.includes('arrival_time_us') && names.includes('request_id') && names.includes('input_tokens') && names.includes('output_tokens')) return 'blis';
  if (names.some((n) => n === 'arrival_s' || n === 'arrivalS')) return 'csv';
  throw new UserError(
    `${path}: cannot tell the trace format from its first line ${JSON.stringify(line.slice(0, 80))}; pass one of ${TRACE_FORMATS.join(', ')}`,
  );
}
