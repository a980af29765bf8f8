import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, openTrace } from '../../../src/workload/index.ts';
import { BAILIAN_SKIP_NO_OUTPUT } from '../../../src/workload/readers/bailian.ts';
import { all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

test('reads Qwen-Bailian JSONL: seconds from the first row, type → app, detected apart from Mooncake (milliseconds)', () => {
  const p = tmp.file(
    'qwen_traceA_blksz_16.jsonl',
    [
      '{"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 521, "output_length": 132, "type": "text", "turn": 1, "hash_ids": [1089, 1090]}',
      '{"chat_id": 160, "parent_chat_id": 159, "timestamp": 63.5, "input_length": 700, "output_length": 0, "type": "text", "turn": 2, "hash_ids": [1089]}',
      '{"chat_id": 161, "parent_chat_id": -1, "timestamp": 64.0, "input_length": 80, "output_length": 9, "type": "image", "turn": 1, "hash_ids": []}',
    ].join('\n'),
  );
  assert.equal(detectFormat(p), 'bailian');
  assert.equal(detectFormat(tmp.file('m.jsonl', '{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46]}\n')), 'mooncake');
  const src = openTrace(p, 'bailian', { chunkBytes: 9 });
  const reqs = all(src);
  assert.deepEqual(
    reqs.map((r) => [r.id, Math.round(r.arrivalS * 1e6) / 1e6, r.inputTokens, r.outputTokens, r.app]),
    [
      [0, 0, 521, 132, 'text'],
      [1, 2.886, 80, 9, 'image'],
    ],
  );
  assert.deepEqual(src.stats, { rows: 2, skipped: { [BAILIAN_SKIP_NO_OUTPUT]: 1 } });
  // hash_ids: 16-token blocks (the files' `blksz_16`); an empty list gives no hashes.
  assert.deepEqual([reqs[0]!.prefixHashes, reqs[0]!.prefixBlockTokens], [[1089, 1090], 16]);
  assert.equal(reqs[1]!.prefixHashes, undefined);
});

test('skips an output_length 0 row whatever its input_length (0 included)', () => {
  const p = tmp.file(
    'z0.jsonl',
    [
      '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 10, "input_length": 5, "output_length": 2, "type": "text"}',
      '{"chat_id": 2, "parent_chat_id": -1, "timestamp": 11, "input_length": 0, "output_length": 0, "type": "text"}',
      '{"chat_id": 3, "parent_chat_id": -1, "timestamp": 12, "input_length": 7, "output_length": 3, "type": "text"}',
    ].join('\n'),
  );
  const src = openTrace(p, 'bailian');
  assert.deepEqual(all(src).map((r) => [r.id, r.arrivalS]), [[0, 0], [1, 2]]);
  assert.deepEqual(src.stats, { rows: 2, skipped: { [BAILIAN_SKIP_NO_OUTPUT]: 1 } });
  const bad = tmp.file('z0bad.jsonl', '{"chat_id": 1, "timestamp": 10, "input_length": 5, "output_length": 2}\n{"chat_id": 2, "timestamp": 11, "input_length": "5", "output_length": 0}');
  assertConfigError(() => all(openTrace(bad, 'bailian')), 'z0bad.jsonl:2 input_length: expected an integer ≥ 0', 'got "5"');
});

test('rejects bad Qwen-Bailian lines naming line and key', () => {
  const f = (row: string) => tmp.file('bad.jsonl', ['{"chat_id": 1, "timestamp": 10, "input_length": 5, "output_length": 2, "type": "text"}', row].join('\n'));
  const read = (p: string) => all(openTrace(p, 'bailian'));
  assertConfigError(() => read(f('{"chat_id": 2, "timestamp": 9.5, "input_length": 3, "output_length": 2}')), 'bad.jsonl:2 timestamp: expected arrivals in non-decreasing order');
  assertConfigError(() => read(f('{"chat_id": 2, "timestamp": -1, "input_length": 3, "output_length": 2}')), 'bad.jsonl:2 timestamp: expected a number of seconds ≥ 0');
  assertConfigError(() => read(f('{"chat_id": 2, "timestamp": 11, "input_length": 0, "output_length": 2}')), 'bad.jsonl:2 input_length');
  assertConfigError(() => read(f('{"chat_id": 2, "timestamp": 11, "input_length": 3, "output_length": -2}')), 'bad.jsonl:2 output_length', 'got -2');
  assertConfigError(() => read(f('{"chat_id": 2, "timestamp": 11, "input_length": 3, "output_length": 2, "type": 7}')), 'bad.jsonl:2 type: expected a non-empty string');
});
