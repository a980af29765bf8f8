import { Rng } from '../../util/rng.ts';
import { delayOf, type Coefficients } from './coefficients.ts';
import { evaluate } from './evaluate.ts';
import { allocateType, configFor, DEFAULT_GH_FLAGS, ghTables, greedy, type GhFlags, type GhTables } from './gh.ts';
import { DEFAULT_LP_WORK, deploymentSearch, type RelaxedCache } from './deploy-search.ts';
import { polishRouting, type LpCounter } from './reroute.ts';
import { EPS, State } from './state.ts';

/**
 * Adaptive Greedy Heuristic AGH (paper Algorithm 2; digest §3.4): GH under 8 deterministic + R seeded
 * random type orderings, each followed by up to L relocate passes and pair consolidation; keeps the best
 * feasible plan, stops early after 5 consecutive non-improving orderings.
 */
export interface AghOptions {
  seed?: number;
  /** Relocate passes L (paper: 3). */
  passes?: number;
  /** Override R (random orderings); default from the paper's schedule on N = I·J·K. */
  randomOrders?: number;
  earlyStop?: number;
  flags?: GhFlags;
  /** Footprint key for orderings 5–6: 'data' = θ r λ (default [A]) or 'weights' = min B_j admissible. */
  footprint?: 'data' | 'weights';
  /**
   * true = Algorithm 2 as the digest lists it (relocate, then consolidation, once per ordering). false (default)
   * adds our [A] extensions: refill, unserved-aware relocate, re-tier moves, rounds until no improvement.
   */
  exact?: boolean;
  /** How many of the best per-ordering results the extensions start from (default: all of them). */
  extendTop?: number;
  /** [ours] Deployment search with LP routing after the extensions (default true; ignored when exact). */
  deploySearch?: boolean;
  /** Distinct extended plans the deployment search starts from (default 3). */
  deployStarts?: number;
  /** Simplex work budget for all LPs of the call (default DEFAULT_LP_WORK); 0 disables LP routing. */
  maxLpWork?: number;
  /** Told what the search is doing as it goes (a progress line for long runs on large instances). */
  progress?: (what: string) => void;
}

/** R(N): 3 if N > 5000; 5 if N > 2000; 10 if N > 500; else 20 (paper). */
export function randomOrderCount(N: number): number {
  return N > 5000 ? 3 : N > 2000 ? 5 : N > 500 ? 10 : 20;
}

export function aghOrders(c: Coefficients, tb: GhTables, rng: Rng, R: number, footprint: 'data' | 'weights' = 'data'): number[][] {
  const ids = [...Array(c.I).keys()];
  const JK = c.J * c.K;
  const fp = ids.map((i) => {
    if (footprint === 'data') return c.dataGb[i * JK]!; // θ_i r_i λ_i (same for every pair)
    let m = Infinity;
    for (let pr = 0; pr < JK; pr++) if (tb.m1[i * JK + pr]! >= 0) m = Math.min(m, c.p.models[Math.floor(pr / c.K)]!.weightsGb);
    return m;
  });
  const keys: ((i: number) => number)[] = [
    (i) => c.lambda[i]!, (i) => c.p.types[i]!.unmetPenaltyUsdPerHour, (i) => fp[i]!, (i) => c.p.types[i]!.errorSlo,
  ];
  const out: number[][] = [];
  for (const key of keys) {
    out.push([...ids].sort((a, b) => key(a) - key(b) || a - b));
    out.push([...ids].sort((a, b) => key(b) - key(a) || a - b));
  }
  for (let r = 0; r < R; r++) {
    const perm = [...ids];
    for (let n = perm.length - 1; n > 0; n--) {
      const m = rng.int(n + 1);
      [perm[n], perm[m]] = [perm[m]!, perm[n]!];
    }
    out.push(perm);
  }
  return out;
}

/** Objective change of moving all of type i from pair `from` to pair `to` under config `cf`, or null if the
 * move does not fit entirely. Evaluated by applying and reverting on the state. */
