import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { buildCoefficients } from '../../../src/optimize/joint-allocation/coefficients.ts';
import { evaluate } from '../../../src/optimize/joint-allocation/evaluate.ts';
import { SOLVERS, solvePlan } from '../../../src/optimize/joint-allocation/plan.ts';
import { routeFixed } from '../../../src/optimize/joint-allocation/route.ts';
import { agh } from '../../../src/optimize/joint-allocation/agh.ts';
import { parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { UserError } from '../../../src/util/errors.ts';

test('every solver returns a plan with status, objective, cost breakdown and per-type reports', async () => {
  const p = generateProblem(3, 3, 3, 2);
  for (const solver of SOLVERS) {
    const plan = await solvePlan(p, { solver, timeLimitS: 20 });
    assert.ok(['optimal', 'feasible', 'time-limit'].includes(plan.status), `${solver}: ${plan.status}`);
    assert.ok(plan.objective !== null && Number.isFinite(plan.objective));
    const b = plan.costBreakdown!;
    assert.ok(Math.abs(b.gpuRental + b.modelStorage + b.dataStorage + b.delayPenalty + b.unmetPenalty - plan.objective) < 1e-6);
    assert.equal(plan.perType.length, 3);
    for (const t of plan.perType) assert.ok(Math.abs(t.served + t.unserved - 1) < 1e-6);
    assert.ok(plan.solveSeconds >= 0);
    const gpus = Object.values(plan.gpusByTier).reduce((s, g) => s + g, 0);
    assert.equal(gpus, plan.deployments.reduce((s, d) => s + d.gpus, 0));
  }
});

test('a heuristic plan reports its gap to the MILP bound when a bound run is requested', async () => {
  const plan = await solvePlan(generateProblem(3, 3, 3, 1), { solver: 'agh', boundTimeLimitS: 20 });
  assert.ok(plan.bound !== null && plan.gap !== null);
  assert.ok(plan.gap >= 0);
  assert.equal(plan.boundSource, 'milp');
});

test('an infeasible problem gives status infeasible and an explanation, not a dump', async () => {
  const p = generateProblem(2, 2, 2, 1);
  const bad = parseProblem({ ...p, types: p.types.map((t) => ({ ...t, errorSlo: 0, unservedCap: 0 })) });
  const plan = await solvePlan(bad, { solver: 'milp', timeLimitS: 10 });
  assert.equal(plan.status, 'infeasible');
  assert.equal(plan.objective, null);
  assert.match(plan.infeasibility ?? '', /error/);
});

test('re-routing a plan on its own deployment never costs more than the plan', async () => {
  for (const seed of [1, 2, 3]) {
    const c = buildCoefficients(generateProblem(4, 4, 5, seed));
    const a = agh(c, { seed }).state.toAllocation();
    const r = await routeFixed(c, { cfg: a.cfg, z: a.z });
    const before = evaluate(c, a).objective;
    const after = evaluate(c, r.allocation);
    assert.ok(after.feasible, JSON.stringify(after.violations));
    assert.ok(after.objective <= before + 1e-6 * before, `seed ${seed}: ${after.objective} > ${before}`);
    assert.ok(Math.abs(after.objective - r.objective) < 1e-6 * Math.max(1, after.objective));
  }
});

test('a heuristic still returns its plan when the bound MILP is too large or HiGHS cannot load it, with a note', async () => {
  const big = await solvePlan(generateProblem(30, 30, 30, 1), { solver: 'gh', boundTimeLimitS: 10 });
  assert.equal(big.feasible, true);
  assert.ok(big.objective !== null && big.deployments.length > 0);
  assert.equal(big.bound, null);
  assert.ok(big.notes.some((n) => /^bound skipped: the MILP would have 390,630 variables and [\d,]+ nonzeros \(limits 300,000 and 4,000,000\); use --bound-time-limit 0 to silence this note$/.test(n)), big.notes.join(' | '));
  // A compute coefficient HiGHS refuses (≥ 1e15) from a tier and η at their 1e-3 floors and λ at its 1e12 cap: the
  // bound is skipped, the plan stands.
  const p = generateProblem(2, 2, 2, 1);
  const slow = parseProblem({ ...p, eta: 1e-3, types: [{ ...p.types[0]!, arrivalsPerHour: 1e12 }, p.types[1]!], tiers: [{ ...p.tiers[0]!, tflops: 1e-3 }, p.tiers[1]!] });
  const plan = await solvePlan(slow, { solver: 'agh', boundTimeLimitS: 5 });
  assert.ok(plan.objective !== null);
  assert.equal(plan.bound, null);
  assert.ok(plan.notes.some((n) => /^bound skipped: HiGHS could not load the model: .*in row comp_/.test(n)), plan.notes.join(' | '));
  // The exact solver on the same instance is one UserError.
  await assert.rejects(solvePlan(slow, { solver: 'milp', timeLimitS: 5 }), (e: unknown) => e instanceof UserError && /^HiGHS could not load the model/.test(e.message));
});

test('the MILP starts from AGH\'s plan by default (recorded in plan.json), and cold with warmStart none', async () => {
  const p = generateProblem(4, 4, 5, 1);
  const warm = await solvePlan(p, { solver: 'milp', encoding: 'compact', timeLimitS: 30 });
  const cold = await solvePlan(p, { solver: 'milp', encoding: 'compact', timeLimitS: 30, warmStart: 'none' });
  const a = await solvePlan(p, { solver: 'agh', seed: 0 });
  assert.equal(warm.milp!.warmStart!.solver, 'agh');
  assert.ok(Math.abs(warm.milp!.warmStart!.objective - a.objective!) < 1e-9 * a.objective!);
  assert.ok(warm.milp!.warmStart!.seconds <= warm.solveSeconds);
  assert.match(warm.notes.join('\n'), /MIP start: AGH's plan/);
  assert.equal(cold.milp!.warmStart, null);
  assert.equal(warm.status, 'optimal');
  assert.ok(Math.abs(warm.objective! - cold.objective!) <= 1e-4 * cold.objective!);
});

test('aghLpWork sets AGH\'s LP budget: a smaller one than the default finds the dearer plan that AGH with that budget finds', async () => {
  // (15,15,10) seed 1: the default reaches the proven optimum ($101.85), 2e8 stops 7 % above it.
  const p = generateProblem(15, 15, 10, 1);
  const c = buildCoefficients(p);
  const base = await solvePlan(p, { solver: 'agh', seed: 1 });
  const less = await solvePlan(p, { solver: 'agh', seed: 1, aghLpWork: 2e8 });
  assert.ok(Math.abs(base.objective! - evaluate(c, agh(c, { seed: 1 }).state.toAllocation()).objective) < 1e-9);
  assert.ok(Math.abs(less.objective! - evaluate(c, agh(c, { seed: 1, maxLpWork: 2e8 }).state.toAllocation()).objective) < 1e-9);
  assert.ok(base.objective! < less.objective! * 0.95, `${base.objective} vs ${less.objective}`);
});
