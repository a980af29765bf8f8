import { solveDenseLp } from '../simplex.ts';
import { delayOf, kvPerGpu, type Coefficients } from './coefficients.ts';
import { EPS, State } from './state.ts';

/**
 * [ours] Exact routing for a fixed deployment, used by AGH's extensions (docs/fidelity/joint-allocation.md,
 * §7.2 item 11). With the configs (y, q, w) and admissions z fixed, 𝒫_DM is an LP in (x, u): the weighted
 * delay (8i) and error (8j) rows couple a type's routes, so the optimum often splits a type across a fast,
 * less accurate pair and a slow, accurate one until its error SLO binds — which Phase 2's per-candidate greedy
 * and whole-route relocation cannot reach. u_i = 1 − Σ x is eliminated (needs ζ_i = 1, our Stage-1 setting),
 * so x = 0 is feasible and the dense simplex of `../simplex.ts` solves it without a phase 1.
 *
 * - `rerouteLp(s)`: that LP for the state's own z (routes left at 0 drop their z; empty pairs are closed).
 * - `routeDeployment(c, cfg, z)`: the LP plus an admission search — add (type, active pair) admissions one at a
 *   time, ranked by LP dual prices (reduced cost minus the fixed model-storage charge), best of the top few
 *   re-solved; optionally drop admissions (frees the weights' storage) and add again.
 * - `relaxedRouting(c, cfg)`: the LP relaxation with z = x for every (type, active pair): a lower bound on
 *   what any admission set can reach on that deployment, used to rank deployments cheaply.
 * - `polishRouting(s)`: `routeDeployment` on `s`'s own deployment, never worse than `s`.
 */

interface RouteLp {
  cols: number[];
  duals: Float64Array;
  x: Float64Array;
  objective: number;
  rowOf: RowIndex;
}

interface RowIndex {
  bal: number; // + i
  delay: number; // + i
  err: number; // + i
  budget: number;
  budgetScale: number;
  /** First storage row; the row of (i, pr) is `storageRow(c, ri, i, pr)`. */
  storage: number;
  storageScale: number;
  /** Memory and compute rows per pair (−1 for an inactive pair). */
  mem: Int32Array;
  comp: Int32Array;
  m: number;
}

function storageRow(c: Coefficients, ri: RowIndex, i: number, pr: number): number {
  const s = c.p.options.storageScope;
  return ri.storage + (s === 'global' ? 0 : s === 'per-type' ? i : pr);
}

/**
 * Coefficients of column t under config cf in the scaled rows, and its cost; they depend on (t, cf) only, so
 * they are computed once per problem (AGH builds thousands of routing LPs over the same columns).
 */
interface ColumnTable {
  /** Index t·C + cf; NaN until computed. */
  delay: Float64Array;
  kv: Float64Array;
  comp: Float64Array;
  cost: Float64Array;
}

const columnTables = new WeakMap<Coefficients, ColumnTable>();

function columnTable(c: Coefficients): ColumnTable {
  let tb = columnTables.get(c);
  if (!tb) {
    const n = c.I * c.J * c.K * c.configs.length;
    tb = { delay: new Float64Array(n).fill(NaN), kv: new Float64Array(n), comp: new Float64Array(n), cost: new Float64Array(n) };
    columnTables.set(c, tb);
  }
  return tb;
}

/** Index of column t under config cf in `columnTable(c)`, filled on first use. */
function columnAt(c: Coefficients, tb: ColumnTable, t: number, cf: number): number {
  const at = t * c.configs.length + cf;
  if (!Number.isNaN(tb.delay[at]!)) return at;
  const p = c.p, JK = c.J * c.K;
  const i = Math.floor(t / JK), pr = t % JK, j = Math.floor(pr / c.K), k = pr % c.K;
  const d = delayOf(c, t, i, cf);
  tb.delay[at] = d / p.types[i]!.delaySloS;
  tb.kv[at] = kvPerGpu(c, t, i, j, k, cf) / p.tiers[k]!.memoryGb;
  tb.comp[at] = c.computeLoad[t]! / (c.gpuTflopPerHour[pr]! * c.configs[cf]!.gpus);
  tb.cost[at] = c.dataStorageCost[t]! + c.delayCostPerS[i]! * d - c.unmetCost[i]!;
  return at;
}

