import { ModelBuilder, solveModel } from '../highs.ts';
import { delayOf, kvPerGpu, weightsPerGpu, type Coefficients } from './coefficients.ts';
import { emptyAllocation, evaluate, type Allocation } from './evaluate.ts';

/**
 * Routing-only LP (digest §4.7, Stage 2): deployment (y, q, w) and admissions z fixed, re-optimise x and u.
 * Rows (8b), (8c), (8f), (8g), (8h), (8i), (8j) and x ≤ z. Objective C3 + C4 + C5 (+ the fixed C1 + C2 as
 * offset). Used for the robustness studies and to route the LPR/DVR baselines.
 */
export interface RouteOptions {
  /** u ≤ ζ_i when true; by default u ∈ [0, 1] (violations are reported separately, digest §4.7 [A]). */
  strictCap?: boolean;
  timeLimitS?: number;
}

export interface RouteResult {
  allocation: Allocation;
  objective: number;
  ok: boolean;
}

export async function routeFixed(c: Coefficients, deploy: { cfg: Int32Array; z: Uint8Array }, opts: RouteOptions = {}): Promise<RouteResult> {
  const { I, J, K, p } = c;
  const JK = J * K;
  const b = new ModelBuilder('min');
  const xv = new Int32Array(I * JK).fill(-1);
  let fixed = 0;
  for (let pr = 0; pr < JK; pr++) if (deploy.cfg[pr]! >= 0) fixed += c.rentalPerGpu[pr]! * c.configs[deploy.cfg[pr]!]!.gpus;
  for (let t = 0; t < I * JK; t++) {
    const pr = t % JK;
    if (!deploy.z[t] || deploy.cfg[pr]! < 0) continue;
    fixed += c.modelStorageCost[t]!;
    const i = Math.floor(t / JK);
    xv[t] = b.addVar(`x_${t}`, 0, 1, c.dataStorageCost[t]! + c.delayCostPerS[i]! * delayOf(c, t, i, deploy.cfg[pr]!));
  }
  const uv = p.types.map((ty, i) => b.addVar(`u_${i}`, 0, opts.strictCap ? ty.unservedCap : 1, c.unmetCost[i]!));
  b.model.offset = fixed;
  for (let i = 0; i < I; i++) {
    const bal: [number, number][] = [[uv[i]!, 1]];
    const dl: [number, number][] = [];
    const er: [number, number][] = [];
    for (let pr = 0; pr < JK; pr++) {
      const t = i * JK + pr;
      if (xv[t]! < 0) continue;
      bal.push([xv[t]!, 1]);
      dl.push([xv[t]!, delayOf(c, t, i, deploy.cfg[pr]!)]);
      er.push([xv[t]!, c.ebar[t]!]);
    }
    b.addRow(`bal_${i}`, bal, 1, 1);
    if (dl.length) b.addRow(`delay_${i}`, dl, -Infinity, p.types[i]!.delaySloS);
    if (er.length) b.addRow(`err_${i}`, er, -Infinity, p.types[i]!.errorSlo);
  }
  const budget: [number, number][] = [];
  const stor = new Map<string, [number, number][]>();
  const storFixed = new Map<string, number>();
  for (let t = 0; t < I * JK; t++) {
    if (xv[t]! < 0) continue;
    const i = Math.floor(t / JK), pr = t % JK, j = Math.floor(pr / K);
    budget.push([xv[t]!, c.dataStorageCost[t]!]);
    const key = p.options.storageScope === 'global' ? 'g' : p.options.storageScope === 'per-type' ? `t${i}` : `p${pr}`;
    const g = stor.get(key) ?? [];
    g.push([xv[t]!, c.dataGb[t]! / Math.max(1, p.storageCapGb)]);
    stor.set(key, g);
    storFixed.set(key, (storFixed.get(key) ?? 0) + p.models[j]!.weightsGb);
  }
  if (budget.length) b.addRow('budget', budget, -Infinity, Math.max(0, p.budgetUsd - fixed));
  for (const [key, terms] of stor) b.addRow(`stor_${key}`, terms, -Infinity, Math.max(0, p.storageCapGb - storFixed.get(key)!) / Math.max(1, p.storageCapGb));
  for (let pr = 0; pr < JK; pr++) {
    const cf = deploy.cfg[pr]!;
    if (cf < 0) continue;
    const j = Math.floor(pr / K), k = pr % K;
    const mem: [number, number][] = [];
    const comp: [number, number][] = [];
    const cap = p.tiers[k]!.memoryGb;
    const compCap = c.gpuTflopPerHour[pr]! * c.configs[cf]!.gpus;
    // KV coefficients below 1e-6 of capacity (kvMode 'paper') are left out of the row, as in the MILP, and their
    // worst case (x = 1 each) is taken off the room the weights leave; when that room cannot hold it (weights
    // filling the GPU), they stay in the row. Dropping them without the reservation let a pair whose weights fill
    // its GPU exactly take traffic and overflow its memory (LPR and DVR plans broke (8f)).
    const small: [number, number][] = [];
    for (let i = 0; i < I; i++) {
      const t = i * JK + pr;
      if (xv[t]! < 0) continue;
      const kv = kvPerGpu(c, t, i, j, k, cf) / cap;
      if (kv >= 1e-6) mem.push([xv[t]!, kv]);
      else if (kv > 0) small.push([xv[t]!, kv]);
      comp.push([xv[t]!, c.computeLoad[t]! / compCap]);
    }
    let room = 1 - weightsPerGpu(c, pr, cf) / cap;
    const reserve = small.reduce((s, [, kv]) => s + kv, 0);
    if (reserve <= room) room -= reserve;
    else mem.push(...small);
    if (mem.length) b.addRow(`mem_${pr}`, mem, -Infinity, Math.max(0, room));
    if (comp.length) b.addRow(`comp_${pr}`, comp, -Infinity, 1);
  }
  const r = await solveModel(b.model, { ...(opts.timeLimitS !== undefined ? { timeLimitS: opts.timeLimitS } : {}) });
  const a = emptyAllocation(c);
  a.cfg = deploy.cfg.slice();
  a.z = deploy.z.slice();
  for (let pr = 0; pr < JK; pr++) if (a.cfg[pr]! < 0) for (let i = 0; i < I; i++) a.z[i * JK + pr] = 0;
  if (!r.hasSolution) return { allocation: a, objective: Infinity, ok: false };
  for (let i = 0; i < I; i++) {
    let served = 0;
    for (let pr = 0; pr < JK; pr++) {
      const t = i * JK + pr;
      if (xv[t]! < 0) continue;
      const x = r.values[xv[t]!]!;
      a.x[t] = x > 1e-9 ? Math.min(1, x) : 0;
      served += a.x[t]!;
    }
    a.u[i] = Math.max(0, 1 - served);
  }
  return { allocation: a, objective: r.objective!, ok: true };
}