function tryRelocate(s: State, tb: GhTables, flags: GhFlags, i: number, from: number, to: number): number | null {
  const before = s.objective();
  const fromCfg = s.cfg[from]!;
  const amt = s.x[s.t(i, from)]!;
  s.removeRoute(i, from);
  const cf = configFor(s, tb, flags, i, to, true);
  let result: number | null = null;
  let applied = false;
  const oldCfg = s.cfg[to]!;
  const prevZ = s.z[s.t(i, to)]!, prevX = s.x[s.t(i, to)]!;
  if (cf >= 0 && s.maxAdd(i, to, cf) >= amt - 1e-9) {
    s.setConfig(to, cf);
    s.add(i, to, amt);
    applied = true;
    result = s.objective() - before;
  }
  // revert
  if (applied) {
    s.removeRoute(i, to);
    if (s.cfg[to] !== oldCfg) s.setConfig(to, oldCfg);
    if (prevZ) s.add(i, to, prevX);
  }
  if (s.cfg[from]! < 0) s.setConfig(from, fromCfg);
  s.add(i, from, amt);
  return result;
}

/** Could moving type i from `from` to `to` free error or delay budget for more of i? (cheap pre-filter) */
function freesBudget(s: State, tb: GhTables, flags: GhFlags, i: number, from: number, to: number): boolean {
  const c = s.c, tf = s.t(i, from), tt = s.t(i, to);
  if (c.ebar[tt]! < c.ebar[tf]! - 1e-12) return true;
  const cf = configFor(s, tb, flags, i, to, true);
  return cf >= 0 && delayOf(c, tt, i, cf) < delayOf(c, tf, i, s.cfg[from]!) - 1e-12;
}

function relocate(s: State, tb: GhTables, flags: GhFlags, passes: number, exact = false): State {
  const JK = s.J * s.K;
  for (let it = 0; it < passes; it++) {
    let improved = false;
    for (let i = 0; i < s.I; i++) {
      for (let from = 0; from < JK; from++) {
        if (!(s.x[s.t(i, from)]! > EPS)) continue;
        // Active targets first, then inactive ones (activated through M1) [A]; first improvement [A].
        const targets: number[] = [];
        for (let pr = 0; pr < JK; pr++) if (pr !== from && s.cfg[pr]! >= 0) targets.push(pr);
        for (let pr = 0; pr < JK; pr++) if (pr !== from && s.cfg[pr]! < 0) targets.push(pr);
        for (const to of targets) {
          // An inactive pair takes type i only under its M1 config: none, no move (skipped before any state work).
          if (flags.m1 && s.cfg[to]! < 0 && tb.m1[s.t(i, to)]! < 0) continue;
          if (!exact && s.u[i]! > EPS && freesBudget(s, tb, flags, i, from, to)) {
            // [A] A partly unserved type: a move may free error/delay budget that Phase 2 can then use on
            // any pair, so score "move + re-run Phase 2 for i" (on a copy).
            const t = s.clone();
            const amt = t.removeRoute(i, from);
            const cf = configFor(t, tb, flags, i, to, true);
            if (cf < 0 || t.maxAdd(i, to, cf) < amt - 1e-9) continue;
            t.setConfig(to, cf);
            t.add(i, to, amt);
            allocateType(t, tb, flags, i);
            if (t.objective() < s.objective() - 1e-9) {
              s = t;
              improved = true;
              break;
            }
          }
          const d = tryRelocate(s, tb, flags, i, from, to);
          if (d !== null && d < -1e-9) {
            const amt = s.x[s.t(i, from)]!;
            s.removeRoute(i, from);
            const cf = configFor(s, tb, flags, i, to, true);
            s.setConfig(to, cf);
            s.add(i, to, amt);
            improved = true;
            break;
          }
        }
      }
    }
    if (!improved) break;
  }
  return s;
}

