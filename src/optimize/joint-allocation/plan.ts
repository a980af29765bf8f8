import { agh } from './agh.ts';
import { dvr, hf, lpr } from './baselines.ts';
import { buildCoefficients, type Coefficients } from './coefficients.ts';
import { evaluate, type Allocation, type CostBreakdown, type TypeReport, type Violation } from './evaluate.ts';
import { greedy } from './gh.ts';
import { MAX_MILP_NONZEROS, MAX_MILP_VARS, MilpTooLargeError, solveMilp, type Encoding } from './milp.ts';
import { UserError } from '../../util/errors.ts';
import type { Problem } from './problem.ts';
import { checkHeadroom, isNoHeadroom, sloFactors, withHeadroom, type Headroom } from './headroom.ts';
import { hasUnservedCaps, honourUnservedCaps, routeHonouringCaps } from './route.ts';

/** `agh-a2`: Algorithm 2 exactly as the paper lists it (`agh` adds LP routing and a deployment search, docs/FIDELITY.md). */
export const SOLVERS = ['milp', 'gh', 'agh', 'agh-a2', 'lpr', 'dvr', 'hf'] as const;
export type SolverName = (typeof SOLVERS)[number];
/** The solvers whose own run is a MILP under `timeLimitS` (the MILP, and the LPR and HF baselines; `runSolver`). */
export const MILP_SOLVERS: readonly SolverName[] = ['milp', 'lpr', 'hf'];

export type PlanStatus = 'optimal' | 'feasible' | 'infeasible' | 'time-limit';

export interface Deployment {
  model: string;
  tier: string;
  hardware: string;
  tp: number;
  pp: number;
  gpus: number;
  types: string[];
}

export interface Route {
  type: string;
  model: string;
  tier: string;
  fraction: number;
}

/** What `llmfleet plan` writes to plan.json. Money in USD over the horizon; seconds for times. */
export interface Plan {
  solver: SolverName;
  status: PlanStatus;
  /** Total cost (8a) of the returned plan, re-scored by the evaluator; null when there is no plan. */
  objective: number | null;
  costBreakdown: CostBreakdown | null;
  /** Proven lower bound on the optimum (MILP dual bound) and the plan's relative gap to it. */
  bound: number | null;
  gap: number | null;
  boundSource: 'milp' | null;
  solveSeconds: number;
  feasible: boolean;
  violations: Violation[];
  perType: TypeReport[];
  gpusByTier: Record<string, number>;
  budgetUsedUsd: number | null;
  storageUsedGb: number | null;
  deployments: Deployment[];
  routing: Route[];
  size: { I: number; J: number; K: number };
  milp?: {
    encoding: Encoding; vars: number; rows: number; solverObjective: number | null;
    /** The MIP start HiGHS was given (AGH's plan, found in `seconds`, part of solveSeconds); null: a cold solve. */
    warmStart: { solver: 'agh'; objective: number; seconds: number } | null;
  };
  infeasibility?: string;
  /** [ours] Present only for a headroom plan (`PlanOptions.headroom`). */
  headroom?: HeadroomReport;
  notes: string[];
}

export interface PlanOptions {
  solver?: SolverName;
  timeLimitS?: number;
  seed?: number;
  encoding?: Encoding;
  /** For heuristics: run the MILP this long (s) to get a bound for the gap; 0 = skip. */
  boundTimeLimitS?: number;
  /** [ours] Plan against inflated coefficients (`headroom.ts`); default none (the plain model). */
  headroom?: Headroom;
  /** AGH's simplex work budget (`AghOptions.maxLpWork`, default DEFAULT_LP_WORK), for `agh` and the MILP's start. */
  aghLpWork?: number;
  /** MILP: start HiGHS from AGH's plan (default 'agh'; 'none' is a cold solve, as the studies' exact solver). */
  warmStart?: WarmStart;
  /** Told what the solve is doing as it goes (`plan`'s progress line). */
  progress?: (what: string) => void;
}