/** Whether any type has an unserved cap ζ_i < 1 (with none, u ≤ ζ is the LP's own bound u ≤ 1). */
export function hasUnservedCaps(c: Coefficients): boolean {
  return c.p.types.some((t) => t.unservedCap < 1);
}

/** Types whose unserved share in `a` is above their cap ζ_i (the evaluator's tolerance). */
function typesOverCap(c: Coefficients, a: Allocation): number[] {
  return evaluate(c, a).perType.flatMap((t, i) => {
    const cap = c.p.types[i]!.unservedCap;
    return t.unserved > cap + 1e-6 * Math.max(1, cap) ? [i] : [];
  });
}

/**
 * A deployment's admissions may be what breaks a cap (GH admits a type only where its greedy put traffic; LPR
 * only where the LP relaxation did; DVR one pair per type). `types` are then admitted on every deployed pair,
 * routed with u ≤ ζ, the added admissions the LP left unused dropped (they cost model storage C2 and weights'
 * storage) and the rest routed again. Taken only when the evaluator finds the result feasible; else null.
 */
async function widenedRoute(c: Coefficients, deploy: { cfg: Int32Array; z: Uint8Array }, types: number[], opts: Omit<RouteOptions, 'strictCap'>): Promise<RouteResult | null> {
  const JK = c.J * c.K;
  const z = deploy.z.slice();
  let added = false;
  for (const i of types) for (let pr = 0; pr < JK; pr++) if (deploy.cfg[pr]! >= 0 && !z[i * JK + pr]) { z[i * JK + pr] = 1; added = true; }
  if (!added) return null;
  const wide = await routeFixed(c, { cfg: deploy.cfg, z }, { ...opts, strictCap: true });
  if (!wide.ok) return null;
  for (let t = 0; t < z.length; t++) if (z[t] && !deploy.z[t] && !(wide.allocation.x[t]! > 0)) z[t] = 0;
  const r = await routeFixed(c, { cfg: deploy.cfg, z }, { ...opts, strictCap: true });
  return r.ok && evaluate(c, r.allocation).feasible ? r : null;
}

/**
 * Routing of a fixed deployment that honours the unserved caps ζ_i where the deployment allows, for LPR, DVR and
 * headroom plans: (1) the LP with u_i ≤ ζ_i on the given admissions; (2) when that is infeasible, the types the
 * unconstrained routing leaves over their cap are admitted on every deployed pair (`widenedRoute`); (3) when that
 * fails too, the LP with u ∈ [0, 1], whose plan then breaks a cap — the evaluator reports it (`unserved-cap`
 * violation) and `planFromAllocation` marks the plan infeasible (`capsMet: false`). With every ζ_i = 1 it is
 * `routeFixed` (one LP, the same model as before).
 */
export async function routeHonouringCaps(c: Coefficients, deploy: { cfg: Int32Array; z: Uint8Array }, opts: Omit<RouteOptions, 'strictCap'> = {}): Promise<RouteResult & { capsMet: boolean }> {
  if (!hasUnservedCaps(c)) return { ...(await routeFixed(c, deploy, opts)), capsMet: true };
  const strict = await routeFixed(c, deploy, { ...opts, strictCap: true });
  if (strict.ok) return { ...strict, capsMet: true };
  const soft = await routeFixed(c, deploy, opts);
  if (soft.ok) {
    const wide = await widenedRoute(c, deploy, typesOverCap(c, soft.allocation), opts);
    if (wide) return { ...wide, capsMet: true };
  }
  return { ...soft, capsMet: false };
}

/**
 * GH and AGH construct plans without looking at ζ (digest §3.3: "a type can end with u_i > ζ_i"). A plan of
 * theirs that breaks a cap keeps its deployment and is re-routed with u ≤ ζ: on its own admissions, then with
 * the types over their cap admitted on every deployed pair (`widenedRoute`); the first result the evaluator
 * finds feasible is taken. Otherwise the plan is returned as it was, and `planFromAllocation` reports it as
 * breaking ζ (status infeasible). A plan that meets every cap, and any plan when every ζ_i = 1, is unchanged.
 */
export async function honourUnservedCaps(c: Coefficients, a: Allocation): Promise<Allocation> {
  if (!hasUnservedCaps(c)) return a;
  const over = typesOverCap(c, a);
  if (over.length === 0) return a;
  const deploy = { cfg: a.cfg, z: a.z };
  const r = await routeFixed(c, deploy, { strictCap: true });
  if (r.ok && evaluate(c, r.allocation).feasible) return r.allocation;
  return (await widenedRoute(c, deploy, over, {}))?.allocation ?? a;
}
