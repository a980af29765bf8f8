import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { detectFormat, openTrace } from '../../../src/workload/index.ts';
import { UserError } from '../../../src/util/errors.ts';
import { AZURE_SKIP_NO_OUTPUT } from '../../../src/workload/readers/azure.ts';
import { AZURE_DIR, all, assertConfigError, tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());
const HEADER = 'TIMESTAMP,ContextTokens,GeneratedTokens';

/** An independent reference: the timestamp as BigInt 100 ns ticks through Date.parse of the whole seconds. */
function refTicks(stamp: string): bigint {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?$/.exec(stamp)!;
  const wholeMs = BigInt(Date.parse(`${m[1]}T${m[2]}Z`));
  return wholeMs * 10_000n + BigInt((m[3] ?? '').padEnd(7, '0'));
}

test('reads the bundled conv trace: 19,366 rows, exact first and last arrival, every arrival exact', () => {
  const path = `${AZURE_DIR}AzureLLMInferenceTrace_conv.csv`;
  const reqs = all(openTrace(path, 'azure'));
  assert.equal(reqs.length, 19_366);
  assert.deepEqual(reqs[0], { id: 0, arrivalS: 0, inputTokens: 374, outputTokens: 44 });
  // 19:14:08.4025270 − 18:15:46.6805900 = 58 min 21.7219370 s
  assert.deepEqual(reqs.at(-1), { id: 19_365, arrivalS: 3501.721937, inputTokens: 197, outputTokens: 183 });
  const rows = readFileSync(path, 'utf8').split('\r\n').slice(1);
  const t0 = refTicks(rows[0]!.split(',')[0]!);
  rows.forEach((row, i) => {
    const [stamp, inp, out] = row.split(',');
    const r = reqs[i]!;
    assert.equal(r.id, i);
    assert.equal(r.arrivalS, Number(refTicks(stamp!) - t0) / 1e7, `row ${i + 2}`);
    assert.equal(r.inputTokens, Number(inp));
    assert.equal(r.outputTokens, Number(out));
  });
});

