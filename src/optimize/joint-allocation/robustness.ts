import { UserError } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import { agh } from './agh.ts';
import { dvr, hf, lpr } from './baselines.ts';
import { buildCoefficients, type Coefficients, type CoefOverrides } from './coefficients.ts';
import { evaluate, type Allocation } from './evaluate.ts';
import { budgetForTypes, generateProblem } from './generate.ts';
import { greedy } from './gh.ts';
import { checkHeadroom, STUDY_HEADROOM, withHeadroom, type Headroom } from './headroom.ts';
import { solveMilp } from './milp.ts';
import { LIMITS, type Problem } from './problem.ts';
import { routeFixed } from './route.ts';
import type { Progress } from './studies.ts';
import { BUNDLED_REPLAY_TRACE, traceWindows, type TraceWindows } from './trace-windows.ts';

/**
 * Robustness of fixed plans (digest §4.7–4.8): Stage-2 re-routing on perturbed scenarios (Table II style and
 * the S1–S5 suite), GRW demand volatility (Table IV), trace replay with 5-min rolling re-planning (Table V).
 */

const quiet: Progress = () => {};

/**
 * Study input bounds (the CLI's `plan study robustness` flags name them in their errors and --help):
 * - Stage-2 scenarios per stress (`--scenarios`): the paper draws 500; 20× that at most, since every scenario is a
 *   routing LP per method (an unbounded count ran for ever).
 * - GRW trials per σ (`--trials`): the paper runs 30; each trial is 288 windows × a routing LP per method.
 * - GRW volatility σ (`--sigmas`): the paper's grid is 0.01–0.05. The first window is nominal, so the last of 288 has
 *   taken 287 shocks: log-demand std σ·√287 (the digest's σ·√288 to 0.2 %; 3.4 at σ = 0.2, a ×30 spread); at σ = 5 a window's demand reached 1e16 per hour and HiGHS refused the model,
 *   at 1e308 the walk made NaN costs. `GRW_MAX_ARRIVALS_PER_HOUR` still guards each walk.
 * - Stress (`--stresses`, `capSweep`'s too): a multiplier of every delay and error coefficient (the paper's ×1.2, ×1.5);
 *   at 1e308 the coefficients were infinite and HiGHS refused the model.
 */
export const MAX_STAGE2_SCENARIOS = 10_000;
export const MAX_GRW_TRIALS = 100;
export const MAX_GRW_SIGMA = 0.2;
export const MIN_STRESS = 0.01;
export const MAX_STRESS = 100;
/** A GRW walk may take a type's demand up to the problem files' λ limit, no further (`LIMITS.arrivalsPerHour`). */
export const GRW_MAX_ARRIVALS_PER_HOUR = LIMITS.arrivalsPerHour;

/** Checks study options against the bounds above; the UserError names the CLI flag. */
export function checkRobustnessOptions(o: { scenarios?: number | undefined; trials?: number | undefined; sigmas?: readonly number[] | undefined; stresses?: readonly number[] | undefined }): void {
  const count = (flag: string, v: number | undefined, max: number) => {
    if (v !== undefined && !(Number.isInteger(v) && v >= 1 && v <= max)) throw new UserError(`${flag}: expected an integer ≥ 1 and ≤ ${max}, got ${v}`);
  };
  const list = (flag: string, vs: readonly number[] | undefined, min: number, max: number) => {
    for (const v of vs ?? []) if (!(v >= min && v <= max)) throw new UserError(`${flag}: expected numbers ≥ ${min} and ≤ ${max}, got ${v}`);
  };
  count('--scenarios', o.scenarios, MAX_STAGE2_SCENARIOS);
  count('--trials', o.trials, MAX_GRW_TRIALS);
  list('--sigmas', o.sigmas, 0, MAX_GRW_SIGMA);
  list('--stresses', o.stresses, MIN_STRESS, MAX_STRESS);
}