export const WARM_STARTS = ['agh', 'none'] as const;
export type WarmStart = (typeof WARM_STARTS)[number];

/** plan.json's record of a headroom plan (absent without headroom). */
export interface HeadroomReport extends Headroom {
  /** The delay/error factor each type was planned with: 1 + slo, or less where no candidate meets its SLOs beyond. */
  sloFactorByType: Record<string, number>;
  /** The plan as its solver saw it: objective and breakdown on the inflated coefficients. */
  inflatedObjective: number | null;
  inflatedCostBreakdown: CostBreakdown | null;
  inflatedFeasible: boolean;
  /** MILP only: the inflated problem's dual bound and the plan's gap to it. */
  inflatedBound: number | null;
  inflatedGap: number | null;
}

export function planFromAllocation(c: Coefficients, a: Allocation | null, base: Pick<Plan, 'solver' | 'solveSeconds'> & Partial<Plan>): Plan {
  const p = c.p;
  const size = { I: c.I, J: c.J, K: c.K };
  if (!a) {
    return {
      status: 'infeasible', objective: null, costBreakdown: null, bound: null, gap: null, boundSource: null, feasible: false, violations: [],
      perType: [], gpusByTier: {}, budgetUsedUsd: null, storageUsedGb: null, deployments: [], routing: [], size, notes: [], ...base,
    };
  }
  const ev = evaluate(c, a);
  const JK = c.J * c.K;
  const deployments: Deployment[] = [];
  const routing: Route[] = [];
  for (let pr = 0; pr < JK; pr++) {
    const cf = a.cfg[pr]!;
    if (cf < 0) continue;
    const j = Math.floor(pr / c.K), k = pr % c.K;
    const conf = c.configs[cf]!;
    const types = p.types.filter((_, i) => a.z[i * JK + pr]).map((t) => t.name);
    deployments.push({ model: p.models[j]!.name, tier: p.tiers[k]!.name, hardware: p.tiers[k]!.hardware, tp: conf.tp, pp: conf.pp, gpus: conf.gpus, types });
  }
  for (let i = 0; i < c.I; i++) {
    for (let pr = 0; pr < JK; pr++) {
      const x = a.x[i * JK + pr]!;
      if (x > 1e-9) routing.push({ type: p.types[i]!.name, model: p.models[Math.floor(pr / c.K)]!.name, tier: p.tiers[pr % c.K]!.name, fraction: x });
    }
  }
  const bound = base.bound ?? null;
  const gap = base.gap !== undefined ? base.gap : bound !== null ? Math.max(0, (ev.objective - bound) / Math.max(Math.abs(ev.objective), 1e-9)) : null;
  const plan = {
    status: base.status ?? (ev.feasible ? 'feasible' : 'infeasible'),
    objective: ev.objective, costBreakdown: ev.costBreakdown, bound, gap, boundSource: bound !== null ? 'milp' : null,
    feasible: ev.feasible, violations: ev.violations, perType: ev.perType, gpusByTier: ev.gpusByTier,
    budgetUsedUsd: ev.budgetUsedUsd, storageUsedGb: ev.storageUsedGb, deployments, routing, size, notes: [], ...base,
  } as Plan;
  // A proven lower bound can never exceed the cost of a feasible plan. HiGHS can still report one (and call its
  // incumbent "optimal") on a badly scaled model within the schema's limits (all types at λ = 1e12: data-storage and
  // compute coefficients ~1e13 next to O(1) ones); the bound is then not a proof: drop it and the gap, and say so.
  if (plan.bound !== null && ev.feasible && ev.objective < plan.bound - 1e-6 * Math.max(1, Math.abs(plan.bound))) {
    plan.notes.push(`the MILP's bound $${plan.bound.toFixed(2)} is above this feasible plan's cost $${ev.objective.toFixed(2)}: HiGHS's result is ` +
      'numerically unreliable on this instance (coefficients of very different magnitudes), so no bound or gap is reported' +
      (plan.status === 'optimal' ? ' and the status is feasible, not optimal' : ''));
    plan.bound = null;
    plan.gap = null;
    plan.boundSource = null;
    if (plan.status === 'optimal') plan.status = 'feasible';
  }
  // (8i)/(8j) weight delay and error by the served share (the paper's rows, kept): a partly served type can meet them
  // while its served queries are slower or less accurate than its SLO on average. Say which, with the numbers (a
  // row that does not hold is a violation, reported as such).
  const holds = (slack: number, slo: number) => slack >= -1e-6 * Math.max(1, slo);
  const what = (t: TypeReport) => [
    ...(t.servedOverSlo.includes('delay') && holds(t.delaySlackS, t.delaySloS) ? [`delay ${t.delayPerServedS!.toFixed(2)} s > Δ ${t.delaySloS} s`] : []),
    ...(t.servedOverSlo.includes('error') && holds(t.errorSlack, t.errorSlo) ? [`error ${t.errorPerServed!.toFixed(4)} > ε ${t.errorSlo}`] : []),
  ].join(', ');
  const diluted = ev.perType.filter((t) => what(t) !== '');
  if (diluted.length) {
    plan.notes.push(`served queries over their SLO on average: ${diluted.map((t) => `${t.type} (${(t.served * 100).toFixed(1)} % served) ${what(t)}`).join('; ')}` +
      ' — (8i)/(8j) weight delay and error by the served share, so serving part of a type meets them (docs/fidelity/joint-allocation.md, "Served-share weighting")');
  }
  // The one place a plan that breaks an unserved cap ζ_i is flagged, whatever the solver: status infeasible
  // (never "optimal"/"feasible") and a note naming the types.
  const capped = ev.violations.filter((v) => v.family === 'unserved-cap').length > 0;
  if (capped) {
    plan.status = 'infeasible';
    const over = ev.perType.map((t, i) => ({ t, cap: p.types[i]!.unservedCap })).filter(({ t, cap }) => t.unserved > cap + 1e-6 * Math.max(1, cap));
    plan.notes.push(`the plan breaks the unserved cap ζ: ${over.map(({ t, cap }) => `${t.type} ${(t.unserved * 100).toFixed(2)} % unserved > ζ ${+(cap * 100).toFixed(4)} %`).join(', ')}` +
      (base.solver === 'milp' || base.solver === 'hf' ? ' (status infeasible)'
        : ` (${base.solver}'s deployment has no routing that meets it, on its admissions or with those types admitted on every deployed pair; status infeasible)`));
  }
  return plan;
}

