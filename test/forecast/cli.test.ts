import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { syntheticSeries } from '../../src/forecast/synthetic.ts';
import { UserError } from '../../src/util/errors.ts';

// In-process runs (a spawned CLI costs ~1.5 s each on this machine); one spawned run checks exit code and stderr.
const run = (...args: string[]) => buildProgram('forecast').then((p) => p.parseAsync(['node', 'llmfleet', 'forecast', '--quiet', ...args]));
const tmp = () => mkdtempSync(join(tmpdir(), 'llmfleet-forecast-'));

function seriesFile(dir: string): string {
  const { values } = syntheticSeries({ points: 6 * 144, seed: 2, weekly: 0 });
  const path = join(dir, 's.csv');
  writeFileSync(path, 'timestamp_s,value\n' + values.map((v, i) => `${i * 600},${v}`).join('\n') + '\n');
  return path;
}

test('forecast --series --holdout writes forecast.csv and metrics.json with the contract keys', async () => {
  const dir = tmp();
  await run('--series', seriesFile(dir), '--model', 'auto', '--horizon', '144', '--holdout', '144', '--out', dir);
  const m = JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8'));
  for (const k of ['mape', 'smape', 'rmse', 'coverage80']) assert.equal(typeof m[k], 'number', k);
  assert.equal(typeof m.model, 'string');
  assert.notEqual(m.model, 'auto');
  assert.ok(m.mape < 10, `mape ${m.mape}`);
  const rows = readFileSync(join(dir, 'forecast.csv'), 'utf8').trim().split('\n');
  assert.equal(rows[0], 'key,step,timestamp_s,point,p10,p50,p90,actual');
  assert.equal(rows.length, 145);
  assert.equal(rows[1]!.split(',')[2], String(720 * 600)); // first forecast step follows the last training point
});

test('forecast --trace builds per-minute series from the bundled Azure trace', async () => {
  const dir = tmp();
  await run('--trace', 'data/azure-llm/AzureLLMInferenceTrace_code.csv', '--trace-format', 'azure', '--granularity', '1m', '--model', 'seasonal-naive', '--horizon', '5', '--holdout', '5', '--out', dir);
  const m = JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8'));
  assert.equal(m.model, 'seasonal-naive');
  assert.equal(m.source, 'holdout');
});

test('forecast --key type splits the trace into the four k-means workload types', async () => {
  const dir = tmp();
  await run('--trace', 'data/azure-llm/AzureLLMInferenceTrace_conv.csv', '--granularity', '1m', '--key', 'type', '--model', 'seasonal-naive', '--horizon', '5', '--holdout', '5', '--out', dir);
  const m = JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8'));
  assert.deepEqual(Object.keys(m.perKey), ['type=type0', 'type=type1', 'type=type2', 'type=type3']);
  assert.equal(m.points, 20);
  assert.equal(readFileSync(join(dir, 'forecast.csv'), 'utf8').trim().split('\n').length, 1 + 4 * 5);
});

test('flag mistakes are user errors', async () => {
  const dir = tmp();
  const s = seriesFile(dir);
  for (const args of [
    ['--series', s],
    ['--series', s, '--trace', s, '--horizon', '3'],
    ['--series', s, '--horizon', 'x'],
    ['--trace', s, '--horizon', '3'],
    ['--series', join(dir, 'missing.csv'), '--horizon', '3'],
    // --types is read only for k-means types of a trace; elsewhere it would be silently ignored.
    ['--series', s, '--horizon', '3', '--types', '3'],
    ['--trace', 'data/azure-llm/AzureLLMInferenceTrace_conv.csv', '--granularity', '1m', '--horizon', '3', '--types', '3'],
  ]) {
    await assert.rejects(run(...args, '--out', dir), UserError, args.join(' '));
  }
  const write = process.stderr.write;
  process.stderr.write = (() => true) as typeof process.stderr.write; // commander prints its own message
  try {
    await assert.rejects(run('--series', s, '--horizon', '3', '--model', 'prophet', '--out', dir), CommanderError);
  } finally {
    process.stderr.write = write;
  }
});

test('a bad series row exits 2 with one line naming the file and line', () => {
  const dir = tmp();
  const path = join(dir, 'bad.csv');
  writeFileSync(path, 'timestamp_s,value\n0,1\n60,2\n120,-3\n');
  const r = spawnSync(process.execPath, ['bin/llmfleet.js', 'forecast', '--series', path, '--horizon', '3', '--out', dir], { encoding: 'utf8' });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /bad\.csv:4 value: expected a value ≥ 0, got -3/);
});
