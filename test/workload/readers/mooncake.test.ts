import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTrace } from '../../../src/workload/index.ts';
import { all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

test('reads Mooncake JSONL, milliseconds to seconds from the first row, hash_ids as the prompt\'s 512-token block hashes', () => {
  const p = tmp.file(
    'm.jsonl',
    [
      '{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]}',
      '{"timestamp": 30535, "input_length": 6472, "output_length": 26, "hash_ids": [46, 47]}',
      '',
      '{"timestamp": 30535, "input_length": 1, "output_length": 1, "hash_ids": []}',
    ].join('\r\n'),
  );
  assert.deepEqual(all(openTrace(p, 'mooncake', { chunkBytes: 5 })), [
    { id: 0, arrivalS: 0, inputTokens: 6955, outputTokens: 52, prefixHashes: [46, 47, 48], prefixBlockTokens: 512 },
    { id: 1, arrivalS: 3.053, inputTokens: 6472, outputTokens: 26, prefixHashes: [46, 47], prefixBlockTokens: 512 },
    { id: 2, arrivalS: 3.053, inputTokens: 1, outputTokens: 1 },
  ]);
});

test('rejects bad Mooncake lines naming line and key', () => {
  const f = (row: string) => tmp.file('bad.jsonl', ['{"timestamp": 10, "input_length": 5, "output_length": 2}', row].join('\n'));
  const read = (p: string) => all(openTrace(p, 'mooncake'));
  assertConfigError(() => read(f('{"timestamp": 11, "input_length": 0, "output_length": 2}')), 'bad.jsonl:2 input_length: expected an integer ≥ 1 and ≤ 1e9, got 0');
  assertConfigError(() => read(f('{"timestamp": 11, "input_length": 3000000000, "output_length": 2}')), 'bad.jsonl:2 input_length: expected an integer ≥ 1 and ≤ 1e9, got 3000000000');
  assertConfigError(() => read(f('{"timestamp": 11, "input_length": 3, "output_length": 2.5}')), 'bad.jsonl:2 output_length', 'got 2.5');
  assertConfigError(() => read(f('{"timestamp": 11, "input_length": 3}')), 'bad.jsonl:2 output_length: expected an integer ≥ 1');
  assertConfigError(() => read(f('{"timestamp": "11", "input_length": 3, "output_length": 2}')), 'bad.jsonl:2 timestamp', 'got "11"');
  assertConfigError(() => read(f('{"timestamp": 9, "input_length": 3, "output_length": 2}')), 'bad.jsonl:2 timestamp: expected arrivals in non-decreasing order');
  assertConfigError(() => read(f('{"timestamp": 11, ')), 'bad.jsonl:2 line: expected a JSON object');
  assertConfigError(() => read(f('[1,2]')), 'bad.jsonl:2 line: expected a JSON object');
});