/** Solves a problem with one method and returns the plan: the library's entry point (the CLI builds the coefficients itself, to check the model's size first, and calls solveCoefficients). */
export async function solvePlan(problem: Problem, opts: PlanOptions = {}): Promise<Plan> {
  const c = buildCoefficients(problem);
  return solveCoefficients(c, opts);
}

export async function solveCoefficients(c: Coefficients, opts: PlanOptions = {}): Promise<Plan> {
  if (opts.headroom && !isNoHeadroom(opts.headroom)) return solveWithHeadroom(c, checkHeadroom(opts.headroom, 'headroom'), opts);
  const solver = opts.solver ?? 'agh';
  opts = { ...opts, timeLimitS: opts.timeLimitS ?? 600 }; // the paper's 600 s cap
  const raw = await runSolver(c, solver, opts);
  if (raw.milp) {
    const plan = planFromAllocation(c, raw.allocation, {
      solver, solveSeconds: raw.solveSeconds, status: raw.status!, bound: raw.bound, milp: raw.milp,
      ...(raw.infeasibility ? { infeasibility: raw.infeasibility } : {}),
    });
    plan.notes.push(...raw.notes);
    return plan;
  }
  if ((opts.boundTimeLimitS ?? 0) > 0) opts.progress?.(`MILP for the bound (up to ${opts.boundTimeLimitS} s)`);
  const { bound, infeasibility } = await boundRun(c, opts.boundTimeLimitS ?? 0, raw.notes, 'bound from MILP');
  const plan = planFromAllocation(c, raw.allocation, { solver, solveSeconds: raw.solveSeconds, bound, ...(infeasibility ? { infeasibility } : {}) });
  plan.notes.push(...raw.notes);
  return plan;
}

