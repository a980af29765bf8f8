import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ByteLineReader, LineReader } from '../../src/workload/line-reader.ts';
import { UserError } from '../../src/util/errors.ts';
import { tempDir } from './helpers.ts';

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

test('a missing file is a one-line UserError naming the path', () => {
  assert.throws(() => new LineReader(`${tmp.dir}/nope.csv`), (e: unknown) => e instanceof UserError && e.message.includes('nope.csv') && e.message.includes('not found'));
  assert.throws(() => new LineReader(tmp.dir), (e: unknown) => e instanceof UserError && e.message.includes('folder'));
});
