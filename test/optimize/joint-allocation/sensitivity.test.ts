import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { scaledProblem, SENSITIVITY_GRIDS, sensitivityStudy } from '../../../src/optimize/joint-allocation/sensitivity.ts';

test('scaledProblem scales Δ, ε and prices by their factors and δ by I/6', () => {
  const p = generateProblem(3, 3, 3, 1);
  const q = scaledProblem(p, { delay: 0.5, error: 2, price: 4, budgetUsd: 60 });
  assert.equal(q.budgetUsd, 30);
  p.types.forEach((t, i) => {
    assert.equal(q.types[i]!.delaySloS, t.delaySloS * 0.5);
    assert.equal(q.types[i]!.errorSlo, Math.min(1, t.errorSlo * 2));
  });
  p.tiers.forEach((k, i) => assert.equal(q.tiers[i]!.priceUsdPerHour, k.priceUsdPerHour * 4));
  assert.deepEqual(scaledProblem(p, {}), p);
});

test('the sensitivity study re-plans AGH at every grid point and reports the plan’s shape', () => {
  const pts = sensitivityStudy({ size: [3, 3, 3], seed: 2, grids: ['price×delay'] });
  const g = SENSITIVITY_GRIDS['price×delay'];
  assert.equal(pts.length, g.a.values.length * g.b.values.length);
  for (const p of pts) {
    assert.ok(p.gpus >= p.pairs && p.servedPct >= 0 && p.servedPct <= 100 + 1e-9);
    assert.ok(p.quantizedGpuShare >= 0 && p.quantizedGpuShare <= 1);
    assert.ok(p.objective >= p.rentalUsd - 1e-9);
  }
  // Same plan, dearer GPUs: where the plan does not change with the price, its rental scales with it.
  const at = (a: number, b: number) => pts.find((p) => p.a === a && p.b === b)!;
  const same = g.b.values.filter((b) => at(0.5, b).gpus === at(1, b).gpus && at(0.5, b).tflopsPerGpu === at(1, b).tflopsPerGpu);
  assert.ok(same.length > 0);
  for (const b of same) assert.ok(Math.abs(at(1, b).rentalUsd - 2 * at(0.5, b).rentalUsd) < 1e-6);
});

test('llmfleet plan study sensitivity prints the three grids', () => {
  const r = spawnSync(process.execPath, ['bin/llmfleet.js', 'plan', 'study', 'sensitivity', '--sizes', '3,3,3', '--seed', '2'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  for (const grid of Object.keys(SENSITIVITY_GRIDS)) assert.match(r.stdout, new RegExp(`^${grid}$`, 'm'));
});