/**
 * `AGH-A2` is Algorithm 2 exactly as the paper lists it (`agh(…, { exact: true })`), i.e. the paper's AGH.
 * `AGH-H` / `GH-H` / `DM-H` [ours] are AGH / GH / the MILP planned with headroom (`headroom.ts`, default
 * `STUDY_HEADROOM` = λ × 1.2, delay/error × 1.25); their deployment is then re-routed on the nominal
 * coefficients (the nominal row) and evaluated in Stage 2 exactly like every other method.
 */
export type Method = 'AGH' | 'AGH-H' | 'AGH-A2' | 'GH' | 'GH-H' | 'DM' | 'DM-H' | 'LPR' | 'DVR' | 'HF';
export const METHODS: Method[] = ['AGH', 'AGH-H', 'AGH-A2', 'GH', 'GH-H', 'DM', 'DM-H', 'LPR', 'DVR', 'HF'];

/** Methods in the GRW table (static plans of the heuristics and the MILP). */
const GRW_METHODS: ReadonlySet<Method> = new Set<Method>(['AGH', 'AGH-H', 'AGH-A2', 'GH', 'GH-H', 'DM', 'DM-H']);

/** Methods with a 5-min rolling row in the trace replay (the heuristics; DM-5min would need 288 MILP solves). */
type RollingMethod = 'AGH' | 'AGH-H' | 'GH' | 'GH-H';
const ROLLING_METHODS: ReadonlySet<Method> = new Set<Method>(['AGH', 'AGH-H', 'GH', 'GH-H']);

export async function stage1Plans(c: Coefficients, opts: { seed?: number; milpTimeLimitS?: number; methods?: Method[]; headroom?: Headroom } = {}): Promise<Map<Method, Allocation>> {
  const out = new Map<Method, Allocation>();
  const tl = opts.milpTimeLimitS ?? 60;
  const h = opts.headroom ?? STUDY_HEADROOM;
  const nominal = async (a: Allocation) => (await routeFixed(c, { cfg: a.cfg, z: a.z })).allocation;
  for (const m of opts.methods ?? METHODS) {
    switch (m) {
      case 'AGH': out.set(m, agh(c, { seed: opts.seed ?? 0 }).state.toAllocation()); break;
      case 'AGH-H': out.set(m, await nominal(agh(withHeadroom(c, h), { seed: opts.seed ?? 0 }).state.toAllocation())); break;
      case 'DM-H': { const r = await solveMilp(withHeadroom(c, h), { encoding: 'compact', timeLimitS: tl, diagnose: false }); if (r.allocation) out.set(m, await nominal(r.allocation)); break; }
      case 'AGH-A2': out.set(m, agh(c, { seed: opts.seed ?? 0, exact: true }).state.toAllocation()); break;
      case 'GH': out.set(m, greedy(c).toAllocation()); break;
      case 'GH-H': out.set(m, await nominal(greedy(withHeadroom(c, h)).toAllocation())); break;
      case 'DM': { const r = await solveMilp(c, { encoding: 'compact', timeLimitS: tl, diagnose: false }); if (r.allocation) out.set(m, r.allocation); break; }
      case 'LPR': out.set(m, await lpr(c)); break;
      case 'DVR': out.set(m, await dvr(c)); break;
      case 'HF': { const r = await hf(c, { timeLimitS: tl }); if (r.allocation) out.set(m, r.allocation); break; }
    }
  }
  return out;
}

export interface RobustRow {
  method: Method;
  stage1Usd: number;
  expectedCostUsd: number;
  violationPct: number;
  /** Mean served share over scenarios and types. */
  servedPct: number;
}

