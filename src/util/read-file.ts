import { closeSync, constants, openSync, readFileSync, readSync, statSync } from 'node:fs';

/** The most bytes read from a pipe or device (a regular file is read whole): /dev/zero never ends. */
export const MAX_STREAM_BYTES = 64 * 1024 * 1024;

/**
 * readFileSync(path, 'utf8') for an input file that is read once (a scenario, a config, a series). A regular file,
 * a missing one or a folder goes to readFileSync as before (ENOENT, EISDIR). A pipe or device is read without
 * waiting for a writer to appear and up to MAX_STREAM_BYTES: `--scenario <(envsubst < s.yaml)` still works, but a
 * FIFO nobody writes to reads as empty instead of blocking for ever, and /dev/zero is an error instead of a read
 * that never ends.
 */
export function readTextFile(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined || st.isFile() || st.isDirectory()) return readFileSync(path, 'utf8');
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const chunks: Buffer[] = [];
    const buf = Buffer.allocUnsafe(1 << 16);
    let total = 0;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        // A writer is there but has not written yet: wait for it, as a blocking read would.
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        throw e;
      }
      if (n === 0) break;
      total += n;
      if (total > MAX_STREAM_BYTES) throw new Error(`a pipe or device giving more than ${MAX_STREAM_BYTES / 1024 / 1024} MiB; expected a file`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
