import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { solvePlan } from '../../../src/optimize/joint-allocation/plan.ts';
import { parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { checkSimCheckSpan, MAX_SIM_CHECK_REQUESTS, MAX_SIM_CHECK_S, planCheckScenario } from '../../../src/optimize/joint-allocation/sim-check.ts';
import {
  ablationStudy, budgetSweep, capSweep, checkRobustnessOptions, MAX_GRW_SIGMA, MAX_GRW_TRIALS, MAX_STAGE2_SCENARIOS, MAX_STRESS, MAX_STUDY_SEEDS, optimalityStudy, robustnessStudy, table2Suite,
} from '../../../src/optimize/joint-allocation/studies.ts';
import { UserError } from '../../../src/util/errors.ts';

/** Library-level bounds behind the `plan` / `plan study` flags (fuzz review D2–D5): a UserError naming the flag. */
const userError = (re: RegExp) => (e: unknown) => e instanceof UserError && re.test(e.message);

test('sim-check: a span past one week or past 200,000 requests is refused before any arrival is generated', async () => {
  const p = generateProblem(2, 2, 2, 1);
  const perS = p.types.reduce((s, t) => s + t.arrivalsPerHour, 0) / 3600;
  assert.throws(() => checkSimCheckSpan(p, 1e308), userError(/^--sim-check: expected seconds ≥ 1 and ≤ 604800 \(one week\), got 1e\+308$/));
  assert.throws(() => checkSimCheckSpan(p, Number.NaN), userError(/^--sim-check: expected seconds/));
  assert.throws(() => checkSimCheckSpan(p, 0.5), userError(/^--sim-check: expected seconds/));
  const fit = Math.floor(MAX_SIM_CHECK_REQUESTS / perS);
  assert.throws(() => checkSimCheckSpan(p, fit + 1), userError(new RegExp(`more than the 200,000 a check simulates; use --sim-check ${fit} or less$`)));
  checkSimCheckSpan(p, fit);
  checkSimCheckSpan(p, 1);
  // A plan serving nothing of a type does not count its demand.
  checkSimCheckSpan(p, MAX_SIM_CHECK_S, p.types.map(() => 0));

  // At the problem files' λ limit (1e12 per hour) the default 600 s would have built 3e11 arrivals in memory.
  const q = structuredClone(p);
  for (const t of q.types) t.arrivalsPerHour = 1e12;
  assert.throws(() => checkSimCheckSpan(parseProblem(q), 600), userError(/^--sim-check 600: the problem's arrivals \(556000000 per s\) give ≈ 333,333,333,333 requests in 600 s, more than the 200,000 a check simulates; the arrival rates are too high for a simulated check$/));
  // planCheckScenario counts the plan's served demand, and refuses before generating a single arrival.
  const plan = await solvePlan(p, { solver: 'gh', boundTimeLimitS: 0 });
  assert.throws(() => planCheckScenario(p, plan, { durationS: MAX_SIM_CHECK_S }), userError(/^--sim-check 604800: the plan's served arrivals \(.* per s\) give ≈ [\d,]+ requests in 604800 s, more than the 200,000 a check simulates; use --sim-check \d+ or less$/));
});

test('robustness options past their bounds are refused naming the flag', async () => {
  assert.throws(() => checkRobustnessOptions({ scenarios: MAX_STAGE2_SCENARIOS + 1 }), userError(/^--scenarios: expected an integer ≥ 1 and ≤ 10000, got 10001$/));
  assert.throws(() => checkRobustnessOptions({ trials: 1e9 }), userError(/^--trials: expected an integer ≥ 1 and ≤ 100/));
  assert.throws(() => checkRobustnessOptions({ trials: 1.5 }), userError(/^--trials:/));
  assert.throws(() => checkRobustnessOptions({ sigmas: [0.01, 1e308] }), userError(/^--sigmas: expected numbers ≥ 0 and ≤ 0\.2, got 1e\+308$/));
  assert.throws(() => checkRobustnessOptions({ sigmas: [Number.NaN] }), userError(/^--sigmas:/));
  assert.throws(() => checkRobustnessOptions({ stresses: [MAX_STRESS * 2] }), userError(/^--stresses: expected numbers ≥ 0\.01 and ≤ 100/));
  checkRobustnessOptions({ scenarios: MAX_STAGE2_SCENARIOS, trials: MAX_GRW_TRIALS, sigmas: [0, MAX_GRW_SIGMA], stresses: [0.01, MAX_STRESS] });
  // The study entry points check before any Stage-1 work.
  await assert.rejects(robustnessStudy({ size: [2, 2, 2], sigmas: [5], tracePath: null }), userError(/^--sigmas:/));
  await assert.rejects(table2Suite({ size: [2, 2, 2], scenarios: 1e9 }), userError(/^--scenarios:/));
  await assert.rejects(capSweep({ size: [2, 2, 2], stresses: [1e308] }), userError(/^--stresses:/));
});

test('a budget sweep past 1e12 is refused naming --budgets (1e308 made a NaN right-hand side in the routing LP)', async () => {
  await assert.rejects(table2Suite({ size: [2, 2, 2], scenarios: 1, settings: budgetSweep([50, 1e308]), methods: ['GH'] }), userError(/^--budgets: expected budgets δ ≥ 0 and ≤ 1e12 \$.*got 1e\+308$/));
  await assert.rejects(table2Suite({ size: [2, 2, 2], scenarios: 1, settings: budgetSweep([Number.NaN]), methods: ['GH'] }), userError(/^--budgets:/));
  const rows = await table2Suite({ size: [2, 2, 2], scenarios: 1, settings: budgetSweep([1e12]), methods: ['GH'] });
  assert.ok(rows.every((r) => Number.isFinite(r.expectedCostUsd)));
});

test('the GRW walk stops with a message naming --sigmas when it takes a demand past the problem files\' λ limit', async () => {
  // A demand at the limit already: the first steps of a σ = 0.2 walk go past it (at σ = 5 HiGHS refused the model).
  const q = structuredClone(generateProblem(2, 2, 2, 1));
  for (const t of q.types) t.arrivalsPerHour = 0.999e12;
  await assert.rejects(
    robustnessStudy({ problem: parseProblem(q), scenarios: 1, stresses: [1], sigmas: [MAX_GRW_SIGMA], trials: 1, tracePath: null, methods: ['GH'] }),
    userError(/^--sigmas 0\.2: the random walk \(trial 1, window \d+ of 288\) took .*'s demand to .* arrivals per hour, past 1e\+12 \(the problem files' limit\); use a smaller σ/),
  );
});

test('the optimality study and its ablation cap their seeds at 1000', async () => {
  await assert.rejects(optimalityStudy({ sizes: [[2, 2, 2]], seeds: MAX_STUDY_SEEDS + 1 }), userError(/^--seeds: expected an integer ≥ 1 and ≤ 1000, got 1001$/));
  assert.throws(() => ablationStudy({ seeds: 1e8 }), userError(/^--seeds:/));
  assert.throws(() => ablationStudy({ seeds: 0 }), userError(/^--seeds:/));
});

test('Stage-2 scenarios are drawn one at a time and replayed per method: the same rows as before, at any count', async () => {
  // Every method scores the same draws (a fresh fork per method): DM and GH rows at equal scenarios.
  const a = await robustnessStudy({ size: [2, 2, 2], scenarios: 3, stresses: [1], sigmas: [], tracePath: null, methods: ['GH', 'DM'], milpTimeLimitS: 5 });
  const b = await robustnessStudy({ size: [2, 2, 2], scenarios: 3, stresses: [1], sigmas: [], tracePath: null, methods: ['DM', 'GH'], milpTimeLimitS: 5 });
  const key = (r: typeof a) => Object.fromEntries(r.scenarios[0]!.rows.map((x) => [x.method, x]));
  assert.deepEqual(key(a), key(b));
});