/**
 * A heuristic's gap reference: the compact MILP's bound after `limitS` seconds (0: none); a note says how it ended.
 * The bound is optional: a MILP too large to build (`MilpTooLargeError`) or one HiGHS cannot load is skipped with
 * a note, and the heuristic's plan stands. When the MILP proves the problem infeasible, `infeasibility` is the
 * diagnosis `--solver milp` prints (`diagnoseInfeasible`: which constraint families bind).
 */
async function boundRun(c: Coefficients, limitS: number, notes: string[], label: string, tail = ''): Promise<{ bound: number | null; infeasibility?: string }> {
  if (limitS <= 0) return { bound: null };
  let r: Awaited<ReturnType<typeof solveMilp>>;
  try {
    r = await solveMilp(c, { encoding: 'compact', timeLimitS: limitS });
  } catch (e) {
    if (e instanceof MilpTooLargeError) {
      const n = (v: number) => v.toLocaleString('en-US');
      notes.push(`bound skipped: the MILP would have ${n(e.size.vars)} variables and ${n(e.size.nonzeros)} nonzeros ` +
        `(limits ${n(MAX_MILP_VARS)} and ${n(MAX_MILP_NONZEROS)}); use --bound-time-limit 0 to silence this note`);
      return { bound: null };
    }
    if (e instanceof UserError) {
      notes.push(`bound skipped: ${e.message}`);
      return { bound: null };
    }
    throw e;
  }
  if (r.bound !== null) notes.push(`${label} (${r.status}, ${r.solveSeconds.toFixed(2)} s)${tail}`);
  else notes.push(`${label}: none proven (${r.status}, ${r.solveSeconds.toFixed(2)} s)` +
    (r.infeasibility ? ': the problem has no feasible plan, diagnosed as --solver milp does' : '; use --bound-time-limit 0 to skip the bound run'));
  return { bound: r.bound, ...(r.infeasibility ? { infeasibility: r.infeasibility.message } : {}) };
}

interface RawSolve {
  allocation: Allocation | null;
  solveSeconds: number;
  /** MILP only: mapped status, bound, model size, infeasibility message. */
  status?: PlanStatus;
  bound: number | null;
  milp?: NonNullable<Plan['milp']>;
  infeasibility?: string;
  notes: string[];
}

/** One solver on one set of coefficients; no bound run, no re-scoring. */
async function runSolver(c: Coefficients, solver: SolverName, opts: PlanOptions): Promise<RawSolve> {
  if (solver === 'milp') return runMilp(c, opts);
  const t0 = performance.now();
  let a: Allocation | null;
  const notes: string[] = [];
  switch (solver) {
    // GH and AGH do not plan against ζ < 1; `honourUnservedCaps` re-routes a plan of theirs that breaks a cap
    // with u ≤ ζ (no-op with every ζ_i = 1, as in every study).
    case 'gh': a = await honourUnservedCaps(c, greedy(c).toAllocation()); break;
    case 'agh': a = await runAgh(c, opts, notes); break;
    case 'agh-a2': {
      const r = agh(c, { seed: opts.seed ?? 0, exact: true });
      a = await honourUnservedCaps(c, r.state.toAllocation());
      notes.push(`AGH (Algorithm 2 as listed) ran ${r.orderingsRun} orderings; best was #${r.bestOrdering}`);
      break;
    }
    case 'lpr': a = await lpr(c, opts.timeLimitS !== undefined ? { timeLimitS: opts.timeLimitS } : {}); break;
    case 'dvr': a = await dvr(c); break;
    case 'hf': {
      const r = await hf(c, opts.timeLimitS !== undefined ? { timeLimitS: opts.timeLimitS } : {});
      a = r.allocation;
      if (r.tier >= 0) notes.push(`HF chose tier ${c.p.tiers[r.tier]!.name}`);
      break;
    }
  }
  return { allocation: a, solveSeconds: (performance.now() - t0) / 1000, bound: null, notes };
}

