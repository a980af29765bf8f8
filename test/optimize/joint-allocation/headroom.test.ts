import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCoefficients, delayOf } from '../../../src/optimize/joint-allocation/coefficients.ts';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { parseHeadroom, sloFactors, withHeadroom } from '../../../src/optimize/joint-allocation/headroom.ts';
import { solvePlan, type Plan } from '../../../src/optimize/joint-allocation/plan.ts';
import { parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { robustnessStudy } from '../../../src/optimize/joint-allocation/robustness.ts';

/**
 * A two-type instance whose cost-minimal plan runs the 8B model at TP 1 with a delay 3 % under the
 * summarisation SLO (3.20 s against 3.30 s): any Stage-2 delay inflation above 3 % strands part of that type.
 * With delay × 1.25 at Stage 1, TP 1 misses the SLO (4.00 s), so a headroom plan pays for TP 2 (1.60 s).
 */
const tight = parseProblem({
  budgetUsd: 1000, storageCapGb: 1000, storagePriceUsdPerGbHour: 0.00066, tpDegrees: [1, 2], ppDepths: [1],
  types: [
    { name: 'summarization', arrivalsPerHour: 1000, inputTokens: 100, outputTokens: 100, delaySloS: 3.3, errorSlo: 0.05,
      delayPenaltyUsdPerMsQuery: 0, unmetPenaltyUsdPerHour: 100, storageKbPerToken: 0 },
    { name: 'chat', arrivalsPerHour: 500, inputTokens: 50, outputTokens: 50, delaySloS: 10, errorSlo: 0.05,
      delayPenaltyUsdPerMsQuery: 0, unmetPenaltyUsdPerHour: 100, storageKbPerToken: 0 },
  ],
  models: [{ name: 'llama-3.1-8b', weightsGb: 16, kvKbPerToken: 122.1, activationKbPerToken: 8.192, baseError: { summarization: 0.01, chat: 0.01 } }],
  tiers: [{ name: 'h100-fp16', hardware: 'h100-80gb', memoryGb: 80, priceUsdPerHour: 1, tflops: 100, bandwidthGbPerS: 1000 }],
});

const H = { demand: 0.2, slo: 0.25 };

/** A trace with one request per second for a minute (every replay window has multiplier 1). */
function flatTrace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  const path = join(dir, 'flat.csv');
  writeFileSync(path, 'arrival_s,input_tokens,output_tokens\n' + Array.from({ length: 60 }, (_, k) => `${k + 0.5},1,1`).join('\n') + '\n');
  return path;
}
const stripTime = (p: Plan) => ({
  ...p, solveSeconds: 0, notes: p.notes.map((n) => n.replace(/[\d.]+ s\)/, 's)')),
  ...(p.milp ? { milp: { ...p.milp, warmStart: p.milp.warmStart ? { ...p.milp.warmStart, seconds: 0 } : null } } : {}),
});

test('headroom 0 gives exactly the default plan for every solver kind', async () => {
  const p = generateProblem(3, 3, 3, 2);
  for (const solver of ['agh', 'gh', 'milp'] as const) {
    const base = await solvePlan(p, { solver, timeLimitS: 20 });
    const zero = await solvePlan(p, { solver, timeLimitS: 20, headroom: { demand: 0, slo: 0 } });
    assert.deepEqual(stripTime(zero), stripTime(base), solver);
    assert.equal(zero.headroom, undefined);
  }
  const c = buildCoefficients(p);
  assert.equal(withHeadroom(c, { demand: 0, slo: 0 }), c);
});

test('headroom inflates demand by 1 + d and every type’s delay and error by 1 + s while some candidate still meets its SLOs', () => {
  const p = generateProblem(3, 3, 3, 1);
  const c = buildCoefficients(p);
  const f = sloFactors(c, H.slo);
  assert.ok(f.every((v) => v === 1.25), `factors ${[...f]}`); // every generated type has more than 25 % slack somewhere
  const N = c.I * c.J * c.K;
  const rebuilt = buildCoefficients(p, {
    lambda: p.types.map((t) => t.arrivalsPerHour * 1.2),
    delayScale: new Float64Array(N).fill(1.25),
    errorScale: new Float64Array(N).fill(1.25),
  });
  const direct = withHeadroom(c, H);
  for (const k of ['lambda', 'computeLoad', 'dataGb', 'dataStorageCost', 'dcomp', 'dcomm', 'ebar', 'rentalPerGpu', 'unmetCost'] as const) {
    direct[k].forEach((v, t) => assert.ok(Math.abs(v - rebuilt[k][t]!) <= 1e-12 * Math.max(1, Math.abs(v)), `${k}[${t}]`));
  }
  assert.throws(() => withHeadroom(c, { demand: -0.1, slo: 0 }), /demand must be a finite number ≥ 0/);
});

test('a type is inflated only as far as its best candidate still meets its SLO, so a headroom plan never gives it up', async () => {
  // TP 1 only: summarisation's one candidate runs 3.20 s against 3.52 s, 10 % slack; chat has 5× slack.
  const tp1 = parseProblem({ ...tight, tpDegrees: [1], types: tight.types.map((t) => (t.name === 'summarization' ? { ...t, delaySloS: 3.52 } : t)) });
  const c = buildCoefficients(tp1);
  const f = sloFactors(c, 0.25);
  assert.ok(Math.abs(f[0]! - 3.52 / delayOf(c, 0, 0, 0)) < 1e-6 && f[0]! < 1.1, `summarization ${f[0]}`);
  assert.equal(f[1], 1.25);
  const head = await solvePlan(tp1, { solver: 'milp', timeLimitS: 20, headroom: H });
  assert.ok(head.perType.find((t) => t.type === 'summarization')!.served > 0.999);
});

