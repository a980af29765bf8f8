import { delayOf, type Coefficients } from './coefficients.ts';
import { EPS, State } from './state.ts';

/**
 * Greedy Heuristic GH (paper Algorithm 1; digest §3.3): Phase 1 greedy weighted set cover opens pairs,
 * Phase 2 routes each type (λ-descending by default) over candidates ranked by (π, κ) with the three
 * mechanisms M1 (TP/PP-aware filtering, eq. 9), M2 (cost per effective coverage, eqs. 10–11) and
 * M3 (in-place parallelism upgrade, eq. 12).
 */
export interface GhFlags {
  m1: boolean;
  m2: boolean;
  m3: boolean;
  /** β of Phase 1 (named to avoid the clash with the KV footprint β_j). */
  phase1BudgetFrac: number;
}

export const DEFAULT_GH_FLAGS: GhFlags = { m1: true, m2: true, m3: true, phase1BudgetFrac: 0.8 };

/** Tables shared by every GH run on the same coefficients. */
export interface GhTables {
  /** M1 (eq. 9): config index with least GPUs meeting weights-memory and the type's own delay; -1 if none. */
  m1: Int32Array;
  /** Config indices sorted by (gpus asc, delay-relevant tp desc) — the scan order for M1/M3 ties. */
  order: number[];
}

export function ghTables(c: Coefficients): GhTables {
  const C = c.configs.length;
  // Ties on n·m: pick smaller D, i.e. larger n (digest §3.2 [A]; PP never helps delay).
  const order = [...Array(C).keys()].sort((a, b) => c.configs[a]!.gpus - c.configs[b]!.gpus || c.configs[b]!.tp - c.configs[a]!.tp);
  const JK = c.J * c.K;
  const m1 = new Int32Array(c.I * JK).fill(-1);
  for (let i = 0; i < c.I; i++) {
    for (let pr = 0; pr < JK; pr++) {
      const t = i * JK + pr, k = pr % c.K;
      for (const cf of order) {
        if (c.weightsGb[pr]! / c.configs[cf]!.gpus > c.p.tiers[k]!.memoryGb) continue;
        if (delayOf(c, t, i, cf) > c.p.types[i]!.delaySloS) continue;
        m1[t] = cf;
        break;
      }
    }
  }
  return { m1, order };
}

interface Candidate {
  pr: number;
  cf: number;
  pi: number;
  kappa: number;
  cost: number;
}

/** M3 (eq. 12): least-GPU config above the current one, n' ≥ n and m' ≤ m (so no routed type gets slower),
 * meeting Δ_i and weights-memory, whose rental increment fits the budget. */
export function m3Upgrade(s: State, tb: GhTables, i: number, pr: number): number {
  const c = s.c, cur = s.cfg[pr]!;
  const cc = c.configs[cur]!, t = s.t(i, pr), k = pr % s.K;
  const room = c.p.budgetUsd - s.budgetUsed();
  for (const cf of tb.order) {
    const n = c.configs[cf]!;
    if (n.gpus <= cc.gpus || n.tp < cc.tp || n.pp > cc.pp) continue;
    if (c.weightsGb[pr]! / n.gpus > c.p.tiers[k]!.memoryGb) continue;
    if (delayOf(c, t, i, cf) > c.p.types[i]!.delaySloS) continue;
    if (c.rentalPerGpu[pr]! * (n.gpus - cc.gpus) > room + 1e-9) continue;
    return cf;
  }
  return -1;
}

/** The config type i would use on pair pr (reuse, M3 upgrade, or M1 activation), or -1. */
export function configFor(s: State, tb: GhTables, flags: GhFlags, i: number, pr: number, allowActivate: boolean): number {
  const c = s.c, t = s.t(i, pr), cur = s.cfg[pr]!;
  if (cur >= 0) {
    if (delayOf(c, t, i, cur) <= c.p.types[i]!.delaySloS) return cur; // reuse [A]
    return flags.m3 ? m3Upgrade(s, tb, i, pr) : -1;
  }
  if (!allowActivate) return -1;
  if (flags.m1) return tb.m1[t]!;
  return tb.order[0]!; // w/o M1: cheapest (n,m) regardless of memory/delay (ablation)
}

/**
 * Phase 2 for one type: rank candidates by (π, κ) (or raw cost without M2), then fill in that order,
 * recomputing the admissible amount against the current state (digest §3.3 [A]: the sorted x̄ may be stale;
 * capacity rows shrink the amount instead of rejecting). Stops when u_i ≤ target.
 */