test('reads the bundled code trace: 8,819 rows, last arrival 3435.948056 s', () => {
  const reqs = all(openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_code.csv`, 'azure'));
  assert.equal(reqs.length, 8_819);
  assert.deepEqual(reqs[0], { id: 0, arrivalS: 0, inputTokens: 4808, outputTokens: 10 });
  // 19:14:19.9280160 − 18:17:03.9799600 = 57 min 15.9480560 s
  assert.deepEqual(reqs.at(-1), { id: 8_818, arrivalS: 3435.948056, inputTokens: 549, outputTokens: 173 });
});

test('reads a gzipped trace as the plain one, format detected through the compression', () => {
  const plainPath = `${AZURE_DIR}AzureLLMInferenceTrace_code.csv`;
  const gz = tmp.file('code.csv.gz', gzipSync(readFileSync(plainPath)));
  assert.equal(detectFormat(gz), 'azure');
  assert.deepEqual(all(openTrace(gz, 'azure')), all(openTrace(plainPath, 'azure')));
});

test('gives the same requests for any chunk size, including ones that split lines and CRLF pairs', () => {
  const text = readFileSync(`${AZURE_DIR}AzureLLMInferenceTrace_code.csv`, 'utf8').split('\r\n').slice(0, 60).join('\r\n');
  const p = tmp.file('chunks.csv', text);
  const ref = all(openTrace(p, 'azure'));
  assert.equal(ref.length, 59);
  for (const chunkBytes of [1, 2, 3, 7, 37, 38, 39, 100]) assert.deepEqual(all(openTrace(p, 'azure', { chunkBytes })), ref, `chunk ${chunkBytes}`);
});

test('reads 2024 stamps: +00:00 offsets, with and without fractional seconds, and other offsets', () => {
  const p = tmp.file(
    '2024.csv',
    [
      HEADER,
      '2024-05-10 23:59:59.9+00:00,10,2',
      '2024-05-11 00:00:00+00:00,11,3',
      '2024-05-11 00:00:00.0174130+00:00,12,4',
      '2024-05-11 02:00:01+02:00,13,5', // = 00:00:01Z
      '2024-05-11T00:00:01.5Z,14,6',
      '2024-05-10 20:00:02-04:00,15,7', // = 00:00:02Z
    ].join('\n') + '\n',
  );
  assert.deepEqual(
    all(openTrace(p, 'azure')).map((r) => r.arrivalS),
    [0, 0.1, 0.117413, 1.1, 1.6, 2.1],
  );
});

test('reads the 2025 multimodal layout (TIMESTAMP,NumImages,ContextTokens,GeneratedTokens): NumImages checked, not modelled', () => {
  // The first rows of AzureLMMInferenceTrace_multimodal.csv as its notebook shows them, one quoted, one with no output.
  const p = tmp.file(
    'mm.csv',
    [
      'TIMESTAMP,NumImages,ContextTokens,GeneratedTokens',
      '2024-10-15T12:00:00.269Z,0,770,491',
      '2024-10-15T12:00:05.819Z,1,949,126',
      '"2024-10-15T12:00:06.513Z", 1 ,964,79',
      '2024-10-15T12:00:07.332Z,16,78,0',
      '2024-10-15T12:00:07.566Z,1,1724,28',
    ].join('\n') + '\n',
  );
  assert.equal(detectFormat(p), 'azure');
  const src = openTrace(p, 'azure');
  assert.deepEqual(all(src).map((r) => [r.id, r.arrivalS, r.inputTokens, r.outputTokens]), [
    [0, 0, 770, 491],
    [1, 5.55, 949, 126],
    [2, 6.244, 964, 79],
    [3, 7.297, 1724, 28],
  ]);
  assert.deepEqual(src.stats.skipped, { [AZURE_SKIP_NO_OUTPUT]: 1 });
  const bad = (row: string) => tmp.file('mm-bad.csv', `TIMESTAMP,NumImages,ContextTokens,GeneratedTokens\n2024-10-15T12:00:00.269Z,0,770,491\n${row}\n`);
  assertConfigError(() => all(openTrace(bad('2024-10-15T12:00:01Z,-1,5,5'), 'azure')), 'mm-bad.csv:3 NumImages: expected an integer ≥ 0 and ≤ 1e9, got -1');
  assertConfigError(() => all(openTrace(bad('2024-10-15T12:00:01Z,5,5'), 'azure')), 'mm-bad.csv:3 row: expected 4 comma-separated fields');
  assertConfigError(() => all(openTrace(bad('2024-10-15T12:00:01Z,1,0,5'), 'azure')), 'mm-bad.csv:3 ContextTokens');
});

test('keeps equal timestamps and skips blank lines', () => {
  const p = tmp.file('same.csv', `${HEADER}\n2023-11-16 18:15:46.6805900,1,1\n\n2023-11-16 18:15:46.6805900,2,2\n`);
  assert.deepEqual(all(openTrace(p, 'azure')).map((r) => [r.id, r.arrivalS]), [[0, 0], [1, 0]]);
});

test('takes years 0000-0099 as written, not as 1900-1999 (Date.UTC two-digit-year rule): year 0 is a leap year', () => {
  const arrivals = (name: string, ...stamps: string[]) => all(openTrace(tmp.file(name, [HEADER, ...stamps.map((s) => `${s},10,10`)].join('\n')), 'azure')).map((r) => r.arrivalS);
  // 0000 is a leap year in ISO 8601 (1900, which Date.UTC made of it, is not): two days, and Feb 29 exists.
  assert.deepEqual(arrivals('y0.csv', '0000-02-28 00:00:00', '0000-03-01 00:00:00'), [0, 172_800]);
  assert.deepEqual(arrivals('y0leap.csv', '0000-02-29 00:00:00', '0000-03-01 00:00:00'), [0, 86_400]);
  // In order across the 0099 → 0100 boundary (1999 → 0100 ran backwards).
  assert.deepEqual(arrivals('y99.csv', '0099-12-31 23:59:59', '0100-01-01 00:00:00'), [0, 1]);
  assert.deepEqual(arrivals('y1900.csv', '1900-02-28 00:00:00', '1900-03-01 00:00:00'), [0, 86_400]);
  assertConfigError(() => arrivals('y1900bad.csv', '1900-02-28 00:00:00', '1900-02-29 00:00:00'), 'y1900bad.csv:3 TIMESTAMP: expected a timestamp', '1900-02-29');
});

test('rejects each bad row with file, line, column, what was expected and the value', () => {
  const row = (n: number) => `2023-11-16 18:15:${String(40 + n).padStart(2, '0')}.0000000,${n},${n}`;
  const file = (bad: string, at = 5) => {
    const lines = [HEADER];
    for (let i = 1; i < at - 1; i++) lines.push(row(i));
    lines.push(bad);
    return tmp.file('bad.csv', lines.join('\r\n'));
  };
  // Errors surface while streaming; the first row is also checked when the trace opens.
  const read = (p: string) => all(openTrace(p, 'azure'));
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,374,-5', 21)), 'bad.csv:21 GeneratedTokens: expected an integer ≥ 0 and ≤ 1e9 (rows with 0 are skipped), got -5');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,0,5')), 'bad.csv:5 ContextTokens: expected an integer ≥ 1 and ≤ 1e9, got 0');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,999999999999999,5')), 'bad.csv:5 ContextTokens: expected an integer ≥ 1 and ≤ 1e9, got 999999999999999');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,1.5,5')), 'bad.csv:5 ContextTokens', 'got 1.5');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,12,')), 'bad.csv:5 GeneratedTokens', 'got ""');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,abc,5')), 'bad.csv:5 ContextTokens', 'got "abc"');
  assertConfigError(() => read(file('2023-11-16 25:15:50.0000000,1,5')), 'bad.csv:5 TIMESTAMP: expected a timestamp', '25:15:50');
  assertConfigError(() => read(file('2023-02-30 10:15:50,1,5')), 'bad.csv:5 TIMESTAMP', '2023-02-30');
  assertConfigError(() => read(file('2023-11-16 18:15:50.12345678,1,5')), 'bad.csv:5 TIMESTAMP');
  assertConfigError(() => read(file('2023-11-16 18:15:50+0000,1,5')), 'bad.csv:5 TIMESTAMP');
  assertConfigError(() => read(file('yesterday,1,5')), 'bad.csv:5 TIMESTAMP', 'got "yesterday"');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000,1,5,9')), 'bad.csv:5 row: expected 3 comma-separated fields');
  assertConfigError(() => read(file('2023-11-16 18:15:50.0000000;1;5')), 'bad.csv:5 row');
  assertConfigError(() => read(file('2023-11-16 18:15:40.0000000,1,5')), 'bad.csv:5 TIMESTAMP: expected arrivals in non-decreasing order');
  assertConfigError(() => openTrace(file('2023-11-16 18:15:40.0000000,1,x', 2), 'azure'), 'bad.csv:2 GeneratedTokens');
  assertConfigError(() => openTrace(tmp.file('hdr.csv', 'time,in,out\n2023-11-16 18:15:40,1,1'), 'azure'), 'hdr.csv:1 header: expected TIMESTAMP,ContextTokens,GeneratedTokens or TIMESTAMP,NumImages,ContextTokens,GeneratedTokens');
});

test('skips rows with GeneratedTokens 0, counts them, and keeps time zero at the first row of the file', () => {
  const p = tmp.file('z.csv', [HEADER, '2023-11-16 18:15:40.0000000,5,0', '2023-11-16 18:15:41.5000000,6,2', '2023-11-16 18:15:43.0000000,7,0', '2023-11-16 18:15:44.0000000,8,3'].join('\n'));
  const src = openTrace(p, 'azure');
  assert.deepEqual(all(src), [
    { id: 0, arrivalS: 1.5, inputTokens: 6, outputTokens: 2 },
    { id: 1, arrivalS: 4, inputTokens: 8, outputTokens: 3 },
  ]);
  assert.deepEqual(src.stats, { rows: 2, skipped: { [AZURE_SKIP_NO_OUTPUT]: 2 } });
  assert.throws(() => openTrace(tmp.file('only0.csv', `${HEADER}\n2023-11-16 18:15:40.0000000,5,0\n`), 'azure'), (e: unknown) => e instanceof UserError && e.message.includes('no requests'));
});

test('skips a GeneratedTokens 0 row whatever its ContextTokens (0 included), on the fast and the quoted path', () => {
  for (const row of ['2023-11-16 18:15:41.0000000,0,0', '"2023-11-16 18:15:41.0000000", 0 ,"0"']) {
    const p = tmp.file('z0.csv', [HEADER, '2023-11-16 18:15:40.0000000,5,2', row, '2023-11-16 18:15:42.0000000,7,3'].join('\n'));
    const src = openTrace(p, 'azure');
    assert.deepEqual(all(src).map((r) => [r.id, r.arrivalS]), [[0, 0], [1, 2]], row);
    assert.deepEqual(src.stats, { rows: 2, skipped: { [AZURE_SKIP_NO_OUTPUT]: 1 } }, row);
  }
  const bad = tmp.file('z0bad.csv', [HEADER, '2023-11-16 18:15:40.0000000,5,2', '2023-11-16 18:15:41.0000000,x,0'].join('\n'));
  assertConfigError(() => all(openTrace(bad, 'azure')), 'z0bad.csv:3 ContextTokens: expected an integer ≥ 0', 'got "x"');
});

test('a missing file or an empty trace is a UserError naming the path', () => {
  assert.throws(() => openTrace(`${tmp.dir}/missing.csv`, 'azure'), (e: unknown) => e instanceof UserError && e.message.includes('missing.csv'));
  for (const text of ['', `${HEADER}\r\n`, `${HEADER}\n\n\n`]) {
    assert.throws(
      () => openTrace(tmp.file('empty.csv', text), 'azure'),
      (e: unknown) => e instanceof UserError && e.message.includes('empty.csv') && e.message.includes('no requests'),
    );
  }
});

test('can be iterated twice with the same result, and an early break closes cleanly', () => {
  const src = openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_code.csv`, 'azure');
  let n = 0;
  for (const _ of src) if (++n === 10) break;
  const a = all(src);
  const b = all(src);
  assert.equal(a.length, 8_819);
  assert.deepEqual(a, b);
  assert.equal(src.stats.rows, 8_819);
});

