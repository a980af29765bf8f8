import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSeries, parseGranularity, parseKeyFields } from '../../src/forecast/series.ts';
import { parseSeriesCsv } from '../../src/forecast/series-csv.ts';
import { UserError } from '../../src/util/errors.ts';
import type { TraceRequest } from '../../src/workload/types.ts';

const req = (id: number, arrivalS: number, model: string, inputTokens = 10, outputTokens = 5): TraceRequest => ({ id, arrivalS, inputTokens, outputTokens, model });

test('parses granularities 1m, 10m, 1h and plain seconds', () => {
  assert.equal(parseGranularity('1m'), 60);
  assert.equal(parseGranularity('10m'), 600);
  assert.equal(parseGranularity('1h'), 3600);
  assert.equal(parseGranularity('90'), 90);
  assert.throws(() => parseGranularity('fast'), UserError);
  assert.throws(() => parseGranularity('0m'), UserError);
});

test('rejects unknown key fields naming the valid ones', () => {
  assert.deepEqual(parseKeyFields('model,region'), ['model', 'region']);
  assert.throws(() => parseKeyFields('model,zone'), /unknown field "zone"; valid: model, region, tier, app, type/);
});

test('buckets requests per key into rates on one shared grid, empty buckets are zero', () => {
  const reqs = [req(0, 0, 'a', 100, 10), req(1, 30, 'a', 50, 20), req(2, 61, 'b', 60, 6), req(3, 200, 'a', 10, 1)];
  const s = buildSeries(reqs, { stepS: 60, keys: ['model'] });
  assert.deepEqual(s.map((x) => x.key), ['model=a', 'model=b']);
  const a = s[0]!;
  assert.deepEqual(a.requestsPerS, [2 / 60, 0, 0, 1 / 60]);
  assert.deepEqual(a.inputTokensPerS, [150 / 60, 0, 0, 10 / 60]);
  assert.deepEqual(a.outputTokensPerS, [30 / 60, 0, 0, 1 / 60]);
  assert.deepEqual(s[1]!.requestsPerS, [0, 1 / 60, 0, 0]);
  // Conservation: total requests over all keys and buckets equals the input count.
  const total = s.reduce((acc, x) => acc + x.requestsPerS.reduce((p, v) => p + v * 60, 0), 0);
  assert.equal(Math.round(total), reqs.length);
});

test('without keys gives one series named all; a type key uses the classifier', () => {
  const reqs = [req(0, 0, 'a', 100), req(1, 1, 'a', 5)];
  assert.equal(buildSeries(reqs, { stepS: 60 })[0]!.key, 'all');
  const typed = buildSeries(reqs, { stepS: 60, keys: ['type'], typeOf: (r) => (r.inputTokens > 50 ? 'long' : 'short') });
  assert.deepEqual(typed.map((x) => x.key), ['type=long', 'type=short']);
});

test('reads a timestamp_s,value CSV with header and infers the step', () => {
  const s = parseSeriesCsv('timestamp_s,value\n0,1\n600,2.5\n1200,3\n', 'x.csv');
  assert.deepEqual(s.values, [1, 2.5, 3]);
  assert.equal(s.stepS, 600);
});

test('a series header must put the time column first: swapped columns would forecast the timestamps', () => {
  for (const h of ['timestamp_s,value', 'time,requests_per_s', 't,v', 'Date,Count', 'ts,load']) {
    assert.deepEqual(parseSeriesCsv(`${h}\n0,5\n60,6\n`, 'x.csv').values, [5, 6], h);
  }
  for (const h of ['value,timestamp_s', 'requests,time', 'foo,bar']) {
    assert.throws(() => parseSeriesCsv(`${h}\n100,0\n101,60\n`, 'x.csv'), (e: Error) => e.message === `x.csv:1 header: expected "timestamp_s,value" (the time column first), got "${h}"`);
  }
});

test('bad series rows fail naming file and line', () => {
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n60,NaN\n', 'x.csv'), /x\.csv:3 value: expected a finite number/);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n60,-2\n', 'x.csv'), /x\.csv:3 value: expected a value ≥ 0, got -2/);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n120,2\n60,3\n', 'x.csv'), /x\.csv:4 timestamp_s: expected a timestamp after 120/);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n60,2\n180,3\n', 'x.csv'), /x\.csv:4 timestamp_s: expected 120/);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n60,2\n150,3\n', 'x.csv'), /x\.csv:4 timestamp_s: expected a time on the 60 s grid through 0 .*nearest 120 or 180\), got 150/);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1,2\n', 'x.csv'), /x\.csv:2: expected 2 columns/);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n', 'x.csv'), /at least 2 data rows/);
});

test('gaps can be filled by linear interpolation or zeros when asked', () => {
  const text = 'timestamp_s,value\n0,1\n60,2\n240,8\n';
  assert.deepEqual(parseSeriesCsv(text, 'x.csv', 'linear').values, [1, 2, 4, 6, 8]);
  assert.deepEqual(parseSeriesCsv(text, 'x.csv', 'zero').values, [1, 2, 0, 0, 8]);
  assert.deepEqual(parseSeriesCsv(text, 'x.csv', 'zero').timestampsS, [0, 60, 120, 180, 240]);
});