/** Calls `set(row, value)` for each non-zero of column t (under the deployment's config) in the scaled rows. */
function forColumn(c: Coefficients, tb: ColumnTable, cfg: Int32Array, t: number, ri: RowIndex, set: (r: number, v: number) => void): void {
  const JK = c.J * c.K;
  const i = Math.floor(t / JK), pr = t % JK;
  const at = columnAt(c, tb, t, cfg[pr]!);
  set(ri.bal + i, 1);
  set(ri.delay + i, tb.delay[at]!);
  set(ri.err + i, c.ebar[t]! / c.p.types[i]!.errorSlo);
  if (c.dataStorageCost[t]! > 0) set(ri.budget, c.dataStorageCost[t]! / ri.budgetScale);
  if (c.dataGb[t]! > 0) set(storageRow(c, ri, i, pr), c.dataGb[t]! / ri.storageScale);
  if (tb.kv[at]! > 0) set(ri.mem[pr]!, tb.kv[at]!);
  if (c.computeLoad[t]! > 0) set(ri.comp[pr]!, tb.comp[at]!);
}

/** Builds and solves the routing LP for deployment `cfg` and admissions `z`; null when it cannot be posed. */
function solveRouteLp(c: Coefficients, cfg: Int32Array, z: Uint8Array | null, counter?: LpCounter): RouteLp | null {
  const p = c.p, I = c.I, JK = c.J * c.K;
  if (p.types.some((t) => t.unservedCap < 1)) return null;
  const cols: number[] = [];
  // z = null: every (type, active pair) is a column and z is relaxed to z = x (its model storage cost and
  // weights' storage charged per unit of x) — the LP relaxation of the fixed-deployment problem, a lower bound.
  const relax = z === null;
  for (let t = 0; t < I * JK; t++) if ((relax || z[t]) && cfg[t % JK]! >= 0) cols.push(t);
  // Fixed costs and the room they leave.
  let fixed = 0;
  for (let pr = 0; pr < JK; pr++) if (cfg[pr]! >= 0) fixed += c.rentalPerGpu[pr]! * c.configs[cfg[pr]!]!.gpus;
  const nStorage = p.options.storageScope === 'global' ? 1 : p.options.storageScope === 'per-type' ? I : JK;
  const ri: RowIndex = { bal: 0, delay: I, err: 2 * I, budget: 3 * I, budgetScale: Math.max(1, p.budgetUsd), storage: 3 * I + 1, storageScale: Math.max(1, p.storageCapGb), mem: new Int32Array(JK).fill(-1), comp: new Int32Array(JK).fill(-1), m: 0 };
  let m = ri.storage + nStorage;
  for (let pr = 0; pr < JK; pr++) if (cfg[pr]! >= 0) { ri.mem[pr] = m++; ri.comp[pr] = m++; }
  ri.m = m;
  const b = new Float64Array(m);
  for (let i = 0; i < I; i++) { b[ri.bal + i] = 1; b[ri.delay + i] = 1; b[ri.err + i] = 1; }
  const storFixed = new Float64Array(nStorage);
  for (const t of relax ? [] : cols) {
    const i = Math.floor(t / JK), pr = t % JK;
    fixed += c.modelStorageCost[t]!;
    storFixed[storageRow(c, ri, i, pr) - ri.storage] += p.models[Math.floor(pr / c.K)]!.weightsGb;
  }
  b[ri.budget] = (p.budgetUsd - fixed) / ri.budgetScale;
  for (let s = 0; s < nStorage; s++) b[ri.storage + s] = (p.storageCapGb - storFixed[s]!) / ri.storageScale;
  for (let pr = 0; pr < JK; pr++) {
    if (cfg[pr]! < 0) continue;
    const k = pr % c.K;
    b[ri.mem[pr]!] = 1 - c.weightsGb[pr]! / c.configs[cfg[pr]!]!.gpus / p.tiers[k]!.memoryGb;
    b[ri.comp[pr]!] = 1;
  }
  // A negative room means the fixed part alone breaks a row: the deployment is infeasible as posed.
  for (let r = 0; r < m; r++) if (b[r]! < -1e-9) return null; else if (b[r]! < 0) b[r] = 0;
  const n = cols.length;
  const A = new Float64Array(m * n), cost = new Float64Array(n);
  const tb = columnTable(c);
  for (let col = 0; col < n; col++) {
    const t = cols[col]!;
    forColumn(c, tb, cfg, t, ri, (r, v) => { A[r * n + col] = v; });
    cost[col] = tb.cost[columnAt(c, tb, t, cfg[t % JK]!)]!;
    if (relax) {
      const i = Math.floor(t / JK), pr = t % JK;
      cost[col] += c.modelStorageCost[t]!;
      A[ri.budget * n + col] += c.modelStorageCost[t]! / ri.budgetScale;
      A[storageRow(c, ri, i, pr) * n + col] += p.models[Math.floor(pr / c.K)]!.weightsGb / ri.storageScale;
    }
  }
  const res = solveDenseLp({ A, b, c: cost, m, n });
  if (counter) { counter.solves++; counter.work += m * (n + m) * (res.pivots + 1); }
  if (res.status !== 'optimal') return null;
  let unmet = 0;
  for (let i = 0; i < I; i++) unmet += c.unmetCost[i]!;
  return { cols, duals: res.duals, x: res.x, objective: res.objective + fixed + unmet, rowOf: ri };
}

