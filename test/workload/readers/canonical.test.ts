import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTrace, detectFormat } from '../../../src/workload/index.ts';
import { UserError } from '../../../src/util/errors.ts';
import { AZURE_DIR, all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

test('reads canonical CSV with columns in any order, labels, deadlines and quoted cells, times as given', () => {
  const p = tmp.file(
    'c.csv',
    ['output_tokens,tier,arrival_s,input_tokens,model,deadline_s,app', '10,iw-f,1.5,100,llama,3.5,"chat, v2"', '5,,2,7,,,'].join('\r\n'),
  );
  assert.deepEqual(all(openTrace(p, 'csv', { chunkBytes: 3 })), [
    { id: 0, arrivalS: 1.5, inputTokens: 100, outputTokens: 10, tier: 'iw-f', model: 'llama', app: 'chat, v2', deadlineS: 3.5 },
    { id: 1, arrivalS: 2, inputTokens: 7, outputTokens: 5 },
  ]);
});

test('accepts camelCase column names', () => {
  const p = tmp.file('camel.csv', 'arrivalS,inputTokens,outputTokens,region\n0,1,2,eu\n');
  assert.deepEqual(all(openTrace(p, 'csv')), [{ id: 0, arrivalS: 0, inputTokens: 1, outputTokens: 2, region: 'eu' }]);
});

test('rejects unknown, duplicate and missing canonical CSV columns on line 1', () => {
  assertConfigError(() => openTrace(tmp.file('u.csv', 'arrival_s,input_tokens,output_tokens,prio,color\n0,1,1,2,3'), 'csv'), 'u.csv:1 prio, color', 'known column names');
  assertConfigError(() => openTrace(tmp.file('d.csv', 'arrival_s,arrivalS,input_tokens,output_tokens\n0,0,1,1'), 'csv'), 'd.csv:1 arrivalS', 'one column for arrivalS');
  assertConfigError(() => openTrace(tmp.file('m.csv', 'arrival_s,input_tokens\n0,1'), 'csv'), 'm.csv:1 output_tokens');
});

test('rejects bad canonical CSV rows naming line and column', () => {
  const f = (row: string) => tmp.file('bad.csv', ['arrival_s,input_tokens,output_tokens,deadline_s', '1,1,1,', row].join('\n'));
  const read = (p: string) => all(openTrace(p, 'csv'));
  assertConfigError(() => read(f('2,0,1,')), 'bad.csv:3 input_tokens: expected an integer ≥ 1 and ≤ 1e9, got 0');
  assertConfigError(() => read(f('2,1,x,')), 'bad.csv:3 output_tokens', 'got "x"');
  assertConfigError(() => read(f('2,3000000000,1,')), 'bad.csv:3 input_tokens: expected an integer ≥ 1 and ≤ 1e9, got 3000000000');
  assertConfigError(() => read(f('2,0x64,1,')), 'bad.csv:3 input_tokens', 'got "0x64"');
  assertConfigError(() => read(f('0x10,1,1,')), 'bad.csv:3 arrival_s', 'got "0x10"');
  assertConfigError(() => read(f('0.5,1,1,')), 'bad.csv:3 arrival_s: expected arrivals in non-decreasing order');
  assertConfigError(() => read(f(',1,1,')), 'bad.csv:3 arrival_s: expected a number of seconds ≥ 0');
  assertConfigError(() => read(f('2,1,1,1')), 'bad.csv:3 deadline_s: expected an absolute deadline in seconds ≥ arrival_s (2), got 1');
  assertConfigError(() => read(f('2,1,1')), 'bad.csv:3 row: expected 4 comma-separated fields');
  assertConfigError(() => openTrace(tmp.file('neg.csv', 'arrival_s,input_tokens,output_tokens\n-1,1,1'), 'csv'), 'neg.csv:2 arrival_s', 'got -1');
});

test('reads canonical JSONL with either spelling and optional labels', () => {
  const p = tmp.file(
    'c.jsonl',
    ['{"arrival_s": 0.5, "input_tokens": 3, "output_tokens": 4, "tier": "iw-f", "deadline_s": 9}', '{"arrivalS": 1, "inputTokens": 5, "outputTokens": 6, "model": null}'].join('\n'),
  );
  assert.deepEqual(all(openTrace(p, 'jsonl', { chunkBytes: 9 })), [
    { id: 0, arrivalS: 0.5, inputTokens: 3, outputTokens: 4, tier: 'iw-f', deadlineS: 9 },
    { id: 1, arrivalS: 1, inputTokens: 5, outputTokens: 6 },
  ]);
});

test('rejects bad canonical JSONL lines naming line and key', () => {
  const f = (row: string) => tmp.file('bad.jsonl', ['{"arrival_s": 1, "input_tokens": 1, "output_tokens": 1}', row].join('\n'));
  const read = (p: string) => all(openTrace(p, 'jsonl'));
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "prio": 3}')), 'bad.jsonl:2 prio: expected known keys');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": -5, "output_tokens": 1}')), 'bad.jsonl:2 input_tokens: expected an integer ≥ 1 and ≤ 1e9, got -5');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1}')), 'bad.jsonl:2 output_tokens');
  assertConfigError(() => read(f('{"arrival_s": 0, "input_tokens": 1, "output_tokens": 1}')), 'bad.jsonl:2 arrival_s: expected arrivals in non-decreasing order');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "model": 7}')), 'bad.jsonl:2 model: expected a string, got 7');
  assertConfigError(() => read(f('{"arrival_s": 2, "arrivalS": 2, "input_tokens": 1, "output_tokens": 1}')), 'bad.jsonl:2 arrivalS');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "deadline_s": 1}')), 'bad.jsonl:2 deadline_s');
  // A key given twice: JSON.parse kept the last value (arrival 3) and dropped the first without a word.
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 5, "output_tokens": 5, "arrival_s": 3}')), 'bad.jsonl:2 arrival_s: expected each key once in an object');
  // Not a repeat: the same key in a nested object, or '":' inside a string.
  const nested = tmp.file('ok.jsonl', '{"arrival_s": 1, "input_tokens": 1, "output_tokens": 1, "model": "a\\":b"}\n');
  assert.equal(read(nested).length, 1);
});

