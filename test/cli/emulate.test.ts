import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = 'bin/llmfleet.js';

// A device and a model the built-in catalog lacks, as a user would add them (src/model/README.md).
const CATALOG = `hardware:
  b200: { kind: gpu, memoryBytes: 192e9, bf16Flops: 2.25e15, memBandwidthBytesPerS: 8e12,
          interconnectBytesPerS: 900e9, priceUsdPerHour: 9, devicesPerNode: 8 }
models:
  qwen2.5-7b: { layers: 28, hiddenSize: 3584, heads: 28, kvHeads: 4, headDim: 128, intermediateSize: 18944,
                vocabSize: 152064, params: 7.62e9, activeParams: 7.62e9, contextLength: 32768, bytesPerParam: 2 }
`;

function catalogFile(): { dir: string; catalog: string } {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-emu-'));
  writeFileSync(join(dir, 'catalog.yaml'), CATALOG);
  return { dir, catalog: join(dir, 'catalog.yaml') };
}

/** Starts `emulate` and resolves with the URL it prints on stderr ("… at http://…"). */
function startEmulate(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, 'emulate', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
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

test('emulate --catalog serves a model on a device that only a catalog file defines', { timeout: 60_000 }, async () => {
  const { catalog } = catalogFile();
  const emu = await startEmulate(['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', catalog, '--port', '0', '--time-scale', '20']);
  try {
    assert.match(emu.stderr(), /emulate: qwen2\.5-7b on b200 ×1 at /);
    const models = (await (await fetch(`${emu.url}/v1/models`)).json()) as { data: { id: string; max_model_len: number }[] };
    assert.deepEqual(models.data.map((m) => [m.id, m.max_model_len]), [['qwen2.5-7b', 32768]]);
    const r = await fetch(`${emu.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'qwen2.5-7b', prompt: 'hi', max_tokens: 2 }) });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, 2);
  } finally {
    const exited = new Promise<number | null>((resolve) => emu.child.once('exit', (code) => resolve(code)));
    emu.child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

test('emulate: a catalog-only model without --catalog, or a missing or bad --catalog file, exits 2 with one line', () => {
  const { dir, catalog } = catalogFile();
  writeFileSync(join(dir, 'bad.yaml'), 'hardware:\n  b200: { kind: tpu }\n');
  const cases: [string[], RegExp][] = [
    [['--model', 'qwen2.5-7b', '--hardware', 'h100-80gb'], /unknown model 'qwen2\.5-7b'; valid: /],
    [['--model', 'llama3.1-8b', '--hardware', 'b200'], /unknown hardware 'b200'; valid: /],
    [['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', join(dir, 'missing.yaml')], /missing\.yaml: expected a readable catalog YAML file, got "ENOENT/],
    [['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', join(dir, 'bad.yaml')], /bad\.yaml:2 hardware\.b200\.kind: expected /],
    [['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', catalog, '--tp', '8'], /--tp: 8 does not divide qwen2\.5-7b's 28 attention heads/],
  ];
  for (const [args, message] of cases) {
    const r = spawnSync(process.execPath, [BIN, 'emulate', '--port', '0', ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^llmfleet: /);
    assert.match(r.stderr, message);
  }
});