/** The state the LP solution describes: same configs, routes with x > 0, empty pairs closed. */
function stateFrom(c: Coefficients, cfg: Int32Array, lp: RouteLp): State {
  const JK = c.J * c.K;
  const out = new State(c);
  const used = new Uint8Array(JK);
  lp.cols.forEach((t, col) => { if (lp.x[col]! > EPS) used[t % JK] = 1; });
  for (let pr = 0; pr < JK; pr++) if (used[pr]) out.setConfig(pr, cfg[pr]!);
  lp.cols.forEach((t, col) => {
    const x = lp.x[col]!;
    if (x > EPS) out.add(Math.floor(t / JK), t % JK, Math.min(x, out.u[Math.floor(t / JK)]!));
  });
  return out;
}

/** Optimal routing of `s`'s deployment and admissions (LP); null when the LP cannot be posed. */
export function rerouteLp(s: State): State | null {
  const lp = solveRouteLp(s.c, s.cfg, s.z);
  return lp ? stateFrom(s.c, s.cfg, lp) : null;
}

/**
 * LP relaxation of routing deployment `cfg` (z = x): a lower bound on its routed objective, and the routes the
 * relaxation uses (route indices t, ascending: a starting admission set for `routeDeployment`). Null when the LP
 * cannot be posed.
 */
export function relaxedRouting(c: Coefficients, cfg: Int32Array, counter?: LpCounter): { bound: number; support: Int32Array } | null {
  const lp = solveRouteLp(c, cfg, null, counter);
  if (!lp) return null;
  const support: number[] = [];
  lp.cols.forEach((t, col) => { if (lp.x[col]! > 1e-7) support.push(t); });
  return { bound: lp.objective, support: Int32Array.from(support) };
}

export interface PolishOptions {
  /** Most admissions added (each costs one LP); default 2·I. */
  maxAdds?: number;
  /** Candidates re-solved per round, best priced first; default 4. */
  tries?: number;
  /** Also try dropping each admission (one LP each, frees its weights' storage and C2), then adding again,
   * and swapping two types between two pairs. */
  drops?: boolean;
}

/** Counts LP solves so callers can cap the work deterministically (no wall clock). */
export interface LpCounter {
  solves: number;
  /** Σ m·(n + m)·(pivots + 1) over the solves: a machine-independent proxy for simplex time. */
  work: number;
  /** When set, `routeDeployment` stops its admission search once `work` reaches it (keeps what it has). */
  limit?: number;
}

/**
 * Routes deployment `cfg` optimally starting from admissions `z`, then adds admissions (i, active pair) one at
 * a time, best dual-priced first (reduced cost minus the fixed model-storage charge), each kept only if the
 * re-solved LP improves. Returns the best routed state, or null when the LP cannot be posed.
 */
