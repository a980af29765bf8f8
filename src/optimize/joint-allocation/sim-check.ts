import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { scenarioSchema, type Scenario } from '../../scenario/schema.ts';
import { simulate } from '../../sim/simulator.ts';
import { invariant, UserError } from '../../util/errors.ts';
import { csvCell } from '../../util/csv.ts';
import { Rng } from '../../util/rng.ts';
import { planToFleet, simulatorModel, tierWeightScale, type CatalogModelEntry } from './fleet-export.ts';
import { percentile } from '../../metrics/stats.ts';
import type { Plan } from './plan.ts';
import type { Problem } from './problem.ts';

/**
 * Checks a plan's delay claims by simulation (issue 4: "so its SLO claims can be checked by simulation"). The plan
 * becomes a scenario: one pool per deployed (model, tier) pair with its TP×PP, and a trace of the problem's query
 * types over `durationS` — Poisson arrivals at λ_i × the plan's served share, h_i input and f_i output tokens
 * (rounded, at least 1), each request labelled with its type (`tier`, so summary.json has a block per type) and sent
 * to a pair drawn by the plan's routing fractions. A quantised tier (ν_k < 1) runs a catalog variant of the model
 * whose weights take ν_k of the BF16 bytes (`simulatorModel`, the one fleet.yaml uses; `weightBytesPerParam`, written
 * to catalog.yaml): weight memory and weight reads shrink, KV and FLOPs do not (the tier's higher P_k is not modelled). Two pairs of the same model, hardware,
 * precision and TP/PP serve the same model id, so the router (`jsq`) splits between them, not the plan.
 *
 * The plan's delay is its mean over served queries (the paper's per-query model: prefill + decode under TP/PP, no
 * batching or queueing; (8i)'s served-share-weighted sum would understate it for a partly served type) and its
 * compute row (8g) admits up to η of peak FLOPs; the simulation adds continuous batching, queueing and the
 * calibrated roofline's efficiencies, so the two can differ in either direction.
 */

export const SIM_CHECK_DEFAULT_S = 600;

/**
 * Bounds of a check: every arrival is generated, written to trace.csv and simulated, so the work grows with the
 * requests (≈ 0.3 M took 50 s on plan-example.yaml, 0.9 M over 5 min; `--sim-check 1e8` ran out of memory, 1e308
 * never ended) and the simulated span (the summary's per-15-minute bins). At most one week of arrivals and
 * 200,000 requests, counted at the problem's full demand Σλ_i (a plan serves at most that).
 */
export const MAX_SIM_CHECK_S = 7 * 24 * 3600;
export const MAX_SIM_CHECK_REQUESTS = 200_000;

/**
 * Checks a check's span against the bounds above before any work: `durationS` in [1, MAX_SIM_CHECK_S] and the
 * requests it would generate, Σ λ_i × served_i × durationS (served_i = 1 by default: the problem's full demand),
 * at most MAX_SIM_CHECK_REQUESTS. UserError naming --sim-check and the longest span that fits.
 */
export function checkSimCheckSpan(problem: Problem, durationS: number, served?: readonly number[]): void {
  if (!(durationS >= 1 && durationS <= MAX_SIM_CHECK_S)) {
    throw new UserError(`--sim-check: expected seconds ≥ 1 and ≤ ${MAX_SIM_CHECK_S} (one week), got ${durationS}`);
  }
  const perS = problem.types.reduce((s, t, i) => s + (t.arrivalsPerHour / 3600) * (served ? served[i] ?? 0 : 1), 0);
  const expected = perS * durationS;
  if (expected > MAX_SIM_CHECK_REQUESTS) {
    const fit = Math.floor(MAX_SIM_CHECK_REQUESTS / perS);
    const n = (v: number) => Math.round(v).toLocaleString('en-US');
    throw new UserError(`--sim-check ${durationS}: the ${served ? 'plan\'s served' : 'problem\'s'} arrivals (${+perS.toPrecision(3)} per s) give ≈ ${n(expected)} requests in ${durationS} s, ` +
      `more than the ${n(MAX_SIM_CHECK_REQUESTS)} a check simulates; ${fit >= 1 ? `use --sim-check ${fit} or less` : 'the arrival rates are too high for a simulated check'}`);
  }
}

/** The files `runSimCheck` writes into its folder. */
export const SIM_CHECK_FILES = ['scenario.yaml', 'trace.csv', 'catalog.yaml'] as const;

export interface SimCheckOptions {
  /** Seconds of arrivals (default SIM_CHECK_DEFAULT_S). */
  durationS?: number;
  seed?: number;
}

export interface TypeCheck {
  type: string;
  /**
   * The plan's mean delay of a served query (`TypeReport.delayPerServedS`, the paper's per-query model), comparable
   * with the simulated E2E — not (8i)'s Σ x·D, which is diluted by the served share — and the type's SLO Δ_i, seconds.
   */
  planDelayS: number;
  delaySloS: number;
  requests: number;
  completed: number;
  /** Over completed requests; null when none completed. */
  meanE2eS: number | null;
  p95E2eS: number | null;
  /** Share of the type's simulated requests that did not finish within Δ_i (dropped ones included). */
  overSlo: number;
}

export interface SimCheck {
  durationS: number;
  requests: number;
  types: TypeCheck[];
}

