import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generateProblem } from '../../src/optimize/joint-allocation/generate.ts';

const cli = (args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', 'plan', ...args], { encoding: 'utf8', timeout: 60_000 });

test('plan --out writes catalog.yaml beside fleet.yaml for quantised tiers, and removes a stale one when a plan has none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-fleet-export-'));
  const out = join(dir, 'out');
  // Seed 2's (4,4,5) instance with quantised weights deploys the 8B and the 70B on rtx4090-int4 (the 70B at TP4).
  const p = generateProblem(4, 4, 5, 2);
  writeFileSync(join(dir, 'quantised.json'), JSON.stringify({ ...p, options: { ...p.options, quantizedWeights: true } }));
  const args = ['--solver', 'agh', '--bound-time-limit', '0', '--out', out];
  const q = cli(['--problem', join(dir, 'quantised.json'), ...args]);
  assert.equal(q.status, 0, q.stderr);
  const fleet = parse(readFileSync(join(out, 'fleet.yaml'), 'utf8'));
  assert.equal(fleet.catalog, 'catalog.yaml');
  const catalog = parse(readFileSync(join(out, 'catalog.yaml'), 'utf8'));
  const pools = fleet.fleet.pools as { name: string; model: string }[];
  assert.ok(pools.some((x) => x.name === 'llama3.1-70b-w4@rtx4090-tp4'), pools.map((x) => x.name).join(', '));
  // Every variant a pool names is defined in catalog.yaml.
  for (const x of pools) if (/-w\d/.test(x.model)) assert.ok(Object.hasOwn(catalog.models, x.model), x.model);

  // The same problem with every tier at full precision: no variants, so no catalog.yaml beside the new fleet.yaml.
  writeFileSync(join(dir, 'bf16.json'), JSON.stringify({ ...p, tiers: p.tiers.map((t) => ({ ...t, latencyScale: 1 })) }));
  writeFileSync(join(out, 'mine.txt'), 'x');
  const b = cli(['--problem', join(dir, 'bf16.json'), ...args]);
  assert.equal(b.status, 0, b.stderr);
  assert.ok(!existsSync(join(out, 'catalog.yaml')), 'stale catalog.yaml');
  assert.equal(parse(readFileSync(join(out, 'fleet.yaml'), 'utf8')).catalog, undefined);
  assert.ok(existsSync(join(out, 'mine.txt')) && existsSync(join(out, 'plan.json')));
});

test('plan --out says what it wrote, and names tier hardware the simulator catalog lacks (it was only a comment in fleet.yaml)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-fleet-unmapped-'));
  const p = generateProblem(3, 3, 3, 1);
  writeFileSync(join(dir, 'p.json'), JSON.stringify({ ...p, tiers: p.tiers.map((t) => ({ ...t, hardware: `${t.hardware}x` })) }));
  const out = join(dir, 'out');
  const r = cli(['--problem', join(dir, 'p.json'), '--solver', 'gh', '--bound-time-limit', '0', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`\\nwrote ${out}/plan\\.json, fleet\\.yaml(, catalog\\.yaml)?, problem\\.json\\n`));
  assert.match(r.stdout, /\nnote: fleet\.yaml names what the simulator's catalog lacks: [^\n]*x\b/);
  // A fleet with no workload says how to give it one.
  const s = spawnSync(process.execPath, ['bin/llmfleet.js', 'simulate', '--scenario', join(out, 'fleet.yaml'), '--out', join(dir, 'sim')], { encoding: 'utf8' });
  assert.equal(s.status, 2);
  assert.match(s.stderr, /fleet\.yaml workload: expected a workload: block \(trace or synthetic\) in the file, or --trace FILE \(the field is missing\)\n$/);
});
