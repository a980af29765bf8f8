import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ByteLineReader, LineReader } from '../../src/workload/line-reader.ts';
import { UserError } from '../../src/util/errors.ts';
import { tempDir } from './helpers.ts';
import { gzipSync } from 'node:zlib';

const tmp = tempDir();
after(() => tmp.cleanup());

/** Reads with both readers (string and byte) and checks they agree. */
function readAll(path: string, chunkBytes?: number): { lines: string[]; nos: number[] } {
  const opts = chunkBytes === undefined ? {} : { chunkBytes };
  const lr = new LineReader(path, opts);
  const lines: string[] = [];
  const nos: number[] = [];
  for (let l = lr.next(); l !== undefined; l = lr.next()) {
    lines.push(l);
    nos.push(lr.lineNo);
  }
  lr.close();
  const br = new ByteLineReader(path, opts);
  const blines: string[] = [];
  const bnos: number[] = [];
  while (br.next()) {
    blines.push(br.text());
    bnos.push(br.lineNo);
  }
  br.close();
  assert.deepEqual(blines, lines, `byte reader, chunk ${chunkBytes}`);
  assert.deepEqual(bnos, nos);
  return { lines, nos };
}

test('reads LF and CRLF lines, with or without a final newline, numbering from 1', () => {
  for (const text of ['a,1\nbb,2\nccc,3\n', 'a,1\r\nbb,2\r\nccc,3', 'a,1\r\nbb,2\nccc,3\r\n']) {
    const p = tmp.file('lines.txt', text);
    for (const chunk of [1, 2, 3, 5, 7, 1 << 20]) {
      const { lines, nos } = readAll(p, chunk);
      assert.deepEqual(lines, ['a,1', 'bb,2', 'ccc,3'], `text ${JSON.stringify(text)} chunk ${chunk}`);
      assert.deepEqual(nos, [1, 2, 3]);
    }
  }
});

test('keeps multi-byte UTF-8 characters whole when a chunk boundary splits them', () => {
  const text = 'héllo,wörld\r\n日本語,🚀\nlast — line';
  const p = tmp.file('utf8.txt', text);
  for (let chunk = 1; chunk <= 12; chunk++) {
    assert.deepEqual(readAll(p, chunk).lines, ['héllo,wörld', '日本語,🚀', 'last — line'], `chunk ${chunk}`);
  }
});