export function allocateType(s: State, tb: GhTables, flags: GhFlags, i: number, opts: { activeOnly?: boolean; target?: number; exclude?: number } = {}): void {
  const c = s.c, p = c.p, JK = s.J * s.K;
  const target = opts.target ?? 0;
  const cands: Candidate[] = [];
  const T = p.horizonHours, ps = p.storagePriceUsdPerGbHour;
  for (let pr = 0; pr < JK; pr++) {
    if (pr === opts.exclude) continue;
    const cf = configFor(s, tb, flags, i, pr, !opts.activeOnly);
    if (cf < 0) continue;
    const t = s.t(i, pr), j = Math.floor(pr / s.K);
    const d = delayOf(c, t, i, cf);
    const e = c.ebar[t]!;
    const u = s.u[i]!;
    const xbar = Math.min(u, e > 0 ? (p.types[i]!.errorSlo - s.E[i]!) / e : Infinity, d > 0 ? (p.types[i]!.delaySloS - s.D[i]!) / d : Infinity);
    if (!(xbar > EPS)) continue;
    const g = c.configs[cf]!.gpus;
    const cost = T * (c.p.tiers[pr % s.K]!.priceUsdPerHour * Math.max(0, g - s.gpus(pr)) + ps * (p.models[j]!.weightsGb + c.dataGb[t]!)) + c.delayCostPerS[i]! * d;
    cands.push({ pr, cf, pi: xbar < u - EPS ? 1 : 0, kappa: cost / xbar, cost });
  }
  if (flags.m2) cands.sort((a, b) => a.pi - b.pi || a.kappa - b.kappa || a.pr - b.pr);
  else cands.sort((a, b) => a.cost - b.cost || a.pr - b.pr);
  for (const cd of cands) {
    if (s.u[i]! <= target + EPS) break;
    // The pair may have changed since ranking (another candidate of this type does not touch it, but keep
    // the check cheap and exact): re-derive the config.
    const cf = s.cfg[cd.pr]! >= 0 && s.cfg[cd.pr] !== cd.cf ? configFor(s, tb, flags, i, cd.pr, false) : cd.cf;
    if (cf < 0) continue;
    const amt = Math.min(s.maxAdd(i, cd.pr, cf), s.u[i]! - target);
    if (amt <= EPS) continue;
    s.setConfig(cd.pr, cf);
    s.add(i, cd.pr, amt);
  }
}

/** GH: returns the final state. `order` = Phase-2 type order (default λ descending). */
export function greedy(c: Coefficients, tb: GhTables = ghTables(c), order?: number[], flags: GhFlags = DEFAULT_GH_FLAGS): State {
  const s = new State(c);
  const p = c.p, JK = c.J * c.K, T = p.horizonHours;
  // ---------- Phase 1: coverage pre-allocation (greedy weighted set cover, eqs. 13–14) ----------
  const unc = new Set<number>([...Array(c.I).keys()]);
  let spentRental = 0;
  while (unc.size > 0 && spentRental < flags.phase1BudgetFrac * p.budgetUsd) {
    let best = -1, bestScore = -Infinity, bestCost = Infinity, bestG = 0, bestF: number[] = [];
    for (let pr = 0; pr < JK; pr++) {
      if (s.cfg[pr]! >= 0) continue; // only inactive pairs [A]
      const F: number[] = [];
      let g = 0;
      for (const i of unc) {
        const t = s.t(i, pr);
        const cf = flags.m1 ? tb.m1[t]! : tb.order[0]!;
        if (cf < 0 || c.ebar[t]! > p.types[i]!.errorSlo) continue;
        F.push(i);
        g = Math.max(g, c.configs[cf]!.gpus);
      }
      if (F.length === 0) continue;
      const cost = T * p.tiers[pr % c.K]!.priceUsdPerHour * g;
      // [A] An activation may not take cumulative Phase-1 rental past βδ: the loop condition "budget < βδ"
      // read as a cap, so Phase 2 keeps (1 − β)δ for storage costs and upgrades (letting the last activation
      // overshoot to δ starved Phase 2 of budget on our instances).
      if (spentRental + cost > flags.phase1BudgetFrac * p.budgetUsd + 1e-9 || s.budgetUsed() + cost > p.budgetUsd + 1e-9) continue;
      const score = cost > 0 ? F.length / cost : Infinity;
      if (score > bestScore || (score === bestScore && cost < bestCost)) { best = pr; bestScore = score; bestCost = cost; bestG = g; bestF = F; }
    }
    if (best < 0) break;
    // Largest-n config with n·m = g (digest §3.3 [A/D]: it meets memory and delay for every member of F).
    const cf = tb.order.find((x) => c.configs[x]!.gpus === bestG)!;
    s.setConfig(best, cf);
    for (const i of bestF) unc.delete(i);
    spentRental += bestCost;
  }
  // ---------- Phase 2: sequential allocation ----------
  const ord = order ?? [...Array(c.I).keys()].sort((a, b) => c.lambda[b]! - c.lambda[a]! || a - b);
  for (const i of ord) allocateType(s, tb, flags, i);
  // Pairs Phase 1 opened that Phase 2 left empty stay rented, as in Algorithm 1 (AGH's consolidation drops them).
  return s;
}
