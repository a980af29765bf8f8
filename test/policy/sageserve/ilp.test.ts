import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSageServeIlp, greedySageServe, solveSageServeIlp, type IlpInput } from '../../../src/policy/sageserve/ilp.ts';
import { Rng } from '../../../src/util/rng.ts';

function input(n: number[], rho: number[], theta = 100, epsilon = 0.5, extra: Partial<IlpInput> = {}): IlpInput {
  return {
    models: ['m'], regions: n.map((_, j) => `r${j}`), gpus: ['h100'],
    n: [n.map((x) => [x])], rho: [rho], theta: [[theta]], alpha: [98.32], sigma: [[98.32 * (10 / 60)]], epsilon, ...extra,
  };
}

test('the greedy keeps surplus before adding new instances (the worked example in ilp.ts)', () => {
  const s = greedySageServe(input([4, 1], [150, 350]));
  assert.deepEqual(s.delta, [[[-1], [1]]]);
  assert.equal(s.status, 'optimal');
});

test('with ε = 1 every region covers its own demand and surplus is released', () => {
  const s = greedySageServe(input([10, 0, 3], [250, 101, 0], 100, 1));
  assert.deepEqual(s.delta, [[[-7], [2], [-3]]]);
});

test('per-endpoint minimum counts hold even with no demand', () => {
  const s = greedySageServe(input([5, 5], [0, 0], 100, 1, { minCount: [[[2], [2]]] }));
  assert.deepEqual(s.delta, [[[-3], [-3]]]);
});

test('the ILP has one δ⁺ and one δ⁻ column per (model, region, gpu), a C1 row per (model, region), a C2 row per model', () => {
  const m = buildSageServeIlp({
    models: ['a', 'b'], regions: ['x', 'y', 'z'], gpus: ['g'], n: [[[1], [1], [1]], [[1], [1], [1]]],
    rho: [[1, 2, 3], [4, 5, 6]], theta: [[10], [10]], alpha: [1], sigma: [[1], [1]], epsilon: 1,
  });
  assert.equal(m.names.length, 12);
  assert.equal(m.rowNames.filter((r) => r.startsWith('c1_')).length, 6);
  assert.equal(m.rowNames.filter((r) => r.startsWith('c2_')).length, 2);
});

test('HiGHS and the closed-form greedy agree on the optimum of random single-GPU instances', async () => {
  const rng = new Rng(11);
  for (let round = 0; round < 15; round++) {
    const L = 1 + rng.int(3);
    const R = 1 + rng.int(4);
    const p: IlpInput = {
      models: Array.from({ length: L }, (_, i) => `m${i}`),
      regions: Array.from({ length: R }, (_, j) => `r${j}`),
      gpus: ['g'],
      n: Array.from({ length: L }, () => Array.from({ length: R }, () => [rng.int(12)])),
      rho: Array.from({ length: L }, () => Array.from({ length: R }, () => rng.next() * 2000)),
      theta: Array.from({ length: L }, () => [50 + rng.next() * 400]),
      alpha: [98.32],
      sigma: Array.from({ length: L }, () => [98.32 * rng.next()]),
      epsilon: 0.2 + 0.8 * rng.next(),
      minCount: Array.from({ length: L }, () => Array.from({ length: R }, () => [rng.int(3)])),
    };
    const g = greedySageServe(p);
    const h = await solveSageServeIlp(p);
    assert.equal(h.status, 'optimal');
    assert.ok(Math.abs(g.objective - h.objective) < 1e-6 * Math.max(1, Math.abs(h.objective)), `round ${round}: greedy ${g.objective} vs HiGHS ${h.objective}`);
  }
});
