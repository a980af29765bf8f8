import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { buildCoefficients } from '../../../src/optimize/joint-allocation/coefficients.ts';
import { buildMilp, decodeMilp, encodeAllocation, MAX_MILP_VARS, milpSize, MilpTooLargeError, solveMilp } from '../../../src/optimize/joint-allocation/milp.ts';
import { UserError } from '../../../src/util/errors.ts';
import { evaluate } from '../../../src/optimize/joint-allocation/evaluate.ts';
import { solveLpString, toLpString, type LinearModel } from '../../../src/optimize/highs.ts';
import { agh } from '../../../src/optimize/joint-allocation/agh.ts';
import { parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';

test('the paper encoding at the base size has the digest variable and row counts', () => {
  const m = buildMilp(buildCoefficients(generateProblem(6, 6, 10, 1)), { encoding: 'paper' });
  const count = (pre: string) => m.model.names.filter((n) => n.startsWith(pre + '_')).length;
  assert.deepEqual([count('q'), count('w'), count('z'), count('y'), count('x'), count('v'), count('u')], [60, 720, 360, 60, 360, 4320, 6]);
  assert.equal(m.model.rowNames.length, 13940);
  const compact = buildMilp(buildCoefficients(generateProblem(6, 6, 10, 1)), { encoding: 'compact' });
  assert.equal(compact.model.rowNames.length, 13940 - 3 * 360 * 12 + 360 * 12 + 360);
  // The digest's counts at (20,20,20) (§2.8): 305,662 rows (1.4 s to build).
  const big = buildMilp(buildCoefficients(generateProblem(20, 20, 20, 1)), { encoding: 'paper' });
  const bigCount = (pre: string) => big.model.names.filter((n) => n.startsWith(pre + '_')).length;
  assert.deepEqual([bigCount('q'), bigCount('w'), bigCount('z'), bigCount('y'), bigCount('x'), bigCount('v')], [400, 4800, 8000, 400, 8000, 96000]);
  assert.equal(big.model.rowNames.length, 305662);
});

test('the compact encoding reaches the same optimum as the paper McCormick encoding', async () => {
  for (const seed of [1, 2, 3]) {
    const c = buildCoefficients(generateProblem(3, 3, 3, seed));
    const a = await solveMilp(c, { encoding: 'paper', timeLimitS: 30 });
    const b = await solveMilp(c, { encoding: 'compact', timeLimitS: 30 });
    assert.equal(a.status, 'optimal');
    assert.equal(b.status, 'optimal');
    assert.ok(Math.abs(a.objective! - b.objective!) <= 1e-4 * Math.max(1, Math.abs(a.objective!)), `seed ${seed}: ${a.objective} vs ${b.objective}`);
  }
});

test('the evaluator re-scores the MILP solution to the solver objective and finds it feasible', async () => {
  const c = buildCoefficients(generateProblem(3, 3, 4, 5));
  const r = await solveMilp(c, { timeLimitS: 30 });
  const ev = evaluate(c, r.allocation!);
  assert.ok(ev.feasible, JSON.stringify(ev.violations));
  assert.ok(Math.abs(ev.objective - r.objective!) <= 1e-6 * Math.max(1, ev.objective));
  const b = ev.costBreakdown;
  assert.ok(Math.abs(b.gpuRental + b.modelStorage + b.dataStorage + b.delayPenalty + b.unmetPenalty - ev.objective) < 1e-9);
  assert.ok(r.bound! <= r.objective! + 1e-6);
});

test('the LP file written for the MILP solves to the same optimum', async () => {
  const c = buildCoefficients(generateProblem(2, 2, 3, 4));
  const m = buildMilp(c, { encoding: 'paper' });
  const direct = await solveMilp(c, { encoding: 'paper' });
  const viaText = await solveLpString(toLpString(m.model));
  assert.equal(viaText.status, 'Optimal');
  assert.ok(Math.abs(viaText.objective - direct.objective!) < 1e-4 * Math.max(1, direct.objective!));
});

test('McCormick rows force v = x·w for binary w', async () => {
  // With w fixed to 1 the v of that config must equal x; the delay penalty then charges exactly D·x.
  const c = buildCoefficients(generateProblem(1, 1, 1, 2));
  const r = await solveMilp(c, { encoding: 'paper' });
  const m = buildMilp(c, { encoding: 'paper' });
  assert.ok(r.allocation);
  const ev = evaluate(c, r.allocation);
  assert.ok(Math.abs(ev.objective - r.objective!) < 1e-6 * Math.max(1, ev.objective));
  assert.ok(m.model.rowNames.some((n) => n.startsWith('mc3_')));
});

test('an infeasible problem names the constraint family that binds', async () => {
  const p = generateProblem(2, 2, 2, 1);
  // Demand must be fully served (ζ = 0) but the delay SLO is impossible to meet on any configuration.
  const bad = parseProblem({
    ...p, budgetUsd: 1e6, storageCapGb: 1e6,
    types: p.types.map((t, i) => (i === 0 ? { ...t, delaySloS: 1e-6, errorSlo: 1, unservedCap: 0 } : t)),
  });
  const r = await solveMilp(buildCoefficients(bad), { timeLimitS: 10 });
  assert.equal(r.status, 'infeasible');
  assert.ok(r.infeasibility);
  assert.ok(r.infeasibility.sufficient.includes('delay'), r.infeasibility.message);
  assert.ok(r.infeasibility.sufficient.includes('unserved-cap'), r.infeasibility.message);
  assert.match(r.infeasibility.message, /delay SLO of|unserved cap of/);
});

test('the options (Little-law KV, quantised weights, per-pair storage) stay consistent between MILP and evaluator', async () => {
  const p = generateProblem(3, 3, 3, 6);
  for (const options of [
    { kvMode: 'little' as const, quantizedWeights: false, storageScope: 'per-pair' as const, msPerS: 1000 },
    { kvMode: 'paper' as const, quantizedWeights: true, storageScope: 'per-type' as const, msPerS: 1000 },
  ]) {
    const c = buildCoefficients(parseProblem({ ...p, options }));
    const r = await solveMilp(c, { timeLimitS: 30, encoding: 'compact' });
    assert.equal(r.status, 'optimal');
    const ev = evaluate(c, r.allocation!);
    assert.ok(ev.feasible, `${options.kvMode}: ${JSON.stringify(ev.violations)}`);
    assert.ok(Math.abs(ev.objective - r.objective!) <= 1e-6 * Math.max(1, ev.objective));
  }
});

test('milpSize predicts the built model: exact variable and row counts, nonzeros as an upper bound', () => {
  for (const [I, J, K] of [[1, 1, 1], [2, 3, 4], [6, 6, 10]] as const) {
    for (const storageScope of ['global', 'per-type', 'per-pair'] as const) {
      for (const kvMode of ['paper', 'little'] as const) {
        const p = generateProblem(I, J, K, 1);
        const c = buildCoefficients(parseProblem({ ...p, options: { ...p.options, storageScope, kvMode } }));
        for (const encoding of ['paper', 'compact'] as const) {
          const m = buildMilp(c, { encoding }).model;
          const s = milpSize(c, encoding);
          const what = `${I},${J},${K} ${storageScope} ${kvMode} ${encoding}`;
          assert.equal(s.vars, m.names.length, what);
          assert.equal(s.rows, m.rowNames.length, what);
          assert.ok(m.coef.length <= s.nonzeros && m.coef.length >= 0.8 * s.nonzeros, `${what}: ${m.coef.length} vs ${s.nonzeros}`);
        }
      }
    }
  }
});

test('a MILP beyond the size limit is refused before it is built (no out-of-memory at 100,100,100)', () => {
  const c = buildCoefficients(generateProblem(100, 100, 100, 1));
  const t0 = performance.now();
  assert.throws(() => buildMilp(c, { encoding: 'compact' }), (e: unknown) => {
    assert.ok(e instanceof MilpTooLargeError && e instanceof UserError);
    assert.equal(e.size.vars, 14_140_100);
    assert.match(e.message, /^the instance is too large for the exact model: its MILP \(compact encoding\) would have 14,140,100 variables and [\d,]+ nonzeros \(limits 300,000 and 4,000,000/);
    return true;
  });
  assert.ok(performance.now() - t0 < 1000);
  // 25³ is within the limit, 30³ is not (HiGHS-WASM overruns a 10-s limit by ~30 s there; docs/fidelity).
  const cube = (n: number) => milpSize(buildCoefficients(generateProblem(n, n, n, 1)), 'paper').vars;
  assert.ok(cube(25) <= MAX_MILP_VARS && cube(30) > MAX_MILP_VARS);
});

/** The rows and bounds of `model` that `values` breaks by more than `tol` (scaled by the row's magnitude). */
function brokenRows(model: LinearModel, values: Float64Array, tol = 1e-7): string[] {
  const out: string[] = [];
  for (let j = 0; j < model.names.length; j++) {
    if (values[j]! < model.lb[j]! - tol || values[j]! > model.ub[j]! + tol) out.push(`bound ${model.names[j]}`);
  }
  for (let r = 0; r < model.rowNames.length; r++) {
    let act = 0;
    for (let e = model.rowStart[r]!; e < model.rowStart[r + 1]!; e++) act += model.coef[e]! * values[model.colIdx[e]!]!;
    const t = tol * Math.max(1, Math.abs(model.rowUb[r]!) === Infinity ? 1 : Math.abs(model.rowUb[r]!));
    if (act < model.rowLb[r]! - t || act > model.rowUb[r]! + t) out.push(model.rowNames[r]!);
  }
  return out;
}

test('an allocation encoded as columns satisfies every row of both encodings and costs what the evaluator says (a MIP start)', () => {
  for (const [size, seed] of [[[3, 3, 4], 5], [[6, 6, 10], 1]] as const) {
    const c = buildCoefficients(generateProblem(size[0], size[1], size[2], seed));
    const a = agh(c, { seed: 0 }).state.toAllocation();
    const ev = evaluate(c, a);
    assert.ok(ev.feasible, JSON.stringify(ev.violations));
    for (const encoding of ['paper', 'compact'] as const) {
      const m = buildMilp(c, { encoding });
      const x = encodeAllocation(c, m, a);
      assert.deepEqual(brokenRows(m.model, x), [], `${size} ${encoding}`);
      const cost = m.model.cost.reduce((s, v, j) => s + v * x[j]!, m.model.offset);
      assert.ok(Math.abs(cost - ev.objective) <= 1e-9 * Math.max(1, ev.objective), `${cost} vs ${ev.objective}`);
      // decodeMilp is its inverse
      const back = decodeMilp(c, m, x);
      assert.deepEqual([...back.cfg], [...a.cfg]);
      assert.deepEqual([...back.z], [...a.z]);
    }
  }
});

test('a MILP started from a plan ends no worse than it, even when stopped at once', async () => {
  const c = buildCoefficients(generateProblem(10, 10, 10, 1));
  const a = agh(c, { seed: 0 }).state.toAllocation();
  const start = evaluate(c, a).objective;
  const r = await solveMilp(c, { encoding: 'compact', timeLimitS: 0.5, start: a, diagnose: false });
  assert.ok(r.allocation, r.status);
  assert.ok(evaluate(c, r.allocation).objective <= start * (1 + 1e-9), `${evaluate(c, r.allocation).objective} vs AGH ${start}`);
});
