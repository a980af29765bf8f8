import { columnCsvReader } from './column-csv.ts';

/**
 * SplitwiseSim / SageServe traces:
 * `request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size`, arrival in
 * seconds (relative to the first row here), application_id → `app`. Columns are found by name; extra columns
 * (e.g. a pandas index) are ignored. `request_id`, `request_type` and `batch_size` are not used: SplitwiseSim
 * itself builds one request per row and ignores batch_size, and ids here are the 0-based row order.
 */
export const readSplitwise = columnCsvReader({
  arrival: 'arrival_timestamp',
  input: 'prompt_size',
  output: 'token_size',
  app: 'application_id',
  others: ['request_id', 'request_type', 'batch_size'],
});