/** Per-(i,j,k) one-sided inflation (digest §4.7 [A]: hat = nominal·U(0.10,0.25); realised = nominal + hat·U(0,1)). */
export function perturbation(c: Coefficients, rng: Rng, stress = 1, demand = true): CoefOverrides {
  const N = c.I * c.J * c.K;
  const delayScale = new Float64Array(N), errorScale = new Float64Array(N);
  for (let t = 0; t < N; t++) {
    delayScale[t] = stress * (1 + (0.1 + 0.15 * rng.next()) * rng.next());
    errorScale[t] = stress * (1 + (0.1 + 0.15 * rng.next()) * rng.next());
  }
  const lambda = Float64Array.from(c.p.types.map((t) => t.arrivalsPerHour * (demand ? 0.8 + 0.4 * rng.next() : 1)));
  return { delayScale, errorScale, lambda };
}

/**
 * `S` Stage-2 scenarios of the stream `makeRng()` returns, drawn one at a time: each call of the result replays the
 * same draws (`Rng.fork` depends only on the seed and the name), so every method is scored on equal scenarios without
 * holding all S × I·J·K overrides at once (which grew with --scenarios and the size until memory ran out).
 */
function scenarioDraws(c: Coefficients, makeRng: () => Rng, S: number, stress: number): () => Iterable<CoefOverrides> {
  return function* () {
    const rng = makeRng();
    for (let s = 0; s < S; s++) yield perturbation(c, rng, stress);
  };
}

/** Stage 2 for a fixed plan: routing LP on the scenario; returns cost and per-type unserved. */
async function stage2(p: Problem, ov: CoefOverrides, a: Allocation): Promise<{ cost: number; u: Float64Array }> {
  const c = buildCoefficients(p, ov);
  const r = await routeFixed(c, { cfg: a.cfg, z: a.z });
  const ev = evaluate(c, r.allocation);
  return { cost: ev.objective, u: r.allocation.u };
}

function stage1Cost(c: Coefficients, a: Allocation): number {
  const b = evaluate(c, a).costBreakdown;
  return b.gpuRental + b.modelStorage;
}

/**
 * A fixed plan over Stage-2 scenarios: Stage-1 cost, mean Stage-2 objective, and the share of (scenario, type)
 * pairs with more than `threshold` of the type unserved (the paper's violation: 1 %).
 */
async function scoreScenarios(p: Problem, c: Coefficients, a: Allocation, draws: () => Iterable<CoefOverrides>, threshold = 0.01): Promise<Omit<RobustRow, 'method'>> {
  const I = c.I;
  let cost = 0, viol = 0, served = 0, S = 0;
  for (const ov of draws()) {
    S++;
    const r = await stage2(p, ov, a);
    cost += r.cost;
    for (let i = 0; i < I; i++) { if (r.u[i]! > threshold) viol++; served += 1 - r.u[i]!; }
  }
  return { stage1Usd: stage1Cost(c, a), expectedCostUsd: cost / S, violationPct: (100 * viol) / (S * I), servedPct: (100 * served) / (S * I) };
}

export interface RobustnessResult {
  problem: { I: number; J: number; K: number; seed: number };
  /** Headroom the -H methods planned with. */
  headroom: Headroom;
  scenarios: { stress: number; count: number; rows: RobustRow[] }[];
  grw: { sigma: number; trials: number; rows: { method: Method; meanCostUsd: number; medianCostUsd: number; violationPct: number }[] }[];
  diurnal: { bins: number; peakToTrough: number; source: string; span: TraceWindows['span']; requests: number; rows: { method: Method | `${Method}-5min`; meanCostPerWindowUsd: number; totalUsd: number; violationPct: number }[] } | null;
  nominal: { method: Method; objective: number; feasible: boolean; gpus: number }[];
}

export interface RobustnessOptions {
  size?: [number, number, number];
  /** A given instance instead of `generateProblem(size, seed)` (`size` is then ignored). */
  problem?: Problem;
  seed?: number;
  scenarios?: number;
  stresses?: number[];
  sigmas?: number[];
  trials?: number;
  windows?: number;
  /** Trace for the diurnal replay (default the bundled Azure 2023 code sample; null: no replay). */
  tracePath?: string | null;
  /** Which UTC day of the trace to replay (`trace-windows.ts`): YYYY-MM-DD or 'busiest'. */
  traceDay?: string;
  methods?: Method[];
  milpTimeLimitS?: number;
  /** Add AGH-5min / GH-5min rolling rows to the trace replay (default true). */
  rolling?: boolean;
  /** Headroom of the AGH-H / DM-H plans (default `STUDY_HEADROOM`). */
  headroom?: Headroom;
  progress?: Progress;
}

