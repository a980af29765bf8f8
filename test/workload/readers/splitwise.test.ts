import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTrace } from '../../../src/workload/index.ts';
import { all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());
const HEADER = 'request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size';

test('reads SplitwiseSim traces: seconds relative to the first row, application_id as app', () => {
  const p = tmp.file('s.csv', [HEADER, '0,2,conv,0.125,1,374,44', '1,2,code,0.5,1,396,109', '2,2,,2.0,1,879,55'].join('\n') + '\n');
  assert.deepEqual(all(openTrace(p, 'splitwise', { chunkBytes: 4 })), [
    { id: 0, arrivalS: 0, inputTokens: 374, outputTokens: 44, app: 'conv' },
    { id: 1, arrivalS: 0.375, inputTokens: 396, outputTokens: 109, app: 'code' },
    { id: 2, arrivalS: 1.875, inputTokens: 879, outputTokens: 55 },
  ]);
});

test('finds columns by name and ignores a leading pandas index column', () => {
  const p = tmp.file('idx.csv', [`,${HEADER}`, '0,7,2,a,1.5,1,10,20'].join('\n'));
  assert.deepEqual(all(openTrace(p, 'splitwise')), [{ id: 0, arrivalS: 0, inputTokens: 10, outputTokens: 20, app: 'a' }]);
});

test('rejects bad SplitwiseSim rows naming line and column', () => {
  const f = (row: string) => tmp.file('bad.csv', [HEADER, '0,2,conv,1,1,5,5', row].join('\n'));
  const read = (p: string) => all(openTrace(p, 'splitwise'));
  assertConfigError(() => read(f('1,2,conv,2,1,0,5')), 'bad.csv:3 prompt_size: expected an integer ≥ 1 and ≤ 1e9, got 0');
  assertConfigError(() => read(f('1,2,conv,2,1,5,-1')), 'bad.csv:3 token_size', 'got -1');
  assertConfigError(() => read(f('1,2,conv,0.5,1,5,5')), 'bad.csv:3 arrival_timestamp: expected arrivals in non-decreasing order');
  assertConfigError(() => read(f('1,2,conv,,1,5,5')), 'bad.csv:3 arrival_timestamp: expected a number of seconds');
  assertConfigError(() => openTrace(tmp.file('h.csv', 'request_id,arrival_timestamp\n1,2'), 'splitwise'), 'h.csv:1 prompt_size, token_size');
});