/** Consolidation: try to empty each active pair (ascending load) into the other active pairs. */
function consolidate(s: State, tb: GhTables, flags: GhFlags): State {
  const JK = s.J * s.K;
  const active = [...Array(JK).keys()].filter((pr) => s.cfg[pr]! >= 0);
  const util = (st: State, pr: number) => st.load[pr]! / (st.c.gpuTflopPerHour[pr]! * st.gpus(pr));
  active.sort((a, b) => util(s, a) - util(s, b) || a - b);
  let cur = s;
  for (const pr of active) {
    if (cur.cfg[pr]! < 0) continue;
    const t = cur.clone();
    const uBefore = t.u.slice();
    const types: number[] = [];
    for (let i = 0; i < t.I; i++) if (t.z[t.t(i, pr)]) { types.push(i); t.removeRoute(i, pr); }
    if (t.cfg[pr]! >= 0) t.setConfig(pr, -1);
    for (const i of types) allocateType(t, tb, flags, i, { activeOnly: true, target: uBefore[i]!, exclude: pr });
    if (types.every((i) => t.u[i]! <= uBefore[i]! + 1e-7) && t.objective() < cur.objective() - 1e-9) cur = t;
  }
  return cur;
}

/**
 * [A] Refill: after relocation and consolidation freed budget, re-run Phase 2 (activation allowed) for types
 * still partly unserved, in the ordering's order; kept only if the objective improves. Not in Algorithm 2's
 * listing; without it a budget-starved construction cannot recover demand the local search never moves.
 */
function refill(s: State, tb: GhTables, flags: GhFlags, order: number[]): State {
  if (!order.some((i) => s.u[i]! > EPS)) return s;
  const t = s.clone();
  for (const i of order) if (t.u[i]! > EPS) allocateType(t, tb, flags, i);
  return t.objective() < s.objective() - 1e-9 ? t : s;
}

/**
 * [A] Re-tier: move everything a pair carries to the same model on another (inactive) tier, activated with the
 * least config that meets weights-memory and every moved type's Δ (as Phase 1 does for a cover set), then
 * re-run Phase 2 for the moved types. Kept if all demand is re-absorbed and the objective improves. This is
 * the move the MILP makes that whole-route relocation cannot (it needs the pair's types to move together).
 */
function retier(s: State, tb: GhTables, flags: GhFlags): State {
  const { J, K } = s;
  const c = s.c;
  let cur = s;
  for (let pr = 0; pr < J * K; pr++) {
    if (cur.cfg[pr]! < 0) continue;
    const j = Math.floor(pr / K);
    let best: State | null = null;
    for (let k2 = 0; k2 < K; k2++) {
      const to = j * K + k2;
      if (to === pr || cur.cfg[to]! >= 0) continue;
      const types: number[] = [];
      for (let i = 0; i < cur.I; i++) if (cur.z[cur.t(i, pr)]) types.push(i);
      let g = 0;
      let ok = types.length > 0;
      for (const i of types) {
        const cf = tb.m1[cur.t(i, to)]!;
        if (cf < 0) { ok = false; break; }
        g = Math.max(g, c.configs[cf]!.gpus);
      }
      if (!ok) continue;
      // Budget pre-check before copying the state: the new pair's rental must fit in what the old pair frees.
      let freed = c.rentalPerGpu[pr]! * cur.gpus(pr);
      for (const i of types) freed += c.modelStorageCost[cur.t(i, pr)]!;
      if (c.rentalPerGpu[to]! * g > c.p.budgetUsd - cur.budgetUsed() + freed + 1e-9) continue;
      // If every moved type is fully served, the move can only pay off through rental + delay penalty
      // (storage terms are unchanged: same model, same amounts); skip it when those do not drop.
      const cfgTo = tb.order.find((x) => c.configs[x]!.gpus === g)!;
      if (types.every((i) => cur.u[i]! <= EPS)) {
        let delta = c.rentalPerGpu[to]! * g - c.rentalPerGpu[pr]! * cur.gpus(pr);
        for (const i of types) {
          const x = cur.x[cur.t(i, pr)]!;
          delta += c.delayCostPerS[i]! * x * (delayOf(c, cur.t(i, to), i, cfgTo) - delayOf(c, cur.t(i, pr), i, cur.cfg[pr]!));
        }
        if (delta >= -1e-9) continue;
      }
      const t = cur.clone();
      const uBefore = t.u.slice();
      for (const i of types) t.removeRoute(i, pr);
      if (t.cfg[pr]! >= 0) t.setConfig(pr, -1);
      if (c.rentalPerGpu[to]! * g > c.p.budgetUsd - t.budgetUsed() + 1e-9) continue;
      t.setConfig(to, cfgTo);
      for (const i of types) allocateType(t, tb, flags, i, { target: uBefore[i]! });
      if (t.nTypes[to] === 0) t.setConfig(to, -1);
      if (!types.every((i) => t.u[i]! <= uBefore[i]! + 1e-7)) continue;
      if (t.objective() < (best ?? cur).objective() - 1e-9) best = t;
    }
    if (best) cur = best;
  }
  return cur;
}

