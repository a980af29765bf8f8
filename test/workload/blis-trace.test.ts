import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat, openTrace } from '../../src/workload/index.ts';
import { newStats } from '../../src/workload/readers/reader.ts';
import { BLIS_SKIP_ERROR, BLIS_SKIP_NO_OUTPUT, BLIS_SKIP_TIMEOUT, blisTraceReader } from '../../src/workload/readers/blis-trace.ts';
import { all, assertConfigError, tempDir } from './helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** `blis observe` output: trace.yaml (header) and trace.csv (rows in completion order, one error, one timeout, one 0-output row). */
const FIXTURE = new URL('./fixtures/blis/', import.meta.url).pathname;
const CSV = join(FIXTURE, 'trace.csv');
const YAML = join(FIXTURE, 'trace.yaml');
const M = 'meta-llama/Llama-3.1-8B-Instruct';
const HEADER = readFileSync(CSV, 'utf8').split('\n')[0]!;

const EXPECTED = [
  // request 0 arrived first (120000 µs: time zero) but completed fourth; deadline_us 30120000 is absolute.
  { id: 0, arrivalS: 0, inputTokens: 518, outputTokens: 128, model: M, tier: 'standard', app: 'chat-user', deadlineS: 30 },
  // server_input_tokens (262) is the prompt when the row has no prefix_group.
  { id: 1, arrivalS: 0.25, inputTokens: 262, outputTokens: 64, model: M, tier: 'critical', app: 'chat-user' },
  // prefix_group sys-a: input_tokens (suffix, 50) + prefix_length (100), as BLIS's replay counts it.
  { id: 2, arrivalS: 0.9, inputTokens: 150, outputTokens: 20, model: M, tier: 'sheddable', app: 'rag' },
];
const SKIPPED = { [BLIS_SKIP_ERROR]: 1, [BLIS_SKIP_NO_OUTPUT]: 1, [BLIS_SKIP_TIMEOUT]: 1 };

/** A CSV with the fixture's header and rows built from a few fields (the rest as blis observe writes them). */
function rows(...r: { id: number; t: number; in?: number | string; out?: number | string; status?: string; d?: number | string; server?: number; err?: string }[]): string {
  return [
    HEADER,
    ...r.map((x) =>
      [x.id, 'c', 't', 'standard', 1, '', 0, '', 0, 'true', x.in ?? 10, x.out ?? 5, 0, 0, 0, 0, 0, M, x.d ?? 0, x.server ?? 0, x.t, 0, 0, 0, 1, x.status ?? 'ok', x.err ?? '', 'stop'].join(','),
    ),
  ].join('\n');
}

test('reads a blis observe TraceV2 CSV in arrival order, re-based to its earliest row, with labels and deadline', () => {
  for (const chunkBytes of [undefined, 7]) {
    const src = openTrace(CSV, 'blis', chunkBytes === undefined ? {} : { chunkBytes });
    assert.deepEqual(all(src), EXPECTED);
    assert.deepEqual(src.stats, { rows: 3, skipped: SKIPPED });
  }
});

test('detectFormat recognises the data CSV by its columns, and the detected read is the same', () => {
  assert.equal(detectFormat(CSV), 'blis');
  assert.deepEqual(all(openTrace(CSV, detectFormat(CSV))), EXPECTED);
});

test('skipped rows (status error / timeout, output_tokens 0) reach onSkip in arrival order, on the requests\' clock', () => {
  const seen: [string, number][] = [];
  const src = openTrace(CSV, 'blis', { onSkip: (reason, t) => seen.push([reason, t]) });
  seen.length = 0; // openTrace's first-row check reads a pass of its own
  all(src);
  assert.deepEqual(seen, [
    [BLIS_SKIP_ERROR, 0.4],
    [BLIS_SKIP_NO_OUTPUT, 1.2],
    [BLIS_SKIP_TIMEOUT, 1.5],
  ]);
});

test('a skipped row that arrived first is time zero; incomplete and empty statuses are kept', () => {
  const p = tmp.file('zero.csv', rows({ id: 1, t: 2_500_000, status: 'incomplete' }, { id: 0, t: 1_000_000, out: 0, status: 'error' }, { id: 2, t: 3_000_000, status: '' }));
  const src = openTrace(p, 'blis');
  assert.deepEqual(all(src).map((r) => [r.id, r.arrivalS]), [[0, 1.5], [1, 2]]);
  assert.deepEqual(src.stats.skipped, { [BLIS_SKIP_ERROR]: 1 });
});