/** The check scenario (workload `trace.csv` and catalog `catalog.yaml` beside it) and those two files' text. */
export function planCheckScenario(problem: Problem, plan: Plan, o: SimCheckOptions = {}): { scenario: Record<string, unknown>; traceCsv: string; catalogYaml: string } {
  if (plan.deployments.length === 0) throw new UserError('--sim-check: the plan deploys nothing, so there is nothing to simulate');
  const unmapped = planToFleet(plan, problem).unmapped;
  if (unmapped.length > 0) {
    throw new UserError(`--sim-check: not in the simulator's catalog: ${unmapped.join(', ')} (models are matched by name, hardware by the tier's hardware field)`);
  }
  // One pool per deployed pair, its model a quantised variant where the tier's ν < 1 (`simulatorModel`: weights × ν),
  // so that each route lands on its own tier.
  const variants: Record<string, CatalogModelEntry> = {};
  const simModel = new Map<string, string>();
  const pools = plan.deployments.map((d) => {
    const sim = simulatorModel(d.model, tierWeightScale(problem.tiers, d.tier));
    if (sim.variant) variants[sim.id] = sim.variant;
    simModel.set(`${d.model}|${d.tier}`, sim.id);
    return { name: `${d.model}@${d.tier}-tp${d.tp}${d.pp > 1 ? `-pp${d.pp}` : ''}`, model: sim.id, hardware: d.hardware, tp: d.tp, pp: d.pp, count: 1 };
  });
  const durationS = o.durationS ?? SIM_CHECK_DEFAULT_S;
  checkSimCheckSpan(problem, durationS, problem.types.map((_, i) => plan.perType[i]?.served ?? 0));
  const rng = new Rng(o.seed ?? 1).fork('plan-sim-check');
  const rows: { t: number; line: string }[] = [];
  for (const [i, type] of problem.types.entries()) {
    const served = plan.perType[i]?.served ?? 0;
    const routes = plan.routing.filter((r) => r.type === type.name && r.fraction > 0);
    const total = routes.reduce((s, r) => s + r.fraction, 0);
    const rate = (type.arrivalsPerHour / 3600) * served;
    if (!(rate > 0) || routes.length === 0) continue;
    const inTok = Math.max(1, Math.round(type.inputTokens));
    const outTok = Math.max(1, Math.round(type.outputTokens));
    const models = routes.map((r) => simModel.get(`${r.model}|${r.tier}`)!);
    for (let t = rng.exponential(rate); t < durationS; t += rng.exponential(rate)) {
      let u = rng.next() * total;
      let k = 0;
      while (k < routes.length - 1 && u >= routes[k]!.fraction) u -= routes[k++]!.fraction;
      rows.push({ t, line: `${t.toFixed(6)},${inTok},${outTok},${csvCell(models[k])},${csvCell(type.name)}` });
      // The expected count is within the bound (checked above); twice it is past any Poisson draw of it.
      invariant(rows.length <= 2 * MAX_SIM_CHECK_REQUESTS, `sim-check: more than ${2 * MAX_SIM_CHECK_REQUESTS} arrivals generated`);
    }
  }
  if (rows.length === 0) throw new UserError(`--sim-check: the plan serves no request in ${durationS} s`);
  rows.sort((a, b) => a.t - b.t);
  const traceCsv = ['arrival_s,input_tokens,output_tokens,model,tier', ...rows.map((r) => r.line)].join('\n') + '\n';
  const scenario = {
    name: 'plan-sim-check',
    seed: o.seed ?? 1,
    ...(Object.keys(variants).length > 0 ? { catalog: 'catalog.yaml' } : {}),
    workload: { trace: { path: 'trace.csv', format: 'csv' } },
    fleet: { pools },
    routing: { policy: 'jsq' },
  };
  return { scenario, traceCsv, catalogYaml: stringify({ models: variants }) };
}

/** Writes the check scenario to `dir` (scenario.yaml + trace.csv), simulates it and compares delays per type. */
export function runSimCheck(problem: Problem, plan: Plan, dir: string, o: SimCheckOptions = {}): SimCheck {
  const { scenario, traceCsv, catalogYaml } = planCheckScenario(problem, plan, o);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'trace.csv'), traceCsv);
  writeFileSync(join(dir, 'catalog.yaml'), catalogYaml);
  writeFileSync(join(dir, 'scenario.yaml'), `# llmfleet simulate --scenario ${join(dir, 'scenario.yaml')}\n` + stringify(scenario));
  const sc: Scenario = scenarioSchema.parse(scenario);
  const { log } = simulate(sc, dir, { mode: 'fast' });
  const types: TypeCheck[] = [];
  for (const [i, type] of problem.types.entries()) {
    const idx = log.tiers.indexOf(type.name);
    if (idx < 0) continue;
    const e2e: number[] = [];
    let requests = 0;
    let over = 0;
    for (let r = 0; r < log.n; r++) {
      if (log.tierIdx[r] !== idx) continue;
      requests++;
      if (!log.isDone(r)) {
        over++;
        continue;
      }
      const d = log.e2e[r]!;
      e2e.push(d);
      if (d > type.delaySloS) over++;
    }
    e2e.sort((a, b) => a - b);
    const planDelayS = plan.perType[i]!.delayPerServedS;
    invariant(planDelayS !== null, `sim-check: type ${type.name} has requests but the plan serves none of it`);
    types.push({
      type: type.name,
      planDelayS,
      delaySloS: type.delaySloS,
      requests,
      completed: e2e.length,
      meanE2eS: e2e.length ? e2e.reduce((s, x) => s + x, 0) / e2e.length : null,
      p95E2eS: e2e.length ? percentile(e2e, 95) : null,
      overSlo: requests ? over / requests : 0,
    });
  }
  return { durationS: o.durationS ?? SIM_CHECK_DEFAULT_S, requests: log.n, types };
}