export async function robustnessStudy(opts: RobustnessOptions = {}): Promise<RobustnessResult> {
  const seed = opts.seed ?? 1;
  const log = opts.progress ?? quiet;
  const p = opts.problem ?? generateProblem(...(opts.size ?? [6, 6, 10]), seed);
  const I = p.types.length, J = p.models.length, K = p.tiers.length;
  const c = buildCoefficients(p);
  const headroom = checkHeadroom(opts.headroom ?? STUDY_HEADROOM);
  checkRobustnessOptions(opts);
  const W = opts.windows ?? 288;
  // The replay's trace is read first, so a bad path or day fails before the long stages.
  if (opts.tracePath === null && opts.traceDay !== undefined) throw new UserError('--day: no trace to replay (--trace none)');
  const tw = opts.tracePath === null ? null : traceWindows(opts.tracePath ?? BUNDLED_REPLAY_TRACE, W, opts.traceDay !== undefined ? { day: opts.traceDay } : {});
  if (tw) log(`robustness: replaying ${tw.span.kind === 'day' ? `${tw.span.day}${tw.span.busiest ? ' (busiest day)' : ''}` : 'the whole span'} of ${tw.source}: ${tw.requests} requests`);
  const plans = await stage1Plans(c, { seed, headroom, ...(opts.milpTimeLimitS !== undefined ? { milpTimeLimitS: opts.milpTimeLimitS } : {}), ...(opts.methods ? { methods: opts.methods } : {}) });
  const methods = [...plans.keys()];
  const nominal = methods.map((m) => {
    const ev = evaluate(c, plans.get(m)!);
    return { method: m, objective: ev.objective, feasible: ev.feasible, gpus: Object.values(ev.gpusByTier).reduce((s, g) => s + g, 0) };
  });
  const rng = new Rng(seed).fork('robustness');
  const S = opts.scenarios ?? 500;
  const scenarios: RobustnessResult['scenarios'] = [];
  for (const stress of opts.stresses ?? [1.0, 1.5]) {
    const draws = scenarioDraws(c, () => rng.fork(`scenarios/${stress}`), S, stress);
    const rows: RobustRow[] = [];
    for (const m of methods) {
      const a = plans.get(m)!;
      rows.push({ method: m, ...(await scoreScenarios(p, c, a, draws)) });
    }
    scenarios.push({ stress, count: S, rows });
    log(`robustness: ${S} scenarios at stress ${stress} done`);
  }
  // GRW volatility (Table IV): λ_i^(t+1) = λ_i^(t) · exp(N(0, σ)), 288 windows, static plans.
  const grw: RobustnessResult['grw'] = [];
  const grwMethods = methods.filter((m) => GRW_METHODS.has(m));
  for (const sigma of opts.sigmas ?? [0.01, 0.03, 0.05]) {
    const trials = opts.trials ?? 3;
    const acc = new Map<Method, { costs: number[]; viol: number; n: number }>();
    for (const m of grwMethods) acc.set(m, { costs: [], viol: 0, n: 0 });
    for (let tr = 0; tr < trials; tr++) {
      const g = rng.fork(`grw/${sigma}/${tr}`);
      const lam = p.types.map((t) => t.arrivalsPerHour);
      const costs = new Map<Method, number>(grwMethods.map((m) => [m, 0]));
      for (let w = 0; w < W; w++) {
        if (w > 0) {
          for (let i = 0; i < I; i++) {
            lam[i] = lam[i]! * Math.exp(g.normal(0, sigma));
            if (!(lam[i]! <= GRW_MAX_ARRIVALS_PER_HOUR)) {
              throw new UserError(`--sigmas ${sigma}: the random walk (trial ${tr + 1}, window ${w + 1} of ${W}) took ${p.types[i]!.name}'s demand to ${lam[i]!.toExponential(2)} arrivals per hour, ` +
                `past ${GRW_MAX_ARRIVALS_PER_HOUR.toExponential(0)} (the problem files' limit); use a smaller σ (≤ ${MAX_GRW_SIGMA})`);
            }
          }
        }
        for (const m of grwMethods) {
          const r = await stage2(p, { lambda: lam }, plans.get(m)!);
          costs.set(m, costs.get(m)! + r.cost);
          const e = acc.get(m)!;
          for (let i = 0; i < I; i++) { if (r.u[i]! > 0.01) e.viol++; e.n++; }
        }
      }
      for (const m of grwMethods) acc.get(m)!.costs.push(costs.get(m)!); // total over windows, 24-h objective scale per window
    }
    grw.push({
      sigma, trials,
      rows: grwMethods.map((m) => {
        const e = acc.get(m)!;
        const s = [...e.costs].sort((a, b) => a - b);
        return { method: m, meanCostUsd: s.reduce((a, b) => a + b, 0) / s.length / W, medianCostUsd: s[Math.floor(s.length / 2)]! / W, violationPct: (100 * e.viol) / e.n };
      }),
    });
    log(`robustness: GRW σ=${sigma} done`);
  }
  // Diurnal replay (Table V) of the trace read above.
  let diurnal: RobustnessResult['diurnal'] = null;
  if (tw) {
    const mult = tw.multipliers;
    const rows: NonNullable<RobustnessResult['diurnal']>['rows'] = [];
    for (const m of methods) {
      let total = 0, viol = 0;
      for (let w = 0; w < W; w++) {
        const r = await stage2(p, { lambda: p.types.map((t) => t.arrivalsPerHour * mult[w]!) }, plans.get(m)!);
        total += r.cost;
        for (let i = 0; i < I; i++) if (r.u[i]! > 0.01) viol++;
      }
      rows.push({ method: m, meanCostPerWindowUsd: total / W, totalUsd: total, violationPct: (100 * viol) / (W * I) });
    }
    for (const m of methods.filter((x): x is RollingMethod => ROLLING_METHODS.has(x) && (opts.rolling ?? true))) {
      const lam = (w: number) => p.types.map((t) => t.arrivalsPerHour * mult[w]!);
      const r = await rollingReplay(p, m, plans.get(m)!, W, lam, seed, headroom);
      rows.push({ method: `${m}-5min`, meanCostPerWindowUsd: r.total / W, totalUsd: r.total, violationPct: r.violationPct });
    }
    diurnal = { bins: W, peakToTrough: tw.peakToTrough, source: tw.source, span: tw.span, requests: tw.requests, rows };
    log('robustness: diurnal replay done');
  }
  return { problem: { I, J, K, seed }, headroom, scenarios, grw, diurnal, nominal };
}

