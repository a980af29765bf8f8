import type { TraceRequest } from '../types.ts';
import { LineReader, type LineReaderOptions } from '../line-reader.ts';
import { emptyTrace, headerLine, headerColumns, isBlank, numberCell, outOfOrder, headerNames, tokenCell, rowCells } from '../fields.ts';
import type { TraceStats } from './reader.ts';

/**
 * SplitwiseSim / SageServe traces:
 * `request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size`, arrival in
 * seconds (relative to the first row here), application_id → `app`. Columns are found by name; extra columns
 * (e.g. a pandas index) are ignored. `request_id`, `request_type` and `batch_size` are not used: SplitwiseSim
 * itself builds one request per row and ignores batch_size, and ids here are the 0-based row order.
 */
const REQUIRED = ['arrival_timestamp', 'prompt_size', 'token_size'] as const;
const OPTIONAL = ['request_id', 'request_type', 'application_id', 'batch_size'] as const;

export function* readSplitwise(path: string, opts: LineReaderOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new LineReader(path, opts);
  try {
    const header = headerLine(lr);
    if (header === undefined) throw emptyTrace(path);
    const names = headerNames(header);
    const cols = headerColumns(names, path, REQUIRED, OPTIONAL, true, lr.lineNo);
    const iT = cols.get('arrival_timestamp')!;
    const iIn = cols.get('prompt_size')!;
    const iOut = cols.get('token_size')!;
    const iApp = cols.get('application_id')!;
    const width = names.length;
    let t0 = NaN;
    let prev = -Infinity;
    let id = 0;
    for (let line = lr.next(); line !== undefined; line = lr.next()) {
      if (isBlank(line)) continue;
      const cells = rowCells(line, width, path, lr.lineNo);
      const t = numberCell(cells[iT]!, path, lr.lineNo, 'arrival_timestamp', 'a number of seconds');
      if (t < prev) throw outOfOrder(path, lr.lineNo, 'arrival_timestamp', t);
      if (t0 !== t0) t0 = t;
      prev = t;
      const inputTokens = tokenCell(cells[iIn]!, path, lr.lineNo, 'prompt_size');
      const outputTokens = tokenCell(cells[iOut]!, path, lr.lineNo, 'token_size');
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
}