test('drops a UTF-8 byte-order mark and keeps blank lines as empty strings', () => {
  const p = tmp.file('bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('h\n\nx\n')]));
  for (const chunk of [1, 2, 3, 4, 64]) assert.deepEqual(readAll(p, chunk).lines, ['h', '', 'x']);
  const later = tmp.file('later.txt', Buffer.from([0x61, 0x0a, 0xef, 0xbb, 0xbf, 0x62]));
  for (const chunk of [1, 2, 64]) assert.deepEqual(readAll(later, chunk).lines, ['a', '\ufeffb'], 'a BOM after line 1 is data');
});

test('reads an empty file as no lines and a lone newline as one empty line', () => {
  assert.deepEqual(readAll(tmp.file('empty.txt', '')).lines, []);
  assert.deepEqual(readAll(tmp.file('nl.txt', '\n')).lines, ['']);
  assert.deepEqual(readAll(tmp.file('crlf.txt', '\r\n\r\n'), 1).lines, ['', '']);
});

test('reads a line much longer than the chunk size', () => {
  const long = 'x'.repeat(10_000);
  const p = tmp.file('long.txt', `a\n${long}\nb`);
  assert.deepEqual(readAll(p, 16).lines, ['a', long, 'b']);
});

test('a line longer than maxLineBytes (a file without LF line breaks) is a UserError naming the line, in both readers', () => {
  const p = tmp.file('cr-only.csv', `header\n${'a,1,2\r'.repeat(200)}`);
  for (const make of [() => new LineReader(p, { chunkBytes: 16, maxLineBytes: 256 }), () => new ByteLineReader(p, { chunkBytes: 16, maxLineBytes: 256 })]) {
    const r = make();
    assert.ok(r.next());
    assert.throws(
      () => r.next(),
      (e: unknown) => e instanceof UserError && /cr-only\.csv:2: a line longer than 256 bytes; are the lines LF- or CRLF-terminated\?/.test(e.message),
    );
    r.close();
  }
  // A line of exactly the limit (its LF beyond it) still reads.
  const q = tmp.file('at-limit.txt', `${'x'.repeat(255)}\nb`);
  assert.deepEqual(new LineReader(q, { chunkBytes: 16, maxLineBytes: 256 }).next(), 'x'.repeat(255));
});

test('a pipe is refused with one line: a trace is read more than once', () => {
  // /dev/null is a character device: not a regular file, like a pipe or <(cmd).
  assert.throws(() => new LineReader('/dev/null'), (e: unknown) => e instanceof UserError && /\/dev\/null: a pipe or device, not a regular file/.test(e.message));
});

test('a missing file is a one-line UserError naming the path', () => {
  assert.throws(() => new LineReader(`${tmp.dir}/nope.csv`), (e: unknown) => e instanceof UserError && e.message.includes('nope.csv') && e.message.includes('not found'));
  assert.throws(() => new LineReader(tmp.dir), (e: unknown) => e instanceof UserError && e.message.includes('folder'));
});

test('reads gzip files (detected by their magic bytes) line for line like the plain text, multi-member too', () => {
  const text = 'TIMESTAMP,a\r\n' + Array.from({ length: 300 }, (_, i) => `row ${i},é${'x'.repeat(i % 17)}`).join('\n') + '\n';
  const half = text.indexOf('row 150');
  const plain = readAll(tmp.file('plain.txt', text)).lines;
  const one = tmp.file('one.csv.gz', gzipSync(text));
  const two = tmp.file('no-extension', Buffer.concat([gzipSync(text.slice(0, half)), gzipSync(text.slice(half))]));
  for (const p of [one, two]) {
    // chunk 1..: compressed reads that split the gzip header, a member boundary and the trailer
    for (const chunk of [1, 2, 7, 64, 1 << 20]) assert.deepEqual(readAll(p, chunk).lines, plain, `${p} chunk ${chunk}`);
  }
});

test('zeros after the last gzip member are ignored, as gzip(1) does; other trailing bytes are an error', () => {
  const text = 'a,1\nb,2\n'.repeat(40);
  const plain = readAll(tmp.file('pad-plain.txt', text)).lines;
  const z = gzipSync(text);
  const padded = tmp.file('pad.gz', Buffer.concat([z, Buffer.alloc(10)]));
  for (const chunk of [1, 7, 1 << 20]) assert.deepEqual(readAll(padded, chunk).lines, plain, `chunk ${chunk}`);
  const twoPadded = tmp.file('pad2.gz', Buffer.concat([gzipSync(text), gzipSync(text), Buffer.alloc(512)]));
  assert.deepEqual(readAll(twoPadded).lines, [...plain, ...plain]);
  const badCrc = Buffer.concat([z, Buffer.alloc(10)]);
  badCrc[z.length - 8]! ^= 1;
  assert.throws(() => readAll(tmp.file('pad-crc.gz', badCrc)), (e: unknown) => e instanceof UserError && /pad-crc\.gz: not valid gzip data/.test(e.message));
  const junk = Buffer.concat([z, Buffer.from('junk!junk!')]);
  assert.throws(() => readAll(tmp.file('junk.gz', junk)), (e: unknown) => e instanceof UserError && /junk\.gz: not valid gzip data/.test(e.message));
});

test('a corrupt, truncated or other-format compressed file is a one-line UserError naming the path', () => {
  const z = gzipSync('a,1\nb,2\nc,3\n'.repeat(50));
  const badCrc = Buffer.from(z);
  badCrc[z.length - 8]! ^= 1;
  const badSize = Buffer.from(z);
  badSize[z.length - 1]! ^= 1;
  const cases: [string, Buffer, RegExp][] = [
    ['crc.gz', badCrc, /crc\.gz: corrupt gzip data \(the CRC-32 or length in the trailer at byte \d+ does not match/],
    ['size.gz', badSize, /size\.gz: corrupt gzip data/],
    ['cut.gz', z.subarray(0, z.length >> 1), /cut\.gz: not valid gzip data \(truncated: the file ends at byte \d+, inside the compressed data\)/],
    ['t.zip', Buffer.from('PK\x03\x04rest', 'latin1'), /t\.zip: a zip archive; decompress it first/],
    ['t.zst', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]), /t\.zst: a zstd archive/],
  ];
  for (const [name, bytes, msg] of cases) {
    const p = tmp.file(name, bytes);
    for (const chunk of [3, 1 << 20]) {
      assert.throws(() => readAll(p, chunk), (e: unknown) => e instanceof UserError && msg.test(e.message), `${name} chunk ${chunk}`);
    }
  }
});

