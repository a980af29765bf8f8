import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, openTrace } from '../../../src/workload/index.ts';
import { BURSTGPT_SKIP_FAILED } from '../../../src/workload/readers/burstgpt.ts';
import { all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());
const HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

test('reads BurstGPT rows relative to the first, with the model label', () => {
  const p = tmp.file(
    'b.csv',
    [HEADER, '5,ChatGPT,472,18,490,Conversation log', '45,ChatGPT,1087,173,1260,Conversation log', '118.5,GPT-4,417,276,693,API log'].join('\r\n'),
  );
  assert.deepEqual(all(openTrace(p, 'burstgpt', { chunkBytes: 7 })), [
    { id: 0, arrivalS: 0, inputTokens: 472, outputTokens: 18, model: 'ChatGPT' },
    { id: 1, arrivalS: 40, inputTokens: 1087, outputTokens: 173, model: 'ChatGPT' },
    { id: 2, arrivalS: 113.5, inputTokens: 417, outputTokens: 276, model: 'GPT-4' },
  ]);
});

test('ignores columns it does not use, announced ones included (SessionID, Elapsed time), in any order', () => {
  const p = tmp.file('s.csv', ['SessionID,Timestamp,Model,Request tokens,Response tokens,Elapsed time', 's1,5,ChatGPT,472,18,1.5', 's1,7,GPT-4,10,3,0.2'].join('\n'));
  assert.deepEqual(all(openTrace(p, detectFormat(p))), [
    { id: 0, arrivalS: 0, inputTokens: 472, outputTokens: 18, model: 'ChatGPT' },
    { id: 1, arrivalS: 2, inputTokens: 10, outputTokens: 3, model: 'GPT-4' },
  ]);
});

test('skips failed requests (Response tokens 0) and counts them in stats', () => {
  const p = tmp.file('f.csv', [HEADER, '1,ChatGPT,10,0,10,Conversation log', '2,ChatGPT,10,5,15,Conversation log', '3,GPT-4,10,0,10,API log'].join('\n'));
  const src = openTrace(p, 'burstgpt');
  const reqs = all(src);
  assert.deepEqual(reqs.map((r) => [r.id, r.arrivalS]), [[0, 1]]);
  assert.deepEqual(src.stats, { rows: 1, skipped: { [BURSTGPT_SKIP_FAILED]: 2 } });
});

test('skips failures logged as 0,0,0 (Request tokens 0 too), as the real BurstGPT_1.csv has them', () => {
  const p = tmp.file(
    'real.csv',
    [HEADER, '1072,ChatGPT,733,180,913,Conversation log', '1106,ChatGPT,0,0,0,Conversation log', '1129,ChatGPT,1305,477,1782,Conversation log'].join('\n'),
  );
  const src = openTrace(p, 'burstgpt');
  assert.deepEqual(all(src).map((r) => [r.id, r.arrivalS, r.inputTokens]), [[0, 0, 733], [1, 57, 1305]]);
  assert.deepEqual(src.stats, { rows: 2, skipped: { [BURSTGPT_SKIP_FAILED]: 1 } });
  // A failure row read first (openTrace checks the first row at once) is skipped too.
  const first = openTrace(tmp.file('first.csv', [HEADER, '1106,ChatGPT,0,0,0,Conversation log', '1129,ChatGPT,1305,477,1782,Conversation log'].join('\n')), 'burstgpt');
  assert.deepEqual(all(first).map((r) => r.arrivalS), [23]);
  // The prompt of a failure must still be a plain integer.
  assertConfigError(() => all(openTrace(tmp.file('junk.csv', [HEADER, '1106,ChatGPT,-1,0,0,Conversation log'].join('\n')), 'burstgpt')), 'junk.csv:2 Request tokens: expected an integer ≥ 0', 'got -1');
});

test('rejects bad BurstGPT rows naming line and column', () => {
  const f = (row: string) => tmp.file('bad.csv', [HEADER, '1,ChatGPT,10,5,15,Conversation log', row].join('\n'));
  const read = (p: string) => all(openTrace(p, 'burstgpt'));
  assertConfigError(() => read(f('2,ChatGPT,0,5,5,Conversation log')), 'bad.csv:3 Request tokens: expected an integer ≥ 1 and ≤ 1e9, got 0');
  assertConfigError(() => read(f('2,ChatGPT,10,-5,5,Conversation log')), 'bad.csv:3 Response tokens', 'got -5');
  assertConfigError(() => read(f('x,ChatGPT,10,5,5,Conversation log')), 'bad.csv:3 Timestamp', 'got "x"');
  assertConfigError(() => read(f('0,ChatGPT,10,5,5,Conversation log')), 'bad.csv:3 Timestamp: expected arrivals in non-decreasing order');
  assertConfigError(() => read(f('2,ChatGPT,10,5,Conversation log')), 'bad.csv:3 row: expected 6 comma-separated fields');
  assertConfigError(() => openTrace(tmp.file('h.csv', 'Timestamp,Model,Request tokens\n1,a,2'), 'burstgpt'), 'h.csv:1 Response tokens');
});
