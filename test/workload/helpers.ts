import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/util/errors.ts';
import type { TraceRequest } from '../../src/workload/types.ts';

/** A temp folder for one test file; `file(name, text)` writes and returns the path. */
export function tempDir(): { dir: string; file: (name: string, text: string | Buffer) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-workload-'));
  return {
    dir,
    file(name, text) {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function all(src: Iterable<TraceRequest>): TraceRequest[] {
  return [...src];
}

/** Asserts that `fn` throws a ConfigError whose message contains every piece. */
export function assertConfigError(fn: () => unknown, ...pieces: (string | RegExp)[]): ConfigError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err === undefined ? 'no error' : String(err)}`);
  for (const p of pieces) {
    if (typeof p === 'string') assert.ok(err.message.includes(p), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(p)}`);
    else assert.match(err.message, p);
  }
  return err;
}

export const AZURE_DIR = new URL('../../data/azure-llm/', import.meta.url).pathname;