test('any valid Azure file parses to the exact rows for any chunk size and line ending (property)', async () => {
  const fc = (await import('fast-check')).default;
  const row = fc.record({
    gapTicks: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 9_000_000_000 })),
    digits: fc.integer({ min: 0, max: 7 }),
    offset: fc.constantFrom('', '+00:00', 'Z'),
    input: fc.integer({ min: 1, max: 200_000 }),
    output: fc.integer({ min: 1, max: 5_000 }),
  });
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  fc.assert(
    fc.property(fc.array(row, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 80 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), (rows, chunkBytes, eol, finalEol) => {
      let ticks = BigInt(Date.UTC(2024, 4, 10)) * 10_000n;
      const lines = [HEADER];
      const want: number[] = [];
      let first = -1n;
      for (const r of rows) {
        // Round the tick count up to what `digits` fractional digits can express (up keeps the order).
        const unit = 10n ** BigInt(7 - r.digits);
        ticks += BigInt(r.gapTicks);
        ticks += (unit - (ticks % unit)) % unit;
        const d = new Date(Number(ticks / 10_000n));
        const stamp =
          `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ` +
          `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}` +
          (r.digits > 0 ? '.' + pad(Number(ticks % 10_000_000n), 7).slice(0, r.digits) : '') +
          r.offset;
        lines.push(`${stamp},${r.input},${r.output}`);
        if (first < 0n) first = ticks;
        want.push(Number(ticks - first) / 1e7);
      }
      const p = tmp.file('prop.csv', lines.join(eol) + (finalEol ? eol : ''));
      const got = all(openTrace(p, 'azure', { chunkBytes }));
      assert.deepEqual(got.map((g) => g.arrivalS), want);
      assert.deepEqual(got.map((g) => [g.id, g.inputTokens, g.outputTokens]), rows.map((r, i) => [i, r.input, r.output]));
    }),
    { numRuns: 200, seed: 7 },
  );
});
