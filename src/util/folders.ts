import { accessSync, closeSync, constants, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { UserError } from './errors.ts';

/**
 * Creates an output folder (or checks an existing one is a writable folder) before any work starts, so a bad
 * `--out` is one line and exit 2 up front, not a stack trace after minutes of computing. The folder's nearest
 * existing ancestor must be a writable folder; the missing levels below it are then made one at a time. Node's
 * `mkdirSync(…, { recursive: true })` is not used: on procfs (`--out /proc/x`) it loops forever, mkdir of the
 * child failing with ENOENT and of the parent with EEXIST.
 */
export function prepareOutDir(flag: string, dir: string): string {
  try {
    const missing: string[] = [];
    let p = resolve(dir);
    for (;;) {
      // ENOTDIR (a file on the way) throws; only "no such entry" gives undefined.
      const st = statSync(p, { throwIfNoEntry: false });
      if (st !== undefined) {
        if (!st.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
        break;
      }
      missing.push(p);
      const parent = dirname(p);
      if (parent === p) throw Object.assign(new Error('no existing ancestor'), { code: 'ENOENT' });
      p = parent;
    }
    accessSync(p, constants.W_OK);
    for (const m of missing.reverse()) {
      try {
        mkdirSync(m);
      } catch (e) {
        // Made meanwhile by another process: fine when it is a folder.
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(m).isDirectory()) throw e;
      }
    }
    accessSync(dir, constants.W_OK);
    probeWrite(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'it (or a parent) is a file, not a folder'
      : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
      : code === 'ENOENT' ? 'cannot create a folder there (ENOENT)'
      : code === 'EROFS' ? 'read-only file system'
      : code;
    throw new UserError(`${flag} ${dir}: cannot write there: ${why}`);
  }
  return dir;
}

/**
 * Creates and removes an empty file in `dir`: access(W_OK) looks only at permission bits, which root passes
 * everywhere, so `calibrate --out /sys/kernel` ran its whole fit and failed only on writing calibration.json
 * (sysfs refuses new files whatever the mode bits say). Throws the creation's error (EACCES, EROFS, …).
 */
function probeWrite(dir: string): void {
  const probe = join(dir, `.llmfleet-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  closeSync(openSync(probe, 'wx'));
  unlinkSync(probe);
}
