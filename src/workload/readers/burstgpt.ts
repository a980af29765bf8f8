import type { TraceRequest } from '../types.ts';
import { LineReader } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { emptyTrace, headerLine, headerColumns, isBlank, numberCell, outOfOrder, headerNames, tokenCell, tokenCellOrZero, rowCells } from '../fields.ts';
import { skipRow, type TraceOptions, type TraceStats } from './reader.ts';

/**
 * BurstGPT (`Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`): Timestamp in seconds
 * since the trace start, Model → `model`. Columns are located by header name; `Total tokens`, `Log Type` and
 * any other column (the authors announce `SessionID` and `Elapsed time` for later releases) are not used.
 *
 * Failed requests: BurstGPT logs a failure as `Response tokens` = 0 (any plain zero: `0`, `00`, `"0"`). The
 * simulator needs ≥ 1 output token, and a failed request never occupied a GPU for decoding, so such rows are
 * SKIPPED and counted in `stats.skipped['failed (Response tokens 0)']`; they still count for arrival order,
 * and a skipped first row does not move time zero (arrivals are relative to the first row of the file). Any
 * other bad value (negative, not a plain integer such as `0.0`, `Request tokens` 0) is a ConfigError.
 */
export const BURSTGPT_SKIP_FAILED = 'failed (Response tokens 0)';
const REQUIRED = ['Timestamp', 'Model', 'Request tokens', 'Response tokens'] as const;
const OPTIONAL = ['Total tokens', 'Log Type'] as const;
const RESPONSE_EXPECTED = 'an integer ≥ 0 and ≤ 1e9 (0 = a failed request, skipped)';

export function* readBurstGpt(path: string, opts: TraceOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new LineReader(path, opts);
  try {
    const header = headerLine(lr);
    if (header === undefined) throw emptyTrace(path);
    const names = headerNames(header);
    const cols = headerColumns(names, path, REQUIRED, OPTIONAL, true, lr.lineNo);
    const iT = cols.get('Timestamp')!;
    const iM = cols.get('Model')!;
    const iIn = cols.get('Request tokens')!;
    const iOut = cols.get('Response tokens')!;
    // Every row has as many cells as the header (cols also maps absent optional columns, to -1).
    const width = names.length;
    let t0 = NaN;
    let prev = -Infinity;
    let id = 0;
    for (let line = lr.next(); line !== undefined; line = lr.next()) {
      if (isBlank(line)) continue;
      const cells = rowCells(line, width, path, lr.lineNo);
      const t = numberCell(cells[iT]!, path, lr.lineNo, 'Timestamp', 'a number of seconds ≥ 0');
      if (t < 0) throw new ConfigError({ source: path, line: lr.lineNo, path: 'Timestamp', expected: 'a number of seconds ≥ 0', got: t });
      if (t < prev) throw outOfOrder(path, lr.lineNo, 'Timestamp', t);
      if (t0 !== t0) t0 = t;
      prev = t;
      const inputTokens = tokenCell(cells[iIn]!, path, lr.lineNo, 'Request tokens');
      const outputTokens = tokenCellOrZero(cells[iOut]!, path, lr.lineNo, 'Response tokens', RESPONSE_EXPECTED);
      if (outputTokens === 0) {
        skipRow(stats, opts, BURSTGPT_SKIP_FAILED, t - t0);
        continue;
      }
      const model = cells[iM]!.trim();
      stats.rows++;
      const req: TraceRequest = { id: id++, arrivalS: t - t0, inputTokens, outputTokens };
      if (model !== '') req.model = model;
      yield req;
    }
    if (id === 0) throw emptyTrace(path);
  } finally {
    lr.close();
  }
}
