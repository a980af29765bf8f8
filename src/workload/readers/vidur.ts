import { columnCsvReader } from './column-csv.ts';

/**
 * Vidur's processed traces (`data/processed_traces/*.csv` of microsoft/vidur):
 * `arrived_at,num_prefill_tokens,num_decode_tokens` (arrival in seconds, relative to the first row here).
 * Its length-only files (`num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio`, which Vidur pairs
 * with a generated arrival process) have no `arrived_at`: every request then arrives at 0, an offline batch;
 * use such a file as `workload.synthetic.lengths` (empirical) to give it arrivals. Other columns are ignored.
 */
export const readVidur = columnCsvReader({
  arrival: 'arrived_at',
  arrivalOptional: true,
  input: 'num_prefill_tokens',
  output: 'num_decode_tokens',
  others: ['num_total_tokens', 'pd_ratio'],
});
