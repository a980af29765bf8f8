import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { solvePlan } from '../../../src/optimize/joint-allocation/plan.ts';
import { planCheckScenario, runSimCheck } from '../../../src/optimize/joint-allocation/sim-check.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { simulate } from '../../../src/sim/simulator.ts';
import { getModel, loadCatalogFile } from '../../../src/model/catalog.ts';

test('a plan becomes a scenario: one pool per pair, quantised tiers as lighter-weight variants, requests routed by the plan', async () => {
  const problem = generateProblem(6, 6, 10, 1);
  const plan = await solvePlan(problem, { solver: 'agh', boundTimeLimitS: 0 });
  const { scenario, traceCsv } = planCheckScenario(problem, plan, { durationS: 60 });
  const pools = (scenario.fleet as { pools: { name: string; model: string; hardware: string; tp: number }[] }).pools;
  assert.equal(pools.length, plan.deployments.length);
  const rows = traceCsv.trim().split('\n').slice(1).map((l) => l.split(','));
  assert.ok(rows.length > 100);
  for (const [, inTok, outTok, model, type] of rows) {
    const t = problem.types.find((x) => x.name === type)!;
    assert.equal(Number(inTok), Math.round(t.inputTokens));
    assert.equal(Number(outTok), Math.round(t.outputTokens));
    // The request's pool is one its type is routed to.
    const targets = plan.routing.filter((r) => r.type === type && r.fraction > 0).map((r) => pools[plan.deployments.findIndex((d) => d.model === r.model && d.tier === r.tier)]!.model);
    assert.ok(targets.includes(model!), `${type} sent to ${model}, plan routes it to ${targets.join(', ')}`);
  }
  // Seed 1's plan has an int4 tier (ν = 0.25): its pool runs a variant with a quarter of the weight bytes.
  const int4 = plan.deployments.findIndex((d) => d.tier.endsWith('int4'));
  assert.ok(int4 >= 0, 'the fixture plan should use an int4 tier');
  assert.match(pools[int4]!.model, /-w4$/);
});

test('runSimCheck writes a scenario that simulates on its own and reports each type against its SLO', async () => {
  const problem = generateProblem(6, 6, 10, 1);
  const plan = await solvePlan(problem, { solver: 'agh', boundTimeLimitS: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-simcheck-'));
  const check = runSimCheck(problem, plan, dir, { durationS: 30 });
  assert.ok(check.requests > 50);
  assert.equal(check.types.reduce((s, t) => s + t.requests, 0), check.requests);
  for (const t of check.types) {
    assert.ok(t.overSlo >= 0 && t.overSlo <= 1);
    assert.ok(t.completed <= t.requests);
    if (t.completed > 0) assert.ok(t.meanE2eS! > 0 && t.p95E2eS! >= 0);
  }
  const variant = Object.entries(loadCatalogFile(join(dir, 'catalog.yaml')).models).find(([id]) => id.endsWith('-w4'))!;
  assert.equal(variant[1].weightBytesPerParam, getModel('llama3.1-8b').bytesPerParam * 0.25);
  // The written files are a normal scenario: the same run from the command line's loader.
  const { scenario, baseDir } = loadScenario({ file: join(dir, 'scenario.yaml'), sets: [] });
  const res = simulate(scenario, baseDir, { mode: 'fast' });
  assert.equal(res.log.n, check.requests);
  assert.ok(readFileSync(join(dir, 'scenario.yaml'), 'utf8').startsWith('# llmfleet simulate --scenario'));
});

test('a query-type name with a comma or a quote is one CSV cell in the sim-check trace, and the run reads it back', async () => {
  const problem = generateProblem(4, 4, 5, 2);
  problem.types[0]!.name = 'summarization, "short"';
  const plan = await solvePlan(problem, { solver: 'agh', boundTimeLimitS: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-simcheck-comma-'));
  const check = runSimCheck(problem, plan, dir, { durationS: 30 });
  const t = check.types.find((x) => x.type === 'summarization, "short"');
  assert.ok(t !== undefined && t.requests > 0, 'the renamed type was simulated under its own name');
});