export interface AghResult {
  state: State;
  feasible: boolean;
  orderingsRun: number;
  bestOrdering: number;
}

export { DEFAULT_LP_WORK, deploymentSearch } from './deploy-search.ts';

export function agh(c: Coefficients, opts: AghOptions = {}): AghResult {
  const flags = opts.flags ?? DEFAULT_GH_FLAGS;
  const tb = ghTables(c);
  const run = aghRun(c, tb, flags, opts);
  if (opts.exact || run.results.length === 0) return run.result;
  // [A] extensions applied to every per-ordering result of the exact search, after it (running them inside
  // the search changed when the early stop fired and sometimes ended worse). Only improvements are accepted,
  // so the result is never worse than Algorithm 2 as listed.
  const L = opts.passes ?? 3;
  // Orderings often end in the same plan; extend each distinct objective once.
  const seen = new Set<string>();
  const top = [...run.results]
    .sort((a, b) => Number(b.feasible) - Number(a.feasible) || a.obj - b.obj)
    .filter((r) => { const key = r.obj.toPrecision(12); if (seen.has(key)) return false; seen.add(key); return true; })
    .slice(0, opts.extendTop ?? Infinity);
  let best = run.result;
  const extended: State[] = [];
  // One simplex work budget for every LP of this call (polish + deployment search): keeps (20,20,20) < 1 s.
  const maxWork = opts.maxLpWork ?? DEFAULT_LP_WORK;
  const counter: LpCounter = { solves: 0, work: 0, limit: maxWork };
  for (const [n, r] of top.entries()) {
    opts.progress?.(`extending plan ${n + 1} of ${top.length}`);
    let s = r.state.clone();
    for (let round = 0; round < L; round++) {
      const before = s.objective();
      s = relocate(s, tb, flags, L);
      s = consolidate(s, tb, flags);
      s = refill(s, tb, flags, r.order);
      s = retier(s, tb, flags);
      if (counter.work < maxWork) s = polishRouting(s, { drops: true }, counter);
      if (s.objective() >= before - 1e-9) break;
    }
    extended.push(s);
    const feas = evaluate(c, s.toAllocation()).feasible;
    if ((feas && !best.feasible) || (feas === best.feasible && s.objective() < best.state.objective() - 1e-9)) {
      best = { state: s, feasible: feas, orderingsRun: run.result.orderingsRun, bestOrdering: r.index };
    }
  }
  // [ours] Deployment search with LP routing from the best few distinct extended plans.
  if (opts.deploySearch !== false) {
    const seen2 = new Set<string>();
    const starts = extended
      .filter((s) => evaluate(c, s.toAllocation()).feasible)
      .sort((a, b) => a.objective() - b.objective())
      .filter((s) => { const key = s.objective().toPrecision(12); if (seen2.has(key)) return false; seen2.add(key); return true; })
      .slice(0, opts.deployStarts ?? 3);
    // A fifth of the call's budget: with the default 1e9 that is the 2e8 both searches had before session 19,
    // which found every stranded-demand improvement we measured; a full second 1e9 only added time (up to 2.9 s
    // at (6,6,10) seeds 9, 10 and 16, same plans).
    const wideWork = maxWork / 5;
    const wideCounter: LpCounter = { solves: 0, work: 0, limit: wideWork };
    const cache: RelaxedCache = new Map();
    for (const [n, st] of starts.entries()) {
      opts.progress?.(`deployment search ${n + 1} of ${starts.length}`);
      let s = deploymentSearch(st, { counter, maxWork, cache });
      // A plan that still strands demand (a tight budget, mostly) may improve only by swapping two pairs at
      // once — e.g. an 8B pair for a 34B one plus another for a cheaper model — where each half alone breaks the
      // budget or serves less, so its relaxation bound ranks it low. A second search from the same start then
      // combines the best 40 singles instead of 8; it replaces the first only if better (as the only search it
      // took a worse path on (6,6,10) seed 17). Measured: (6,6,10) at δ = $60, seeds 2 and 4 went from 18 % and
      // 984 % above the MILP optimum to it. It has its own work budget (`wideWork`), spent only on plans that
      // strand demand.
      if (s.u.some((u) => u > 1e-6) && wideCounter.work < wideWork) {
        const wide = deploymentSearch(st, { counter: wideCounter, maxWork: wideWork, pairTop: 40, cache });
        if (wide.objective() < s.objective() - 1e-9) s = wide;
      }
      if (s.objective() < best.state.objective() - 1e-9 && evaluate(c, s.toAllocation()).feasible) best = { ...best, state: s, feasible: true };
    }
  }
  return best;
}