test('a gzip file cut inside its header or trailer says it is truncated, never "the trailer at byte -6"', () => {
  const text = 'a,1\nb,2\nc,3\n'.repeat(50);
  // gzip(1) with a file name in the header (FNAME flag): 10 fixed bytes + "t.csv\0".
  const z = gzipSync(text);
  const named = Buffer.concat([z.subarray(0, 3), Buffer.from([z[3]! | 0x08]), z.subarray(4, 10), Buffer.from('t.csv\0'), z.subarray(10)]);
  assert.deepEqual(readAll(tmp.file('named.gz', named)).lines, text.trimEnd().split('\n'));
  for (const n of [2, 4, 9, 10, 12, 15]) {
    const p = tmp.file(`head-${n}.gz`, named.subarray(0, n));
    for (const chunk of [1, 3, 1 << 20]) {
      assert.throws(
        () => readAll(p, chunk),
        (e: unknown) => e instanceof UserError && e.message === `${p}: not valid gzip data (truncated: the file ends at byte ${n}, inside the gzip header)`,
        `${n} bytes, chunk ${chunk}`,
      );
    }
  }
  // The header whole but nothing after it.
  const bare = tmp.file('bare.gz', named.subarray(0, 16));
  assert.throws(() => readAll(bare), (e: unknown) => e instanceof UserError && /bare\.gz: not valid gzip data \(truncated: the file ends at byte 16, inside the compressed data\)/.test(e.message));
  // Cut inside the trailer: neither the CRC-32 nor the length can match.
  for (const cut of [1, 4, 8]) {
    const p = tmp.file(`tail-${cut}.gz`, named.subarray(0, named.length - cut));
    assert.throws(() => readAll(p), (e: unknown) => e instanceof UserError && /: corrupt or truncated gzip data \(the CRC-32 or length in the trailer at byte \d+ does not match the inflated data; a file cut short loses its trailer\)$/.test(e.message) && !/byte -/.test(e.message), `cut ${cut}`);
  }
});

test('a two-member gzip file cut inside the second member\'s header says truncated there, as one member does', () => {
  // Old code: "corrupt or truncated gzip data (the CRC-32 or length in the trailer at byte … does not match …)":
  // fflate announces a member only once its header is whole, so the trailer check read the wrong 8 bytes.
  const a = gzipSync('a,1\nb,2\n'.repeat(40));
  const b = gzipSync('c,3\n'.repeat(40));
  const named = Buffer.concat([b.subarray(0, 3), Buffer.from([b[3]! | 0x08]), b.subarray(4, 10), Buffer.from('t.csv\0'), b.subarray(10)]);
  const two = Buffer.concat([a, named]);
  assert.equal(readAll(tmp.file('two.gz', two)).lines.length, 120);
  for (const n of [1, 2, 3, 9, 10, 12, 15]) {
    const p = tmp.file(`two-head-${n}.gz`, two.subarray(0, a.length + n));
    for (const chunk of [1, 3, 1 << 20]) {
      assert.throws(
        () => readAll(p, chunk),
        (e: unknown) => e instanceof UserError && e.message === `${p}: not valid gzip data (truncated: the file ends at byte ${a.length + n}, inside the gzip header of the member at byte ${a.length})`,
        `${n} bytes into member 2, chunk ${chunk}`,
      );
    }
  }
  // Cut inside its compressed data: the member is named too.
  const mid = tmp.file('two-mid.gz', two.subarray(0, a.length + 20));
  assert.throws(() => readAll(mid), (e: unknown) => e instanceof UserError && e.message === `${mid}: not valid gzip data (truncated: the file ends at byte ${a.length + 20}, inside the compressed data of the member at byte ${a.length})`);
});

test('a file with CR-only line endings (classic Mac OS) is refused at line 1 by both readers, naming the fix', () => {
  const p = tmp.file('cr.csv', 'arrival_s,input_tokens,output_tokens\r0,5,10\r1,5,10\r');
  const want = (e: unknown) => e instanceof UserError && e.message === `${p}:1: lines end with CR alone (classic Mac OS); expected LF or CRLF line endings (convert with: tr '\\r' '\\n' < in > out)`;
  for (const chunk of [4, 1 << 20]) {
    const lr = new LineReader(p, { chunkBytes: chunk });
    assert.throws(() => lr.next(), want);
    lr.close();
    const br = new ByteLineReader(p, { chunkBytes: chunk });
    assert.throws(() => br.next(), want);
    br.close();
  }
});
