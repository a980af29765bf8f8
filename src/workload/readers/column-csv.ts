import type { TraceRequest } from '../types.ts';
import { LineReader } from '../line-reader.ts';
import { emptyTrace, headerLine, headerColumns, isBlank, numberCell, outOfOrder, headerNames, tokenCell, rowCells } from '../fields.ts';
import type { TraceOptions, TraceReader, TraceStats } from './reader.ts';

/** A CSV trace whose columns are found by name: arrival seconds, prompt and output tokens, an optional label. */
export interface ColumnCsvSpec {
  /** Arrival in seconds, re-based to the first row. */
  arrival: string;
  /** When the header has no arrival column, every request arrives at 0 (a length-only file); else it is required. */
  arrivalOptional?: boolean;
  input: string;
  output: string;
  /** Column whose non-empty cells become the request's `app`. */
  app?: string;
  /** Other columns the format names (not used); any further column is ignored too. */
  others: readonly string[];
}

export function columnCsvReader(spec: ColumnCsvSpec): TraceReader {
  const required = [...(spec.arrivalOptional ? [] : [spec.arrival]), spec.input, spec.output];
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
      const width = names.length;
      let t0 = NaN;
      let prev = -Infinity;
      let id = 0;
      for (let line = lr.next(); line !== undefined; line = lr.next()) {
        if (isBlank(line)) continue;
        const cells = rowCells(line, width, path, lr.lineNo);
        const t = iT < 0 ? 0 : numberCell(cells[iT]!, path, lr.lineNo, spec.arrival, 'a number of seconds');
        if (t < prev) throw outOfOrder(path, lr.lineNo, spec.arrival, t);
        if (t0 !== t0) t0 = t;
        prev = t;
        const inputTokens = tokenCell(cells[iIn]!, path, lr.lineNo, spec.input);
        const outputTokens = tokenCell(cells[iOut]!, path, lr.lineNo, spec.output);
        stats.rows++;
        const req: TraceRequest = { id: id++, arrivalS: t - t0, inputTokens, outputTokens };
        if (iApp >= 0) {
          const app = cells[iApp]!.trim();
          if (app !== '') req.app = app;
        }
        yield req;
      }
      if (id === 0) throw emptyTrace(path);
    } finally {
      lr.close();
    }
  };
}
