import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCli, stopCli, userCatalogDir } from '../helpers/cli.ts';

const BIN = 'bin/llmfleet.js';

test('emulate --catalog serves a model on a device that only a catalog file defines', { timeout: 60_000 }, async () => {
  const { catalog } = userCatalogDir();
  const emu = await startCli(['emulate', '--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', catalog, '--port', '0', '--time-scale', '20']);
  try {
    assert.match(emu.stderr(), /emulate: qwen2\.5-7b on b200 ×1 at /);
    const models = (await (await fetch(`${emu.url}/v1/models`)).json()) as { data: { id: string; max_model_len: number }[] };
    assert.deepEqual(models.data.map((m) => [m.id, m.max_model_len]), [['qwen2.5-7b', 32768]]);
    const r = await fetch(`${emu.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'qwen2.5-7b', prompt: 'hi', max_tokens: 2 }) });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, 2);
  } finally {
    assert.equal(await stopCli(emu.child), 0);
  }
});

test('emulate: a catalog-only model without --catalog, or a missing or bad --catalog file, exits 2 with one line', () => {
  const { dir, catalog } = userCatalogDir();
  writeFileSync(join(dir, 'bad.yaml'), 'hardware:\n  b200: { kind: tpu }\n');
  const cases: [string[], RegExp][] = [
    [['--model', 'qwen2.5-7b', '--hardware', 'h100-80gb'], /unknown model 'qwen2\.5-7b'; valid: /],
    [['--model', 'llama3.1-8b', '--hardware', 'b200'], /unknown hardware 'b200'; valid: /],
    [['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', join(dir, 'missing.yaml')], /missing\.yaml: expected a readable catalog YAML file, got "ENOENT/],
    [['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', join(dir, 'bad.yaml')], /bad\.yaml:2 hardware\.b200\.kind: expected /],
    [['--model', 'qwen2.5-7b', '--hardware', 'b200', '--catalog', catalog, '--tp', '8'], /--tp: 8 does not divide qwen2\.5-7b's 28 attention heads/],
    [['--model', 'llama3.1-8b', '--hardware', 'h100-80gb', '--served-name', 'a', '--served-name', 'a'], /--served-name: 'a' given twice; expected distinct model names/],
  ];
  for (const [args, message] of cases) {
    const r = spawnSync(process.execPath, [BIN, 'emulate', '--port', '0', ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^llmfleet: /);
    assert.match(r.stderr, message);
  }
});