export function routeDeployment(c: Coefficients, cfg: Int32Array, z0: Uint8Array, opts: PolishOptions = {}, counter?: LpCounter): State | null {
  const JK = c.J * c.K, I = c.I;
  let z: Uint8Array = z0.slice();
  const first = solveRouteLp(c, cfg, z, counter);
  if (!first) return null;
  let lp: RouteLp = first;
  const maxAdds = opts.maxAdds ?? 2 * I, tries = opts.tries ?? 4;
  const spent = () => counter?.limit !== undefined && counter.work >= counter.limit;
  const tb = columnTable(c);
  const addPhase = () => {
    for (let add = 0; add < maxAdds && !spent(); add++) {
      const y = lp.duals, ri = lp.rowOf;
      const cands: { t: number; gain: number }[] = [];
      for (let t = 0; t < I * JK; t++) {
        const pr = t % JK;
        if (z[t] || cfg[pr]! < 0) continue;
        let rc = tb.cost[columnAt(c, tb, t, cfg[pr]!)]!;
        forColumn(c, tb, cfg, t, ri, (r, v) => { rc -= y[r]! * v; });
        if (rc >= -1e-9) continue;
        // Fixed charge: model storage cost, plus the weights' use of the budget and storage rows at dual prices.
        const i = Math.floor(t / JK), wGb = c.p.models[Math.floor(pr / c.K)]!.weightsGb;
        const fixed = c.modelStorageCost[t]! - y[ri.budget]! * (c.modelStorageCost[t]! / ri.budgetScale) - y[storageRow(c, ri, i, pr)]! * (wGb / ri.storageScale);
        cands.push({ t, gain: -rc - fixed });
      }
      cands.sort((a, b) => b.gain - a.gain || a.t - b.t);
      // Best of the `tries` best-priced candidates (dual prices rank candidates of an unserved type almost alike).
      let bestZ: Uint8Array = z, bestLp: RouteLp | null = null;
      for (const cd of cands.slice(0, tries)) {
        const z2 = z.slice();
        z2[cd.t] = 1;
        const lp2 = solveRouteLp(c, cfg, z2, counter);
        if (lp2 && lp2.objective < (bestLp ?? lp).objective - 1e-9) { bestZ = z2; bestLp = lp2; }
      }
      if (!bestLp) break;
      z = bestZ; lp = bestLp;
    }
  };
  addPhase();
  if (opts.drops) {
    // Drop each admission in turn (smallest routed amount first) and re-run the add phase; keep improvements.
    for (let pass = 0; pass < 2 && !spent(); pass++) {
      let improved = false;
      const cur = lp;
      const routed = cur.cols.map((t, col) => ({ t, x: cur.x[col]! })).sort((a, b) => a.x - b.x || a.t - b.t);
      for (const { t } of routed) {
        if (!z[t] || spent()) continue;
        const z2 = z.slice();
        z2[t] = 0;
        const lp2 = solveRouteLp(c, cfg, z2, counter);
        if (!lp2) continue;
        const saveZ = z, saveLp: RouteLp = lp;
        z = z2; lp = lp2;
        addPhase();
        if (lp.objective < saveLp.objective - 1e-9) improved = true;
        else { z = saveZ; lp = saveLp; }
      }
      // Swaps: types i1 on pair A and i2 on pair B trade places (i1 → B, i2 → A). Neither half improves
      // alone when each type is needed somewhere, so the drop/add moves above cannot find it.
      const ts = [...z.keys()].filter((t) => z[t]);
      for (let a = 0; a < ts.length; a++) {
        for (let b = a + 1; b < ts.length; b++) {
          const t1 = ts[a]!, t2 = ts[b]!;
          const i1 = Math.floor(t1 / JK), i2 = Math.floor(t2 / JK), A = t1 % JK, B = t2 % JK;
          if (i1 === i2 || A === B || !z[t1] || !z[t2] || z[i1 * JK + B] || z[i2 * JK + A] || spent()) continue;
          const z2 = z.slice();
          z2[t1] = 0; z2[t2] = 0; z2[i1 * JK + B] = 1; z2[i2 * JK + A] = 1;
          const lp2 = solveRouteLp(c, cfg, z2, counter);
          if (lp2 && lp2.objective < lp.objective - 1e-9) { z = z2; lp = lp2; improved = true; }
        }
      }
      if (!improved) break;
    }
  }
  return stateFrom(c, cfg, lp);
}

/** LP re-routing plus the admission search on `s`'s deployment; never worse than `s`. */
export function polishRouting(s: State, opts: PolishOptions = { drops: true }, counter?: LpCounter): State {
  const r = routeDeployment(s.c, s.cfg, s.z, opts, counter);
  return r && r.objective() < s.objective() - 1e-9 ? r : s;
}