/** Table II scenario suite (digest §4.7): δ and φ_v (multiplies φ of the media types only). */
export interface SuiteSetting {
  id: string;
  /** δ at the paper's (6,6,10) scale; scaled by I/6 like the generator. */
  budgetUsd: number;
  /** Multiplies φ of the media types (image, video). */
  phiV: number;
}

export const TABLE2_SCENARIOS: readonly SuiteSetting[] = [
  { id: 'S1', budgetUsd: 100, phiV: 1 },
  { id: 'S2', budgetUsd: 75, phiV: 1 },
  { id: 'S3', budgetUsd: 72, phiV: 1 },
  { id: 'S4', budgetUsd: 75, phiV: 5 },
  { id: 'S5', budgetUsd: 72, phiV: 5 },
];

/** Fig. 2's budget sweep (grid not given in the paper): one setting per δ at φ_v = 1. */
export function budgetSweep(budgetsUsd: readonly number[]): SuiteSetting[] {
  return budgetsUsd.map((b) => ({ id: `δ=${b}`, budgetUsd: b, phiV: 1 }));
}

export interface SuiteRow extends RobustRow {
  scenario: string;
}

/**
 * Each Table II scenario (or the given `settings`, e.g. `budgetSweep`): re-plan every method on the modified
 * nominal problem (δ scaled by I/6 like the generator; φ_v on types whose name starts with image/video), then
 * 500 Stage-2 scenarios at stress 1.
 */