test('a headroom plan costs more at Stage 1, reports nominal costs, and records the headroom', async () => {
  for (const solver of ['milp', 'agh'] as const) {
    const base = await solvePlan(tight, { solver, timeLimitS: 20 });
    const head = await solvePlan(tight, { solver, timeLimitS: 20, headroom: H });
    const stage1 = (pl: Plan) => pl.costBreakdown!.gpuRental + pl.costBreakdown!.modelStorage;
    assert.deepEqual(base.deployments.map((d) => d.tp), [1], solver);
    assert.deepEqual(head.deployments.map((d) => d.tp), [2], solver);
    assert.ok(stage1(head) >= stage1(base), `${solver}: ${stage1(head)} < ${stage1(base)}`);
    // Nominal scoring: everything served at nominal, and the breakdown sums to the objective.
    assert.ok(head.feasible && head.perType.every((t) => t.unserved < 1e-9), solver);
    const b = head.costBreakdown!;
    assert.ok(Math.abs(b.gpuRental + b.modelStorage + b.dataStorage + b.delayPenalty + b.unmetPenalty - head.objective!) < 1e-6);
    assert.equal(head.headroom?.demand, 0.2);
    assert.equal(head.headroom?.slo, 0.25);
    assert.ok(head.headroom!.inflatedObjective! >= head.objective! - 1e-9, 'inflated coefficients never make the plan cheaper');
  }
});

test('under perturbation the headroom plan serves every type where the cost-minimal plan strands one', async () => {
  const r = await robustnessStudy({ problem: tight, seed: 1, scenarios: 8, stresses: [1], sigmas: [0.01], trials: 1, windows: 3, methods: ['DM', 'DM-H', 'AGH', 'AGH-H', 'GH', 'GH-H'], headroom: H, milpTimeLimitS: 10 });
  const row = (m: string) => r.scenarios[0]!.rows.find((x) => x.method === m)!;
  for (const [plain, head] of [['DM', 'DM-H'], ['AGH', 'AGH-H'], ['GH', 'GH-H']] as const) {
    assert.ok(row(plain).violationPct > 0, `${plain} never strands a type`);
    assert.equal(row(head).violationPct, 0, `${head} strands a type`);
    assert.ok(row(head).stage1Usd >= row(plain).stage1Usd);
    assert.ok(row(head).expectedCostUsd < row(plain).expectedCostUsd);
  }
  assert.deepEqual(r.headroom, H);
  assert.deepEqual(r.grw[0]!.rows.map((x) => x.method), ['DM', 'DM-H', 'AGH', 'AGH-H', 'GH', 'GH-H']);
  assert.deepEqual(r.diurnal!.rows.map((x) => x.method), ['DM', 'DM-H', 'AGH', 'AGH-H', 'GH', 'GH-H', 'AGH-5min', 'AGH-H-5min', 'GH-5min', 'GH-H-5min']);
  // Rolling with headroom keeps planning (and judging keep-best) with it: on a flat replay it keeps the dearer
  // headroom plan, where judging on the nominal forecast would adopt the cheaper plan without headroom.
  const flat = await robustnessStudy({ problem: tight, seed: 1, scenarios: 1, stresses: [1], sigmas: [0.01], trials: 1, windows: 3, methods: ['AGH', 'AGH-H'], headroom: H, tracePath: flatTrace() });
  const total = (m: string) => flat.diurnal!.rows.find((x) => x.method === m)!.totalUsd;
  assert.ok(total('AGH-H') > total('AGH') + 1e-6);
  assert.ok(Math.abs(total('AGH-H-5min') - total('AGH-H')) < 1e-9);
});

const cli = (args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', 'plan', ...args], { encoding: 'utf8' });

test('llmfleet plan --headroom writes the headroom to plan.json and rejects bad values with exit 2 and one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-headroom-'));
  const ok = cli(['--generate', '3,3,3', '--seed', '2', '--solver', 'gh', '--bound-time-limit', '0', '--headroom', '0.2,0.25', '--out', dir]);
  assert.equal(ok.status, 0, ok.stderr);
  const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8'));
  assert.equal(plan.headroom.demand, 0.2);
  assert.equal(plan.headroom.slo, 0.25);
  assert.equal(typeof plan.objective, 'number');
  for (const bad of ['0.2', '0.2,-0.1', 'a,b', '0.2,0.25,1', ',0.2']) {
    const r = cli(['--generate', '3,3,3', '--solver', 'gh', '--headroom', bad]);
    assert.equal(r.status, 2, bad);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /--headroom: expected d,s/);
  }
  const s = cli(['study', 'runtime', '--headroom', '0.2,0.25']);
  assert.equal(s.status, 2);
  assert.match(s.stderr, /--headroom: only for plan/);
  assert.deepEqual(parseHeadroom('headroom', ' 0.1 , 0 '), { demand: 0.1, slo: 0 });
});