interface OrderingResult {
  state: State;
  obj: number;
  feasible: boolean;
  order: number[];
  index: number;
}

/** Algorithm 2 as listed: per ordering GH → relocate (L passes) → consolidation; keep the best feasible. */
function aghRun(c: Coefficients, tb: GhTables, flags: GhFlags, opts: AghOptions): { result: AghResult; results: OrderingResult[] } {
  const rng = new Rng(opts.seed ?? 0).fork('agh/orders');
  const R = opts.randomOrders ?? randomOrderCount(c.I * c.J * c.K);
  const orders = aghOrders(c, tb, rng, R, opts.footprint);
  const L = opts.passes ?? 3;
  const earlyStop = opts.earlyStop ?? 5;
  let best: State | null = null, bestObj = Infinity, bestFeasible = false, bestIdx = -1;
  let fallback: State | null = null, fallbackObj = Infinity;
  let stale = 0, run = 0;
  const results: OrderingResult[] = [];
  for (let o = 0; o < orders.length; o++) {
    opts.progress?.(`ordering ${o + 1} of up to ${orders.length}`);
    run++;
    let s = greedy(c, tb, orders[o], flags);
    s = relocate(s, tb, flags, L, true);
    s = consolidate(s, tb, flags);
    const obj = s.objective();
    const feas = evaluate(c, s.toAllocation()).feasible;
    results.push({ state: s, obj, feasible: feas, order: orders[o]!, index: o });
    if (feas && obj < bestObj - 1e-9) {
      best = s; bestObj = obj; bestFeasible = true; bestIdx = o; stale = 0;
    } else {
      if (!feas && obj < fallbackObj) { fallback = s; fallbackObj = obj; if (!bestFeasible) bestIdx = o; }
      if (++stale >= earlyStop) break;
    }
  }
  const state = best ?? fallback!;
  return { result: { state, feasible: bestFeasible, orderingsRun: run, bestOrdering: bestIdx }, results };
}