export async function table2Suite(opts: { size?: [number, number, number]; seed?: number; scenarios?: number; settings?: readonly SuiteSetting[]; methods?: Method[]; milpTimeLimitS?: number; headroom?: Headroom; progress?: Progress } = {}): Promise<SuiteRow[]> {
  const [I, J, K] = opts.size ?? [6, 6, 10];
  const seed = opts.seed ?? 1;
  const S = opts.scenarios ?? 500;
  checkRobustnessOptions({ scenarios: opts.scenarios });
  const base = generateProblem(I, J, K, seed);
  const out: SuiteRow[] = [];
  for (const sc of opts.settings ?? TABLE2_SCENARIOS) {
    // δ past the problem files' budget limit made NaN right-hand sides in the routing LP (δ = 1e308).
    if (!(sc.budgetUsd >= 0 && sc.budgetUsd <= LIMITS.budgetUsd)) throw new UserError(`--budgets: expected budgets δ ≥ 0 and ≤ 1e12 $ (the problem files' budgetUsd limit), got ${sc.budgetUsd}`);
  }
  for (const sc of opts.settings ?? TABLE2_SCENARIOS) {
    const p: Problem = {
      ...base,
      budgetUsd: budgetForTypes(sc.budgetUsd, I),
      types: base.types.map((t) => (/^(image|video)/.test(t.name) ? { ...t, unmetPenaltyUsdPerHour: t.unmetPenaltyUsdPerHour * sc.phiV } : t)),
    };
    const c = buildCoefficients(p);
    const plans = await stage1Plans(c, { seed, ...(opts.headroom ? { headroom: opts.headroom } : {}), ...(opts.milpTimeLimitS !== undefined ? { milpTimeLimitS: opts.milpTimeLimitS } : {}), ...(opts.methods ? { methods: opts.methods } : {}) });
    const draws = scenarioDraws(c, () => new Rng(seed).fork(`table2/${sc.id}`), S, 1);
    for (const [m, a] of plans) {
      out.push({ scenario: sc.id, method: m, ...(await scoreScenarios(p, c, a, draws)) });
    }
    opts.progress?.(`table2: ${sc.id} done`);
  }
  return out;
}

export interface CapRow extends RobustRow {
  /** ζ on every type at Stage 1 (1 = soft). */
  cap: number;
  stress: number;
  /** Whether the Stage-1 plan meets u_i ≤ ζ at nominal (the heuristics do not plan against the cap). */
  meetsCapAtStage1: boolean;
}

/**
 * Fig. 4 (digest §4.7): the unmet cap ζ ∈ {1 %, 2 %, 5 %, soft} on every type. Each method plans on the capped
 * problem (the MILP honours it; a cap it cannot meet leaves the method without a row, reported as infeasible;
 * GH and AGH do not plan against caps [A] and the study says whether their plans meet it; AGH's [ours] LP
 * routing and deployment search are off under any cap < 1, `reroute.ts` cannot pose one, so a capped AGH
 * plan is the [A]-extended Algorithm 2's); then Stage-2 scenarios at each stress, with a violation counted when a type's unserved share
 * exceeds the cap (the paper's 1 % for the soft cap) [A: the paper does not say which threshold Fig. 4 counts].
 */