/** AGH's plan, re-routed under the unserved caps ζ (GH and AGH do not plan against ζ < 1). */
async function runAgh(c: Coefficients, opts: PlanOptions, notes: string[]): Promise<Allocation> {
  const r = agh(c, { seed: opts.seed ?? 0, ...(opts.aghLpWork !== undefined ? { maxLpWork: opts.aghLpWork } : {}), ...(opts.progress ? { progress: opts.progress } : {}) });
  let a = await honourUnservedCaps(c, r.state.toAllocation());
  notes.push(`AGH ran ${r.orderingsRun} orderings; best was #${r.bestOrdering}`);
  if (hasUnservedCaps(c)) {
    // AGH's search contains GH's ordering and keeps the best feasible plan (digest §7.1): GH's plan re-routed
    // under the caps is one more candidate, so AGH stays ≤ GH.
    const g = await honourUnservedCaps(c, greedy(c).toAllocation());
    const eg = evaluate(c, g), ea = evaluate(c, a);
    if (eg.feasible && (!ea.feasible || eg.objective < ea.objective - 1e-9)) {
      a = g;
      notes.push('under the unserved caps, GH\'s plan re-routed with u ≤ ζ was better than AGH\'s and is returned');
    }
  }
  return a;
}

/**
 * The MILP, by default started from AGH's plan (a MIP start: HiGHS begins with it as its incumbent, so a plan
 * stopped at the time limit is never worse than AGH's, and the incumbent prunes the search). Measured (seed 1,
 * compact, 60 s, docs/fidelity/joint-allocation.md): (15,15,10) proved optimal in 41 s instead of stopping with a
 * $18,744 incumbent; (20,20,20) ends at AGH's $155.83 with bound $120.16 instead of a $124,598 incumbent.
 * AGH's time counts in solveSeconds and comes off the time limit.
 */
async function runMilp(c: Coefficients, opts: PlanOptions): Promise<RawSolve> {
  const encoding = opts.encoding ?? 'paper';
  const notes: string[] = [];
  const t0 = performance.now();
  let start: Allocation | null = null;
  let warmStart: NonNullable<Plan['milp']>['warmStart'] = null;
  if ((opts.warmStart ?? 'agh') === 'agh') {
    const a = await runAgh(c, opts, []);
    const ev = evaluate(c, a);
    const seconds = (performance.now() - t0) / 1000;
    if (ev.feasible) {
      start = a;
      warmStart = { solver: 'agh', objective: ev.objective, seconds };
      notes.push(`MIP start: AGH's plan ($${ev.objective.toFixed(2)}, ${seconds.toFixed(2)} s)`);
    } else notes.push(`MIP start: none (AGH found no feasible plan in ${seconds.toFixed(2)} s)`);
  }
  const startS = (performance.now() - t0) / 1000;
  const left = opts.timeLimitS !== undefined ? Math.max(0.1, opts.timeLimitS - startS) : undefined;
  opts.progress?.(`MILP${left !== undefined ? ` (up to ${left.toFixed(0)} s)` : ''}`);
  const r = await solveMilp(c, { encoding, ...(left !== undefined ? { timeLimitS: left } : {}), ...(start ? { start } : {}) });
  let allocation = r.allocation;
  if (start && warmStart && (!allocation || !(evaluate(c, allocation).objective <= warmStart.objective + 1e-9 * Math.max(1, warmStart.objective)))) {
    // HiGHS's incumbent is never worse than its start; its decoded, re-scored plan could be by rounding.
    allocation = start;
    notes.push('the MILP\'s decoded plan scored worse than its start; the start (AGH\'s plan) is returned');
  }
  const status: PlanStatus = r.status === 'optimal' ? 'optimal' : r.status === 'time-limit' ? 'time-limit' : 'infeasible';
  if (r.status === 'time-limit' && !allocation) notes.push('time limit reached before any incumbent was found');
  if (r.status === 'unbounded' || r.status === 'error') notes.push(`solver returned ${r.status}`);
  return {
    allocation, solveSeconds: startS + r.solveSeconds, status, bound: r.bound,
    milp: { encoding, vars: r.vars, rows: r.rows, solverObjective: r.objective, warmStart },
    ...(r.infeasibility ? { infeasibility: r.infeasibility.message } : {}), notes,
  };
}

