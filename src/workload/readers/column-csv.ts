import type { TraceRequest } from '../types.ts';
import { LineReader } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { MAX_TRACE_ARRIVAL_S, arrivalTooLate, SKIPPED_INPUT_EXPECTED, emptyTrace, headerLine, headerColumns, isBlank, numberCell, outOfOrder, headerNames, tokenCell, tokenCellOrZero, rowCells } from '../fields.ts';
import { skipRow, type TraceOptions, type TraceReader, type TraceStats } from './reader.ts';

/** A CSV trace whose columns are found by name: arrival seconds, prompt and output tokens, optional labels. */
export interface ColumnCsvSpec {
  /** Arrival in seconds, re-based to the first row. */
  arrival: string;
  /** When the header has no arrival column, every request arrives at 0 (a length-only file); else it is required. */
  arrivalOptional?: boolean;
  /** Arrivals must be ≥ 0. */
  nonNegativeArrival?: boolean;
  input: string;
  output: string;
  /** Column whose non-empty cells become the request's `app`. */
  app?: string;
  /** A required column whose non-empty cells become the request's `model`. */
  model?: string;
  /**
   * Rows with output 0 are skipped and counted under `reason` (a failed request), whatever their input (0
   * included, as long as it is a plain integer); else 0 is an error. Input 0 with output ≥ 1 is always an error.
   */
  skipZeroOutput?: { reason: string; expected: string };
  /** Other columns the format names (not used); any further column is ignored too. */
  others: readonly string[];
}

export function columnCsvReader(spec: ColumnCsvSpec): TraceReader {
  const required = [...(spec.arrivalOptional ? [] : [spec.arrival]), ...(spec.model ? [spec.model] : []), spec.input, spec.output];
  const arrivalExpected = spec.nonNegativeArrival ? 'a number of seconds ≥ 0' : 'a number of seconds';
  const optional = [...(spec.arrivalOptional ? [spec.arrival] : []), ...(spec.app ? [spec.app] : []), ...spec.others];
  return function* read(path: string, opts: TraceOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
    const lr = new LineReader(path, opts);
    try {
      const header = headerLine(lr);
      if (header === undefined) throw emptyTrace(path);
      const names = headerNames(header);
      const cols = headerColumns(names, path, required, optional, true, lr.lineNo);
      const iT = cols.get(spec.arrival) ?? -1;
      const iIn = cols.get(spec.input)!;
      const iOut = cols.get(spec.output)!;
      const iApp = spec.app === undefined ? -1 : (cols.get(spec.app) ?? -1);
      const iModel = spec.model === undefined ? -1 : cols.get(spec.model)!;
      const width = names.length;
      let t0 = NaN;
      let prev = -Infinity;
      let id = 0;
      for (let line = lr.next(); line !== undefined; line = lr.next()) {
        if (isBlank(line)) continue;
        const cells = rowCells(line, width, path, lr.lineNo);
        const t = iT < 0 ? 0 : numberCell(cells[iT]!, path, lr.lineNo, spec.arrival, arrivalExpected);
        if (spec.nonNegativeArrival && t < 0) throw new ConfigError({ source: path, line: lr.lineNo, path: spec.arrival, expected: arrivalExpected, got: t });
        if (t < prev) throw outOfOrder(path, lr.lineNo, spec.arrival, t);
        if (t0 !== t0) t0 = t;
        prev = t;
        if (t - t0 > MAX_TRACE_ARRIVAL_S) throw arrivalTooLate(path, lr.lineNo, spec.arrival, cells[iT]!.trim(), 'first row');
        const skip = spec.skipZeroOutput;
        const outputTokens = skip ? tokenCellOrZero(cells[iOut]!, path, lr.lineNo, spec.output, skip.expected) : tokenCell(cells[iOut]!, path, lr.lineNo, spec.output);
        if (outputTokens === 0) {
          // A failed request (BurstGPT logs `0,0,0`): the prompt may be 0 too, but must still be a plain integer.
          tokenCellOrZero(cells[iIn]!, path, lr.lineNo, spec.input, SKIPPED_INPUT_EXPECTED);
          skipRow(stats, opts, skip!.reason, t - t0);
          continue;
        }
        const inputTokens = tokenCell(cells[iIn]!, path, lr.lineNo, spec.input);
        stats.rows++;
        const req: TraceRequest = { id: id++, arrivalS: t - t0, inputTokens, outputTokens };
        for (const [key, i] of [['model', iModel], ['app', iApp]] as const) {
          const v = i >= 0 ? cells[i]!.trim() : '';
          if (v !== '') req[key] = v;
        }
        yield req;
      }
      if (id === 0) throw emptyTrace(path, stats.skipped);
    } finally {
      lr.close();
    }
  };
}
