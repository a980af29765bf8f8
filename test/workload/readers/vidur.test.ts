import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, openTrace } from '../../../src/workload/index.ts';
import { all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

test("reads Vidur's processed traces (arrived_at,num_prefill_tokens,num_decode_tokens), detected from the header", () => {
  // The first rows of vidur's data/processed_traces/splitwise_conv.csv (float noise in arrivals included).
  const p = tmp.file('splitwise_conv.csv', 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,374,44\n4.314579,396,109\n5.8926549999999995,91,16\n');
  assert.equal(detectFormat(p), 'vidur');
  assert.deepEqual(all(openTrace(p, 'vidur', { chunkBytes: 4 })), [
    { id: 0, arrivalS: 0, inputTokens: 374, outputTokens: 44 },
    { id: 1, arrivalS: 4.314579, inputTokens: 396, outputTokens: 109 },
    { id: 2, arrivalS: 5.8926549999999995, inputTokens: 91, outputTokens: 16 },
  ]);
});

test('a length-only Vidur file arrives all at 0 (an offline batch); bad cells name line and column', () => {
  const p = tmp.file('arxiv.csv', 'num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n3772,54,3826,69.85185185185185\n2015,156,2171,12.916666666666666\n');
  assert.equal(detectFormat(p), 'vidur');
  assert.deepEqual(all(openTrace(p, 'vidur')).map((r) => [r.arrivalS, r.inputTokens, r.outputTokens]), [
    [0, 3772, 54],
    [0, 2015, 156],
  ]);
  const bad = tmp.file('bad.csv', 'arrived_at,num_prefill_tokens,num_decode_tokens\n1,5,5\n0.5,5,5\n');
  assertConfigError(() => all(openTrace(bad, 'vidur')), 'bad.csv:3 arrived_at: expected arrivals in non-decreasing order');
  assertConfigError(() => all(openTrace(tmp.file('bad2.csv', 'arrived_at,num_prefill_tokens,num_decode_tokens\n1,5,0\n'), 'vidur')), 'bad2.csv:2 num_decode_tokens: expected an integer ≥ 1');
  assertConfigError(() => openTrace(tmp.file('bad3.csv', 'arrived_at,num_prefill_tokens\n1,5\n'), 'vidur'), 'bad3.csv:1 num_decode_tokens');
});
