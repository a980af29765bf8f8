import { columnCsvReader } from './column-csv.ts';

/**
 * BurstGPT (`Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`): Timestamp in seconds
 * since the trace start, Model → `model`. Columns are located by header name; `Total tokens`, `Log Type` and
 * any other column (the authors announce `SessionID` and `Elapsed time` for later releases) are not used.
 *
 * Failed requests: BurstGPT logs a failure as `Response tokens` = 0 (any plain zero: `0`, `00`, `"0"`). The
 * simulator needs ≥ 1 output token, and a failed request never occupied a GPU for decoding, so such rows are
 * SKIPPED and counted in `stats.skipped['failed (Response tokens 0)']`, whatever their `Request tokens` (the
 * real trace logs many failures as `0,0,0`); they still count for arrival order, and a skipped first row does
 * not move time zero (arrivals are relative to the first row of the file). Any other bad value (negative, not
 * a plain integer such as `0.0`, `Request tokens` 0 with `Response tokens` ≥ 1) is a ConfigError.
 */
export const BURSTGPT_SKIP_FAILED = 'failed (Response tokens 0)';

export const readBurstGpt = columnCsvReader({
  arrival: 'Timestamp',
  nonNegativeArrival: true,
  model: 'Model',
  input: 'Request tokens',
  output: 'Response tokens',
  skipZeroOutput: { reason: BURSTGPT_SKIP_FAILED, expected: 'an integer ≥ 0 and ≤ 1e9 (0 = a failed request, skipped)' },
  others: ['Total tokens', 'Log Type'],
});