/**
 * [ours] Headroom planning (`headroom.ts`): the solver runs on the inflated coefficients; its deployment
 * (cfg, z) is kept and the routing re-optimised on the nominal coefficients (`routeFixed`), so `objective`,
 * `costBreakdown`, `perType` and `routing` are nominal. `bound`/`gap` are the nominal problem's (heuristics'
 * bound run; null for the MILP, whose bound is the inflated problem's and goes to `headroom.inflatedBound`).
 */
async function solveWithHeadroom(c: Coefficients, h: Headroom, opts: PlanOptions): Promise<Plan> {
  const solver = opts.solver ?? 'agh';
  const ch = withHeadroom(c, h);
  const raw = await runSolver(ch, solver, { ...opts, timeLimitS: opts.timeLimitS ?? 600 });
  const t0 = performance.now();
  const inflated = raw.allocation ? evaluate(ch, raw.allocation) : null;
  const notes = [...raw.notes];
  let nominal: Allocation | null = null;
  if (raw.allocation) {
    // u ≤ ζ_i kept: the inflated plan's own routing meets it nominally (same deployment, looser rows), so a plan
    // that honours the caps keeps honouring them; a deployment with no routing that meets them is re-routed
    // with u ∈ [0, 1] and reported as breaking ζ (`planFromAllocation`).
    const r = await routeHonouringCaps(c, { cfg: raw.allocation.cfg, z: raw.allocation.z });
    nominal = r.ok ? r.allocation : raw.allocation;
    if (!r.ok) notes.push('nominal re-routing failed (LP solver); routing is the inflated plan\'s, scored on the nominal coefficients');
  }
  const solveSeconds = raw.solveSeconds + (performance.now() - t0) / 1000;
  const { bound, infeasibility } = solver === 'milp' ? { bound: null } : await boundRun(c, opts.boundTimeLimitS ?? 0, notes, 'bound from the nominal MILP', ': the gap is the price of headroom plus the heuristic\'s own gap');
  const why = raw.infeasibility ?? infeasibility; // the inflated MILP's diagnosis, else the nominal bound run's
  const inflatedGap = raw.bound !== null && inflated ? Math.max(0, (inflated.objective - raw.bound) / Math.max(Math.abs(inflated.objective), 1e-9)) : null;
  const plan = planFromAllocation(c, nominal, {
    solver, solveSeconds, bound,
    ...(raw.milp ? { status: raw.status!, milp: raw.milp, gap: null } : {}),
    ...(why ? { infeasibility: why } : {}),
  });
  plan.headroom = {
    demand: h.demand, slo: h.slo,
    sloFactorByType: Object.fromEntries([...sloFactors(c, h.slo)].map((f, i) => [c.p.types[i]!.name, f])),
    inflatedObjective: inflated ? inflated.objective : null,
    inflatedCostBreakdown: inflated ? inflated.costBreakdown : null,
    inflatedFeasible: inflated ? inflated.feasible : false,
    inflatedBound: raw.bound,
    inflatedGap,
  };
  plan.notes.push(...notes);
  plan.notes.push(
    `headroom: deployment planned on λ × ${+(1 + h.demand).toFixed(6)} and delay/error × ${+(1 + h.slo).toFixed(6)}; objective, cost breakdown, ` +
    'per-type report and routing are on the nominal coefficients (deployment fixed, routing re-optimised)' +
    (raw.milp ? `; status ${plan.status} refers to the inflated MILP` : ''),
  );
  return plan;
}