test('canonical JSONL: hash_ids with hash_block_tokens are the prompt\'s block hashes; either alone, or bad values, name the line', () => {
  const p = tmp.file('h.jsonl', [
    '{"arrival_s": 0, "input_tokens": 40, "output_tokens": 1, "hash_ids": [7, 8], "hash_block_tokens": 16}',
    '{"arrival_s": 1, "input_tokens": 40, "output_tokens": 1, "hash_ids": [], "hash_block_tokens": 16}',
    '{"arrival_s": 2, "input_tokens": 40, "output_tokens": 1}',
  ].join('\n'));
  const reqs = all(openTrace(p, 'jsonl'));
  assert.deepEqual(reqs.map((r) => [r.prefixHashes, r.prefixBlockTokens]), [[[7, 8], 16], [undefined, undefined], [undefined, undefined]]);
  const f = (row: string) => tmp.file('badh.jsonl', ['{"arrival_s": 1, "input_tokens": 1, "output_tokens": 1}', row].join('\n'));
  const read = (q: string) => all(openTrace(q, 'jsonl'));
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "hash_ids": [1]}')), 'badh.jsonl:2 hash_block_tokens: expected an integer from 1 to 1000000 beside hash_ids');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "hash_block_tokens": 16}')), 'badh.jsonl:2 hash_block_tokens: expected hash_ids beside it');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "hash_ids": [1.5], "hash_block_tokens": 16}')), 'badh.jsonl:2 hash_ids: expected a list of integers');
  assertConfigError(() => read(f('{"arrival_s": 2, "input_tokens": 1, "output_tokens": 1, "prio": 1}')), 'hash_ids, hash_block_tokens)');
});

test('detects each format from the first line', () => {
  assert.equal(detectFormat(`${AZURE_DIR}AzureLLMInferenceTrace_conv.csv`), 'azure');
  assert.equal(detectFormat(tmp.file('b.csv', 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n')), 'burstgpt');
  assert.equal(detectFormat(tmp.file('s.csv', 'request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n')), 'splitwise');
  assert.equal(detectFormat(tmp.file('c.csv', 'input_tokens,arrival_s,output_tokens\n')), 'csv');
  assert.equal(detectFormat(tmp.file('m.jsonl', '{"timestamp": 1, "input_length": 2, "output_length": 3}\n')), 'mooncake');
  assert.equal(detectFormat(tmp.file('j.jsonl', '\n{"arrival_s": 1, "input_tokens": 2, "output_tokens": 3}\n')), 'jsonl');
  assert.throws(() => detectFormat(tmp.file('x.csv', 'a,b,c\n')), (e: unknown) => e instanceof UserError && e.message.includes('x.csv'));
});

test('an unknown format name is a UserError listing the valid ones', () => {
  assert.throws(() => openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_conv.csv`, 'parquet' as never), /valid: azure, burstgpt/);
});
