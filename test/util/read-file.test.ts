import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_STREAM_BYTES, readTextFile } from '../../src/util/read-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'llmfleet-read-file-'));

test('readTextFile: a regular file is read whole; a missing file or a folder fails as readFileSync does', () => {
  writeFileSync(join(dir, 'a.yaml'), 'seed: 1\n');
  assert.equal(readTextFile(join(dir, 'a.yaml')), 'seed: 1\n');
  assert.throws(() => readTextFile(join(dir, 'missing.yaml')), { code: 'ENOENT' });
  assert.throws(() => readTextFile(dir), { code: 'EISDIR' });
});

test('readTextFile: a FIFO nobody writes to reads as empty at once (it blocked for ever); /dev/zero is an error, not an endless read', { skip: process.platform === 'win32' }, () => {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const t0 = performance.now();
  assert.equal(readTextFile(fifo), '');
  assert.ok(performance.now() - t0 < 5000);
  assert.throws(() => readTextFile('/dev/zero'), new RegExp(`^Error: a pipe or device giving more than ${MAX_STREAM_BYTES / 1024 / 1024} MiB; expected a file$`));
  assert.equal(readTextFile('/dev/null'), '');
});
