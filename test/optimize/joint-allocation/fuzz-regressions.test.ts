import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { solvePlan, type SolverName } from '../../../src/optimize/joint-allocation/plan.ts';
import { parseHeadroom } from '../../../src/optimize/joint-allocation/headroom.ts';
import { spawnSync } from 'node:child_process';

/** Regressions found by a structural fuzz of problem files (one field at a time at edge values). */

// Every type at the schema's λ limit (1e12/h): data-storage and compute coefficients ~1e13 next to O(1) ones. The
// compact MILP reported "optimal" at $67119.68 with an equal dual bound, above the all-unserved plan ($67104) and above
// the decoded plan ($67112.40): plan.json had objective < bound at gap 0, and LPR/HF (feasible, $67104) a bound above them.
test('a MILP bound above a feasible plan\'s cost is dropped (no bound, no gap, not "optimal")', async () => {
  const q = structuredClone(generateProblem(3, 3, 3, 1));
  for (const t of q.types) t.arrivalsPerHour = 1e12;
  const p = parseProblem(q);
  const runs: [SolverName, Parameters<typeof solvePlan>[1]][] = [
    ['milp', { solver: 'milp', encoding: 'compact', timeLimitS: 5 }],
    ['lpr', { solver: 'lpr', timeLimitS: 5, boundTimeLimitS: 2 }],
    ['hf', { solver: 'hf', timeLimitS: 5, boundTimeLimitS: 2 }],
  ];
  for (const [name, opts] of runs) {
    const plan = await solvePlan(p, opts);
    assert.ok(plan.objective !== null && plan.feasible, `${name}: no feasible plan`);
    if (plan.bound !== null) {
      assert.ok(plan.objective >= plan.bound - 1e-6 * Math.max(1, plan.bound), `${name}: objective ${plan.objective} < bound ${plan.bound} (gap ${plan.gap})`);
    } else {
      assert.equal(plan.gap, null, `${name}: gap without bound`);
      assert.equal(plan.boundSource, null);
      assert.notEqual(plan.status, 'optimal', `${name}: optimal without a valid bound`);
    }
  }
});

// Fields the MILP divides by had no floor: a tier's memory bandwidth of 1e-12 GB/s put 7e16 into the delay rows, and
// NVLink, TFLOPS, GPU memory or η at 1e-300 gave ~1e300; milp / lpr / hf (dvr too for NVLink) ended in
// "HiGHS could not load the model … row delay_2" (exit 2, but naming a row, not the file's field).
test('divisor fields below their floor (1e-3) are refused naming the field; the floor itself solves', async () => {
  const cases: [string[], number][] = [
    [['tiers', '0', 'bandwidthGbPerS'], 1e-12], [['tiers', '1', 'linkGbPerS'], 1e-300], [['tiers', '2', 'tflops'], 1e-300],
    [['tiers', '0', 'memoryGb'], 1e-300], [['eta'], 1e-300],
  ];
  for (const [path, v] of cases) {
    const q = structuredClone(generateProblem(3, 3, 3, 1)) as Record<string, any>;
    let o = q;
    for (const k of path.slice(0, -1)) o = o[k];
    o[path.at(-1)!] = v;
    const where = path.length > 1 ? `${path[0]}[${path[1]}].${path[2]}` : path[0]!;
    assert.throws(() => parseProblem(q, 'p.yaml'), (e: Error) => e.message === `p.yaml ${where}: expected ≥ 0.001, got ${v}`, path.join('.'));
  }
  const q = structuredClone(generateProblem(3, 3, 3, 1));
  q.eta = 1e-3;
  for (const t of q.tiers) t.bandwidthGbPerS = t.linkGbPerS = t.tflops = t.memoryGb = 1e-3;
  const p = parseProblem(q);
  for (const solver of ['milp', 'lpr', 'dvr', 'hf'] as const) {
    const plan = await solvePlan(p, { solver, timeLimitS: 5, boundTimeLimitS: 0 });
    assert.ok(plan.objective !== null && Number.isFinite(plan.objective), `${solver}: ${plan.status}`);
  }
});

// --headroom took any finite d,s ≥ 0: "1e308,0" made λ × (1 + d) = Infinity, and milp / lpr / hf exited 2 with
// "HiGHS could not load the model … |coefficient| Infinity in row budget", naming no flag.
test('--headroom past 100 (+10,000 %) is refused naming the flag; 100,100 plans', async () => {
  for (const v of ['1e308,0', '0,1e308', '1e12,0', '100.5,0']) {
    assert.throws(() => parseHeadroom('headroom', v), (e: Error) => e.message.startsWith('--headroom: expected d,s') && e.message.includes('[0, 100]'), v);
  }
  await assert.rejects(solvePlan(generateProblem(2, 2, 2, 1), { solver: 'dvr', headroom: { demand: 1e308, slo: 0 } }), /headroom: demand must be a finite number ≥ 0 and ≤ 100, got 1e\+308/);
  const p = generateProblem(3, 3, 3, 1);
  for (const solver of ['milp', 'lpr'] as const) {
    const plan = await solvePlan(p, { solver, timeLimitS: 5, boundTimeLimitS: 0, headroom: { demand: 100, slo: 100 } });
    assert.ok(plan.objective !== null && Number.isFinite(plan.objective), `${solver}: ${plan.status}`);
  }
  const r = spawnSync(process.execPath, ['bin/llmfleet.js', 'plan', '--generate', '3,3,3', '--solver', 'lpr', '--headroom', '1e308,0'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^llmfleet: --headroom: expected d,s .*, got "1e308,0"\n$/);
});
