import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Starts `llmfleet ARGS…` as a process and resolves with the URL it prints on stderr ("… at http://…"). */
export function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['bin/llmfleet.js', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no URL within 30 s: ${err}`));
    }, 30_000);
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = / at (http:\/\/[0-9.:]+)/.exec(err);
      if (m) {
        clearTimeout(t);
        resolve({ child, url: m[1]!, stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`exited ${code}: ${err}`));
    });
  });
}

/** Stops a process with SIGTERM and resolves with its exit code. */
export function stopCli(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** A device and a model the built-in catalog lacks, as a user would add them (src/model/README.md). */
export const USER_CATALOG = `hardware:
  b200: { kind: gpu, memoryBytes: 192e9, bf16Flops: 2.25e15, memBandwidthBytesPerS: 8e12,
          interconnectBytesPerS: 900e9, priceUsdPerHour: 9, devicesPerNode: 8 }
models:
  qwen2.5-7b: { layers: 28, hiddenSize: 3584, heads: 28, kvHeads: 4, headDim: 128, intermediateSize: 18944,
                vocabSize: 152064, params: 7.62e9, activeParams: 7.62e9, contextLength: 32768, bytesPerParam: 2 }
`;

/** A temp folder holding USER_CATALOG as catalog.yaml, and `out`, a not yet existing output folder in it. */
export function userCatalogDir(): { dir: string; catalog: string; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-catalog-'));
  writeFileSync(join(dir, 'catalog.yaml'), USER_CATALOG);
  return { dir, catalog: join(dir, 'catalog.yaml'), out: join(dir, 'o') };
}

/** What `f` writes to stdout (captured, not shown). */
export function printed(f: () => void): string {
  const write = process.stdout.write;
  let out = '';
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    f();
  } finally {
    process.stdout.write = write;
  }
  return out;
}

/** Runs the CLI to its end (the timeout only stops a hung run: the test then fails on its exit status). */
export function runCli(args: string[], cwd?: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [resolve('bin/llmfleet.js'), ...args], { encoding: 'utf8', timeout: 30_000, ...(cwd ? { cwd } : {}) });
}

/** Asserts a run was refused as bad input (exit 2, one line `llmfleet: …` on stderr) and returns that stderr. */
export function refusedInOneLine(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 2, `${what}: exit ${r.status} (signal ${r.signal}): ${r.stderr}`);
  assert.match(r.stderr, /^llmfleet: [^\n]+\n$/, `${what}: one line: ${JSON.stringify(r.stderr)}`);
  return r.stderr;
}
