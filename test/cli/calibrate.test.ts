import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { userCatalogDir } from '../helpers/cli.ts';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', ...args], { encoding: 'utf8' });

test('calibrate --map names an unknown catalog model or a key the profile does not have (exit 2, one line)', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'llmfleet-cal-')), 'o');
  for (const [map, message] of [
    ['llama2-70b=gpt-9', /--map llama2-70b=gpt-9: unknown model 'gpt-9'; valid: .*llama2-70b/],
    ['nokey=llama3.1-8b', /--map nokey=llama3\.1-8b: 'nokey' is not a model of .*splitwise_perf_model\.csv \(its models: bloom-176b, llama2-70b\)/],
  ] as const) {
    const r = cli('calibrate', '--map', map, '--out', out);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
});

test('calibrate --steps --catalog checks steps measured on a device and model defined in a catalog file', () => {
  const { dir, catalog, out } = userCatalogDir();
  const steps = join(dir, 'steps.csv');
  const rows = ['hardware,model,layers,kind,batch,tokens_per_seq,impl,median_ms'];
  for (const l of [128, 256, 512, 1024, 2048, 4096]) rows.push(`b200,qwen2.5-7b,28,prefill,1,${l},fused-eager,${(3 + l * 0.012).toFixed(3)}`);
  for (const b of [1, 2, 4, 8, 16, 32]) rows.push(`b200,qwen2.5-7b,28,decode,${b},1024,compiled-graph,${(2.2 + b * 0.05).toFixed(3)}`);
  writeFileSync(steps, rows.join('\n') + '\n');
  const without = cli('calibrate', '--steps', steps, '--out', out);
  assert.equal(without.status, 2, without.stderr);
  // The file by its absolute path, as every bad-input message names it (it was relative to the working folder).
  assert.ok(without.stderr.startsWith(`llmfleet: ${steps}:2 hardware: expected a catalog device `), without.stderr);
  assert.match(without.stderr, /, got "b200"\n$/);
  const r = cli('calibrate', '--steps', steps, '--catalog', catalog, '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^b200\/qwen2\.5-7b\/prefill /m);
  assert.match(r.stdout, /^b200\/qwen2\.5-7b\/decode /m);
  assert.match(r.stdout, /^ {2}b200: compute /m);
});

test('calibrate --catalog: --map may name a catalog model and the profile a catalog device', () => {
  const { dir, catalog, out } = userCatalogDir();
  const profile = join(dir, 'profile.csv');
  const rows = ['model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel'];
  for (const p of [128, 256, 512, 1024, 2048, 4096]) rows.push(`qwen7b,b200,${p},1,128,${(3 + p * 0.012).toFixed(3)},2.3,1`);
  for (const b of [2, 4, 8, 16, 32]) rows.push(`qwen7b,b200,512,${b},128,${(3 + b * 512 * 0.012).toFixed(3)},${(2.3 + b * 0.05).toFixed(3)},1`);
  writeFileSync(profile, rows.join('\n') + '\n');
  const without = cli('calibrate', '--profile', profile, '--map', 'qwen7b=qwen2.5-7b', '--out', out);
  assert.equal(without.status, 2, without.stderr);
  assert.match(without.stderr, /--map qwen7b=qwen2\.5-7b: unknown model 'qwen2\.5-7b'/);
  const r = cli('calibrate', '--profile', profile, '--map', 'qwen7b=qwen2.5-7b', '--catalog', catalog, '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^qwen7b\/b200\/tp1 /m);
  assert.match(r.stdout, /^ {2}b200 \(datasheet b200\): compute /m);
});

test('calibrate --vidur --catalog checks a Vidur profile of a GPU defined in a catalog file', () => {
  const { dir, catalog, out } = userCatalogDir();
  mkdirSync(join(dir, 'vidur', 'network', 'b200_dgx'), { recursive: true });
  const rows = [',time_stats.all_reduce.median,num_workers,size,devices_per_node'];
  for (const [i, size] of [2048, 10240, 65536, 262144, 1048576, 4194304, 16777216, 67108864].entries()) {
    rows.push(`${i},${(0.02 + size / 4e8).toFixed(4)},8,${size},8`);
  }
  writeFileSync(join(dir, 'vidur', 'network', 'b200_dgx', 'all_reduce.csv'), rows.join('\n') + '\n');
  const without = cli('calibrate', '--vidur', join(dir, 'vidur'), '--out', out);
  assert.equal(without.status, 2, without.stderr);
  assert.match(without.stderr, /found no .* to check/);
  const r = cli('calibrate', '--vidur', join(dir, 'vidur'), '--catalog', catalog, '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^all-reduce b200_dgx\/tp8 /m);
});

test('calibrate --catalog with a missing or bad file exits 2 with one line naming the file (and line and field)', () => {
  const { dir, out } = userCatalogDir();
  writeFileSync(join(dir, 'bad.yaml'), 'models:\n  qwen2.5-7b: { layers: -1 }\n');
  for (const [file, message] of [
    [join(dir, 'missing.yaml'), /missing\.yaml: expected a readable catalog YAML file, got "ENOENT/],
    [join(dir, 'bad.yaml'), /bad\.yaml:2 models\.qwen2\.5-7b\.layers: expected > 0, got -1/],
  ] as const) {
    for (const mode of [[], ['--steps'], ['--vidur']]) {
      const r = cli('calibrate', ...mode, '--catalog', file, '--out', out);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^llmfleet: /);
      assert.match(r.stderr, message);
    }
  }
});

test('calibrate --quiet prints nothing and still writes calibration.json', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'llmfleet-cal-')), 'o');
  const r = cli('calibrate', '--quiet', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout + r.stderr, '');
  assert.ok(existsSync(join(out, 'calibration.json')));
});