export async function capSweep(opts: { size?: [number, number, number]; seed?: number; caps?: number[]; stresses?: number[]; scenarios?: number; methods?: Method[]; milpTimeLimitS?: number; progress?: Progress } = {}): Promise<{ rows: CapRow[]; infeasible: { cap: number; method: Method }[] }> {
  const seed = opts.seed ?? 1;
  const S = opts.scenarios ?? 500;
  checkRobustnessOptions({ scenarios: opts.scenarios, stresses: opts.stresses });
  const base = generateProblem(...(opts.size ?? [6, 6, 10]), seed);
  const methods = opts.methods ?? (['AGH', 'GH', 'DM'] as Method[]);
  const rows: CapRow[] = [];
  const infeasible: { cap: number; method: Method }[] = [];
  for (const cap of opts.caps ?? [0.01, 0.02, 0.05, 1]) {
    const p: Problem = { ...base, types: base.types.map((t) => ({ ...t, unservedCap: cap })) };
    const c = buildCoefficients(p);
    const plans = await stage1Plans(c, { seed, methods, ...(opts.milpTimeLimitS !== undefined ? { milpTimeLimitS: opts.milpTimeLimitS } : {}) });
    for (const m of methods) if (!plans.has(m)) infeasible.push({ cap, method: m });
    for (const stress of opts.stresses ?? [1, 1.5]) {
      // The same scenarios for every cap (seeded by stress only), so caps compare on equal draws.
      const draws = scenarioDraws(c, () => new Rng(seed).fork(`caps/${stress}`), S, stress);
      for (const [m, a] of plans) {
        rows.push({ cap, stress, method: m, meetsCapAtStage1: evaluate(c, a).violations.every((v) => v.family !== 'unserved-cap'), ...(await scoreScenarios(p, c, a, draws, cap >= 1 ? 0.01 : cap)) });
      }
    }
    opts.progress?.(`caps: ζ = ${cap} done`);
  }
  return { rows, infeasible };
}

/**
 * 5-min rolling re-planning with keep-best (digest §4.8): before window w, forecast λ by EWMA of the windows
 * seen so far (smoothing 0.5 [A]; the paper does not give it), re-plan with the heuristic on the forecast, and
 * adopt the new plan only if its forecast objective beats the incumbent's (the incumbent re-routed optimally on
 * the forecast). The adopted plan is then scored on the realised window by the routing LP. The -H methods
 * plan on the forecast inflated by `headroom` and compare on it too (judged on the nominal forecast, keep-best
 * would trade the headroom away for the cheaper plan).
 */
export async function rollingReplay(p: Problem, method: RollingMethod, initial: Allocation, W: number, lambdaAt: (w: number) => number[], seed: number, headroom: Headroom = STUDY_HEADROOM): Promise<{ total: number; violationPct: number; adoptions: number }> {
  const withH = method.endsWith('-H');
  let plan = initial;
  let forecast = p.types.map((t) => t.arrivalsPerHour);
  let total = 0, viol = 0, adoptions = 0;
  const I = p.types.length;
  for (let w = 0; w < W; w++) {
    if (w > 0) {
      const seen = lambdaAt(w - 1);
      forecast = forecast.map((f, i) => 0.5 * seen[i]! + 0.5 * f);
      const nominalForecast = buildCoefficients(p, { lambda: forecast });
      const cf = withH ? withHeadroom(nominalForecast, headroom) : nominalForecast;
      const raw = method.startsWith('AGH') ? agh(cf, { seed }).state.toAllocation() : greedy(cf).toAllocation();
      // The candidate's routes are re-optimised like the incumbent's, so the two compare on the same footing.
      const cand = await routeFixed(cf, { cfg: raw.cfg, z: raw.z });
      const inc = await routeFixed(cf, { cfg: plan.cfg, z: plan.z });
      if (cand.objective < inc.objective - 1e-9) { plan = cand.allocation; adoptions++; }
    }
    const r = await stage2(p, { lambda: lambdaAt(w) }, plan);
    total += r.cost;
    for (let i = 0; i < I; i++) if (r.u[i]! > 0.01) viol++;
  }
  return { total, violationPct: (100 * viol) / (W * I), adoptions };
}