test('an error_message with line breaks inside its quotes (an HTTP error body) is one row', () => {
  const p = tmp.file('multi.csv', rows({ id: 0, t: 0, out: 0, status: 'error', err: '"HTTP 502: <html>\n<body>Bad ""gateway""</body>\n</html>"' }, { id: 1, t: 10 }) + '\n');
  const src = openTrace(p, 'blis');
  assert.deepEqual(all(src).map((r) => [r.id, r.arrivalS, r.inputTokens]), [[0, 0.00001, 10]]);
  assert.deepEqual(src.stats.skipped, { [BLIS_SKIP_ERROR]: 1 });
  assertConfigError(() => all(openTrace(tmp.file('open.csv', rows({ id: 0, t: 0 }, { id: 1, t: 1, status: 'error', err: '"HTTP 500: never closed' })), 'blis')), 'open.csv:3 row: expected 28 comma-separated fields', 'closing quote');
});

test('rows later than the reorder buffer are an error naming the line; within it they are put back in order', () => {
  const read = (p: string, window: number) => [...blisTraceReader(window)(p, {}, newStats())].map((r) => r.arrivalS);
  const p = tmp.file('late.csv', rows({ id: 1, t: 2_000_000 }, { id: 2, t: 3_000_000 }, { id: 3, t: 4_000_000 }, { id: 0, t: 1_000_000 }));
  assert.deepEqual(read(p, 3), [0, 1, 2, 3]);
  assertConfigError(() => read(p, 2), 'late.csv:5 arrival_time_us: expected an arrival not before 2000000 µs, that of line 2, already handed on', 'at most 2 rows late', 'got 1000000');
});

test('the YAML header file, passed instead of the CSV, says which file to pass', () => {
  assertConfigError(() => openTrace(YAML, 'blis'), 'trace.yaml:1 header: expected', 'blis observe --trace-data', 'YAML header file (--trace-header)', 'got "trace_version: 3"');
});

test('bad BLIS rows name file, line, column, what was expected and the value', () => {
  const read = (name: string, ...r: Parameters<typeof rows>) => all(openTrace(tmp.file(name, rows({ id: 0, t: 0 }, ...r)), 'blis'));
  assertConfigError(() => read('t.csv', { id: 1, t: '1.5e6' as unknown as number }), 't.csv:3 arrival_time_us: expected an integer number of microseconds ≥ 0, got "1.5e6"');
  assertConfigError(() => read('neg.csv', { id: 1, t: -5 }), 'neg.csv:3 arrival_time_us: expected an integer number of microseconds ≥ 0, got -5');
  assertConfigError(() => read('o.csv', { id: 1, t: 1, out: -5 }), 'o.csv:3 output_tokens: expected an integer ≥ 0 and ≤ 1e9 (0 = no output, skipped), got -5');
  assertConfigError(() => read('o2.csv', { id: 1, t: 1, out: '5.0' }), 'o2.csv:3 output_tokens', 'got "5.0"');
  assertConfigError(() => read('i.csv', { id: 1, t: 1, in: 0 }), 'i.csv:3 input_tokens: expected an integer ≥ 1 and ≤ 1e9 in all: input_tokens (server_input_tokens is 0), got 0');
  assertConfigError(() => read('s.csv', { id: 1, t: 1, status: 'failed' }), 's.csv:3 status: expected ok, error, timeout, incomplete or an empty cell, got "failed"');
  assertConfigError(() => read('d.csv', { id: 1, t: 5_000_000, d: 1_000_000 }), 'd.csv:3 deadline_us: expected an absolute deadline ≥ arrival_time_us (5000000), or 0 for none, got 1000000');
  assertConfigError(() => read('r.csv', { id: -1, t: 1 }), 'r.csv:3 request_id: expected an integer ≥ 0, got -1');
  assertConfigError(() => all(openTrace(tmp.file('w.csv', rows({ id: 0, t: 0 }) + '\n1,2,3'), 'blis')), 'w.csv:3 row: expected 28 comma-separated fields');
  assertConfigError(() => openTrace(tmp.file('h.csv', 'request_id,arrival_time_us,input_tokens\n0,0,5'), 'blis'), 'h.csv:1 output_tokens: expected a header with column output_tokens');
  assert.throws(() => openTrace(tmp.file('none.csv', rows({ id: 0, t: 0, out: 0, status: 'error' })), 'blis'), /none\.csv: the trace has no requests \(rows skipped: 1 failed \(status error\)\)/);
});

test('simulate replays a BLIS trace end to end through the CLI', () => {
  const out = join(tmp.dir, 'sim');
  const r = spawnSync(
    process.execPath,
    ['bin/llmfleet.js', 'simulate', '--scenario', 'scenarios/default.yaml', '--set', `workload.trace.path=${CSV}`, '--set', 'workload.trace.format=blis',
      '--set', 'workload.transforms.model=llama3.1-8b', '--out', out, '--no-report', '--quiet'],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { requests: { total: number; completed: number; skippedInTrace: Record<string, number> } };
  assert.equal(summary.requests.total, 3);
  assert.equal(summary.requests.completed, 3);
  assert.deepEqual(summary.requests.skippedInTrace, SKIPPED);
});
