import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, openTrace } from '../../../src/workload/index.ts';
import { all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

test("reads LLMServingSim's and APEX+'s request JSONL (nanosecond arrivals), detected by their keys", () => {
  const lss = tmp.file('lss.jsonl', '{"input_toks": 128, "output_toks": 16, "arrival_time_ns": 5000000000, "input_tok_ids": [1, 2]}\n{"input_toks": 64, "output_toks": 8, "arrival_time_ns": 5250000000}\n');
  assert.equal(detectFormat(lss), 'llmservingsim');
  assert.deepEqual(all(openTrace(lss, 'llmservingsim', { chunkBytes: 6 })), [
    { id: 0, arrivalS: 0, inputTokens: 128, outputTokens: 16 },
    { id: 1, arrivalS: 0.25, inputTokens: 64, outputTokens: 8 },
  ]);
  const apex = tmp.file('apex.jsonl', '{"StartTimeOffset": 0, "ContextTokens": 374, "GeneratedTokens": 44}\n{"StartTimeOffset": 4314579000, "ContextTokens": 396, "GeneratedTokens": 109}\n');
  assert.equal(detectFormat(apex), 'apex');
  assert.deepEqual(all(openTrace(apex, 'apex')).map((r) => [r.arrivalS, r.inputTokens, r.outputTokens]), [
    [0, 374, 44],
    [4.314579, 396, 109],
  ]);
  assertConfigError(() => all(openTrace(tmp.file('bad.jsonl', '{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 9}\n{"input_toks": 1, "output_toks": 1, "arrival_time_ns": 3}\n'), 'llmservingsim')), 'bad.jsonl:2 arrival_time_ns: expected arrivals in non-decreasing order');
  assertConfigError(() => all(openTrace(tmp.file('bad2.jsonl', '{"StartTimeOffset": 0, "ContextTokens": 0, "GeneratedTokens": 1}\n'), 'apex')), 'bad2.jsonl:1 ContextTokens');
});
