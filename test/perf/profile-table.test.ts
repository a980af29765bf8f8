import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PiecewiseLinear, loadProfileTable, median, parseProfileCsv, profilePerfModel, splitwiseCurves, selectRows } from '../../src/perf/profile-table.ts';
import type { BatchShape } from '../../src/perf/types.ts';
import { ConfigError } from '../../src/util/errors.ts';

// Grid x = prompt × batch: x=100 has prompt times 10, 14, 12 (median 12) and token times 5, 7, 6 (median 6);
// x=200 pools (200 × 1) and (100 × 2): medians (20+22)/2 = 21 and (8+10)/2 = 9; x=400: 41 and 13. Another key
// (tp 2) must be ignored.
const TINY = [
  'model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,e2e_time,tensor_parallel',
  'm,g,100,1,10,10,5,60,1',
  'm,g,100,1,20,14,7,150,1',
  'm,g,100,1,10,12,6,70,1',
  'm,g,200,1,10,20,8,100,1',
  'm,g,100,2,10,22,10,120,1',
  'm,g,400,1,10,41,13,170,1',
  'm,g,400,1,10,999,999,9999,2',
].join('\r\n');
const table = parseProfileCsv(TINY, 'tiny.csv');
const key = { model: 'm', hardware: 'g', tp: 1 };

const shape = (p: Partial<BatchShape>): BatchShape => ({
  prefillTokens: 0, prefillSeqs: 0, prefillAttendTokens: 0, decodeSeqs: 0, decodeContextTokens: 0, ...p,
});
const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

test('medians per x = prompt × batch pool token sizes and average the middle pair of an even group', () => {
  const { prompt, token } = splitwiseCurves(selectRows(table, key));
  assert.deepEqual(prompt.xs, [100, 200, 400]);
  assert.deepEqual(prompt.ys.map((y) => +(y * 1000).toFixed(9)), [12, 21, 41]);
  assert.deepEqual(token.ys.map((y) => +(y * 1000).toFixed(9)), [6, 9, 13]);
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

test('interpolates linearly inside the grid and extrapolates from the end segments', () => {
  const { prompt, token } = splitwiseCurves(selectRows(table, key));
  close(token.at(150), 0.0075);
  close(token.at(50), 0.0045); // 6 − 50 × 3/100
  close(token.at(600), 0.017); // 13 + 200 × 4/200
  close(prompt.at(300), 0.031);
  close(prompt.at(0), 0.003); // 12 − 9
  close(prompt.at(500), 0.051);
  const one = new PiecewiseLinear([5], [2]);
  assert.equal(one.at(-100), 2);
  const many = new PiecewiseLinear([0, 1, 2, 3, 4, 5], [0, 1, 4, 9, 16, 25]);
  close(many.at(3.5), 12.5);
  close(many.at(6), 34);
  close(many.at(-1), -1);
});

test('SplitwiseSim step rules: decode-only reads the token curve at k, prefill the prompt curve, mixed is 1.1 × prompt at tokens + decodes', () => {
  const pm = profilePerfModel(table, key);
  close(pm.decodeStepCoeffs(50).baseS, 0.0045);
  assert.equal(pm.decodeStepCoeffs(50).perContextTokenS, 0);
  close(pm.stepTimeS(shape({ decodeSeqs: 50, decodeContextTokens: 99999 })), 0.0045);
  close(pm.stepTimeS(shape({ prefillTokens: 300, prefillSeqs: 2, prefillAttendTokens: 12345 })), 0.031);
  close(pm.stepTimeS(shape({ prefillTokens: 250, prefillSeqs: 1, decodeSeqs: 50, decodeContextTokens: 5000 })), 1.1 * 0.031);
});

test('a key the table lacks is an error listing the keys it has', () => {
  assert.throws(() => profilePerfModel(table, { model: 'm', hardware: 'g', tp: 4 }), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.equal(e.message, 'tiny.csv has no rows for m/g/tp4; it has m/g/tp1, m/g/tp2');
    return true;
  });
});

test('bad files name the line and column', () => {
  assert.throws(() => parseProfileCsv('model,hardware\nm,g\n', 'a.csv'), /a\.csv:1: expected a header with columns .*\(this one lacks prompt_size.*\), got "model,hardware"$/);
  const bad = TINY.replace('m,g,200,1,10,20,8,100,1', 'm,g,200,1,10,fast,8,100,1');
  assert.throws(() => parseProfileCsv(bad, 'b.csv'), /b\.csv:5 prompt_time: expected a time in ms > 0, got "fast"/);
  const short = TINY.replace('m,g,200,1,10,20,8,100,1', 'm,g,200,1');
  assert.throws(() => parseProfileCsv(short, 'c.csv'), /c\.csv:5: expected 9 cells, got 4/);
  assert.throws(() => parseProfileCsv(TINY.split('\r\n')[0]!, 'd.csv'), /d\.csv:2: expected at least one data row, got "?none"?/);
  assert.throws(() => loadProfileTable('/nonexistent/x.csv'), /x\.csv: expected a readable profile CSV/);
  // 1e300 sizes and TP degrees were read, and a fit ran on them (decode MAPE 183 %); hex was read as a number.
  const cell = (from: string, to: string) => TINY.replace('m,g,200,1,10,20,8,100,1', to.replace('X', from));
  assert.throws(() => parseProfileCsv(cell('1e300', 'm,g,X,1,10,20,8,100,1'), 'e.csv'), /e\.csv:5 prompt_size: expected a positive integer, got "1e300"/);
  assert.throws(() => parseProfileCsv(cell('2048', 'm,g,200,1,10,20,8,100,X'), 'f.csv'), /f\.csv:5 tensor_parallel: expected a positive integer ≤ 1024, got "2048"/);
  assert.throws(() => parseProfileCsv(cell('0x14', 'm,g,200,1,10,X,8,100,1'), 'g.csv'), /g\.csv:5 prompt_time: expected a time in ms > 0, got "0x14"/);
});

test('the bundled SplitwiseSim table gives the medians of its rows (llama2-70b, h100-80gb, tp 8)', () => {
  const t = loadProfileTable('data/profiles/splitwise_perf_model.csv');
  assert.equal(t.rows.length, 1260);
  assert.equal(loadProfileTable('./data/profiles/splitwise_perf_model.csv'), t, 'parsed once per path');
  const { prompt, token, } = splitwiseCurves(selectRows(t, { model: 'llama2-70b', hardware: 'h100-80gb', tp: 8 }));
  // x = 128: five rows with prompt times 48.39, 49.39, 58.19, 59.83, 60.70 ms.
  close(prompt.at(128), 0.05818541598273441);
  assert.deepEqual(prompt.xs, [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]);
  // Decode of one sequence extrapolates below x = 128 from the (128, 256) segment.
  const d1 = token.at(1);
  assert.ok(d1 > token.at(128) && d1 < 0.04);
});
