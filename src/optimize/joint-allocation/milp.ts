import { ModelBuilder, solveModel, type LinearModel, type SolveResult, type SolveStatus } from '../highs.ts';
import { UserError } from '../../util/errors.ts';
import { delayOf, kvPerGpu, type Coefficients } from './coefficients.ts';
import { emptyAllocation, evaluate, type Allocation, type ConstraintFamily } from './evaluate.ts';
import { routeFixed } from './route.ts';

/**
 * 𝒫_DM (digest §2.6) as a MILP for HiGHS. Variable names follow the digest (§2.9):
 * y_j_k (int), q_j_k, w_j_k_c, z_i_j_k (binary), x_i_j_k, u_i, v_i_j_k_c (continuous).
 *
 * encoding 'paper'  : McCormick (7a–7b): v ≤ x, v ≤ w, v ≥ x + w − 1 for every (i,j,k,c).
 * encoding 'compact': the digest's exact smaller form (§2.5): Σ_c v = x, v ≤ w. Exact given (8d) and (8k):
 *                     if q = 1 exactly one w is 1 so v = x on it; if q = 0 then x = 0.
 * The KV term of (8f) uses the same v (digest §2.5 [D]).
 */
export type Encoding = 'paper' | 'compact';

export interface MilpModel {
  model: LinearModel;
  /** Column index of each variable family, for decoding. */
  cols: { y: Int32Array; q: Int32Array; w: Int32Array; z: Int32Array; x: Int32Array; u: Int32Array; v: Int32Array };
  /** Row indices by constraint family (for the infeasibility diagnosis). */
  families: Map<ConstraintFamily, number[]>;
}

export interface BuildOptions {
  encoding?: Encoding;
  /** Restrict deployable tiers (HF baseline); others get q fixed to 0. */
  allowedTiers?: (k: number) => boolean;
  /** Relax these families with a nonnegative slack per row costing 1/max(1,|rhs|) and drop the real objective. */
  elastic?: ReadonlySet<ConstraintFamily>;
}

/** The size of {@link buildMilp}'s model, from (I, J, K, |configs|) alone (an upper bound: dropped terms count). */
export interface MilpSize {
  vars: number;
  rows: number;
  nonzeros: number;
}

export function milpSize(c: Pick<Coefficients, 'I' | 'J' | 'K' | 'configs' | 'p'>, encoding: Encoding = 'paper'): MilpSize {
  const { I, J, K } = c;
  const C = c.configs.length;
  const JK = J * K, N = I * JK;
  const scope = c.p.options.storageScope;
  const storRows = scope === 'global' ? 1 : scope === 'per-type' ? I : JK;
  const vars = JK * (2 + C) + N * (2 + C) + I;
  // balance, budget, per pair (cfg, gpus, mem, comp), storage, delay + error per type, x ≤ z ≤ q, v linking
  const rows = I + 1 + 4 * JK + storRows + 2 * I + 2 * N + (encoding === 'compact' ? N * (C + 1) : 3 * N * C);
  const nonzeros = I * (1 + JK) + (JK + 2 * N) + JK * (3 * C + 4) + N * (C + 1) + 2 * N + N * (C + 1) + 4 * N +
    (encoding === 'compact' ? 2 * N * C + N * (C + 1) : 7 * N * C);
  return { vars, rows, nonzeros };
}

/**
 * The largest MILP that is built and handed to HiGHS ({@link milpSize}); beyond it `buildMilp` throws
 * {@link MilpTooLargeError} before allocating anything. Measured on generated cubes (docs/fidelity/joint-allocation.md,
 * "Model size limit"): building is quick (30³: 1.7 s; 100³ runs V8 out of memory), but HiGHS-WASM overruns its time
 * limit in presolve on large models, steeply in the number of columns — at a 10-s limit 20³ (118 k columns) took
 * 10.4 s, 25³ (228 k) 11–13 s, 30³ (391 k) 38 s, 35³ (617 k) 144 s, 40³ (918 k) over 250 s — and its 2 GB heap ran
 * out on 50³ (7.6 M nonzeros). The nonzero cap keeps shapes with many columns per row (large I) within that heap.
 */
export const MAX_MILP_VARS = 300_000;
export const MAX_MILP_NONZEROS = 4_000_000;

/** Thrown by {@link buildMilp} for a model beyond the limits: the CLI suggests a heuristic; a heuristic's bound run skips. */
export class MilpTooLargeError extends UserError {
  override name = 'MilpTooLargeError';
  constructor(readonly size: MilpSize, readonly encoding: Encoding) {
    const n = (v: number) => v.toLocaleString('en-US');
    super(`the instance is too large for the exact model: its MILP (${encoding} encoding) would have ${n(size.vars)} variables and ` +
      `${n(size.nonzeros)} nonzeros (limits ${n(MAX_MILP_VARS)} and ${n(MAX_MILP_NONZEROS)}, beyond which HiGHS overruns its time limit or memory)`);
  }
}

/** Throws {@link MilpTooLargeError} when the model would be too large to build and solve; returns its size otherwise. */
export function checkMilpSize(c: Pick<Coefficients, 'I' | 'J' | 'K' | 'configs' | 'p'>, encoding: Encoding = 'paper'): MilpSize {
  const size = milpSize(c, encoding);
  if (size.vars > MAX_MILP_VARS || size.nonzeros > MAX_MILP_NONZEROS) throw new MilpTooLargeError(size, encoding);
  return size;
}

export function buildMilp(c: Coefficients, opts: BuildOptions = {}): MilpModel {
  checkMilpSize(c, opts.encoding ?? 'paper');
  const { I, J, K, configs, p } = c;
  const C = configs.length;
  const enc = opts.encoding ?? 'paper';
  const elastic = opts.elastic;
  const phase1 = !!elastic;
  const b = new ModelBuilder('min');
  const JK = J * K, N = I * J * K;
  const cols = {
    y: new Int32Array(JK), q: new Int32Array(JK), w: new Int32Array(JK * C), z: new Int32Array(N), x: new Int32Array(N),
    u: new Int32Array(I), v: new Int32Array(N * C),
  };
  const maxG = Math.max(...configs.map((cf) => cf.gpus));
  const cost = (v: number) => (phase1 ? 0 : v);
  for (let j = 0; j < J; j++) {
    for (let k = 0; k < K; k++) {
      const pr = j * K + k;
      const allowed = opts.allowedTiers ? opts.allowedTiers(k) : true;
      cols.y[pr] = b.addVar(`y_${j}_${k}`, 0, allowed ? maxG : 0, cost(c.rentalPerGpu[pr]!), 'integer');
      cols.q[pr] = b.addVar(`q_${j}_${k}`, 0, allowed ? 1 : 0, 0, 'binary');
      for (let cf = 0; cf < C; cf++) cols.w[pr * C + cf] = b.addVar(`w_${j}_${k}_${cf}`, 0, allowed ? 1 : 0, 0, 'binary');
    }
  }
  for (let i = 0; i < I; i++) {
    for (let j = 0; j < J; j++) {
      for (let k = 0; k < K; k++) {
        const t = (i * J + j) * K + k;
        cols.z[t] = b.addVar(`z_${i}_${j}_${k}`, 0, 1, cost(c.modelStorageCost[t]!), 'binary');
        cols.x[t] = b.addVar(`x_${i}_${j}_${k}`, 0, 1, cost(c.dataStorageCost[t]!));
        for (let cf = 0; cf < C; cf++) {
          cols.v[t * C + cf] = b.addVar(`v_${i}_${j}_${k}_${cf}`, 0, 1, cost(c.delayCostPerS[i]! * delayOf(c, t, i, cf)));
        }
      }
    }
  }
  const capElastic = elastic?.has('unserved-cap');
  for (let i = 0; i < I; i++) {
    cols.u[i] = b.addVar(`u_${i}`, 0, capElastic ? 1 : p.types[i]!.unservedCap, cost(c.unmetCost[i]!));
  }
  const families = new Map<ConstraintFamily, number[]>();
  const row = (fam: ConstraintFamily, name: string, terms: [number, number][], lb: number, ub: number) => {
    if (elastic?.has(fam) && Number.isFinite(ub)) {
      const s = b.addVar(`s_${name}`, 0, Infinity, 1 / Math.max(1, Math.abs(ub)));
      terms.push([s, -1]);
    }
    const r = b.addRow(name, terms, lb, ub);
    const list = families.get(fam) ?? [];
    list.push(r);
    families.set(fam, list);
  };
  const tIdx = (i: number, j: number, k: number) => (i * J + j) * K + k;
  // (8b) demand balance
  for (let i = 0; i < I; i++) {
    const terms: [number, number][] = [[cols.u[i]!, 1]];
    for (let j = 0; j < J; j++) for (let k = 0; k < K; k++) terms.push([cols.x[tIdx(i, j, k)]!, 1]);
    row('balance', `bal_${i}`, terms, 1, 1);
  }
  // u ≤ ζ as a row only when elastic (so its slack can be reported)
  if (capElastic) for (let i = 0; i < I; i++) row('unserved-cap', `cap_${i}`, [[cols.u[i]!, 1]], -Infinity, p.types[i]!.unservedCap);
  // (8c) budget
  {
    const terms: [number, number][] = [];
    for (let pr = 0; pr < JK; pr++) terms.push([cols.y[pr]!, c.rentalPerGpu[pr]!]);
    for (let t = 0; t < N; t++) terms.push([cols.z[t]!, c.modelStorageCost[t]!], [cols.x[t]!, c.dataStorageCost[t]!]);
    row('budget', 'budget', terms, -Infinity, p.budgetUsd);
  }
  for (let j = 0; j < J; j++) {
    for (let k = 0; k < K; k++) {
      const pr = j * K + k;
      // (8d) one config iff deployed; (8e) y = Σ nm w
      const d: [number, number][] = [[cols.q[pr]!, -1]];
      const e: [number, number][] = [[cols.y[pr]!, 1]];
      // Rows are scaled to O(1) coefficients (memory ÷ C_k, compute ÷ per-GPU capacity): HiGHS presolve
      // misjudged feasibility on the unscaled rows (coefficients from 1e-8 to 3e6).
      const capGb = p.tiers[k]!.memoryGb;
      // KV coefficients below 1e-6 of capacity (kvMode 'paper' gives ~1e-9) also broke HiGHS presolve
      // (false "infeasible"); they are dropped and their worst case (all v = 1) is taken off q's capacity.
      let dropped = 0;
      const mem: [number, number][] = [];
      for (let cf = 0; cf < C; cf++) {
        d.push([cols.w[pr * C + cf]!, 1]);
        e.push([cols.w[pr * C + cf]!, -configs[cf]!.gpus]);
        mem.push([cols.w[pr * C + cf]!, c.weightsGb[pr]! / configs[cf]!.gpus / capGb]);
        for (let i = 0; i < I; i++) {
          const t = tIdx(i, j, k);
          const kv = kvPerGpu(c, t, i, j, k, cf) / capGb;
          if (kv >= 1e-6) mem.push([cols.v[t * C + cf]!, kv]);
          else dropped = Math.max(dropped, kv);
        }
      }
      mem.push([cols.q[pr]!, -(1 - dropped * I)]);
      row('admission', `cfg_${j}_${k}`, d, 0, 0);
      row('admission', `gpus_${j}_${k}`, e, 0, 0);
      // (8f) memory per GPU: weights + KV after sharding
      row('memory', `mem_${j}_${k}`, mem, -Infinity, 0);
      // (8g) compute
      const comp: [number, number][] = [[cols.y[pr]!, -1]];
      for (let i = 0; i < I; i++) comp.push([cols.x[tIdx(i, j, k)]!, c.computeLoad[tIdx(i, j, k)]! / c.gpuTflopPerHour[pr]!]);
      row('compute', `comp_${j}_${k}`, comp, -Infinity, 0);
    }
  }
  // (8h) storage, scope per options (digest §2.6: default one global row)
  {
    const scope = p.options.storageScope;
    const groups = new Map<string, [number, number][]>();
    const capS = Math.max(1, p.storageCapGb);
    for (let i = 0; i < I; i++) {
      for (let j = 0; j < J; j++) {
        for (let k = 0; k < K; k++) {
          const t = tIdx(i, j, k);
          const key = scope === 'global' ? 'stor' : scope === 'per-type' ? `stor_${i}` : `stor_${j}_${k}`;
          const g = groups.get(key) ?? [];
          g.push([cols.z[t]!, p.models[j]!.weightsGb / capS], [cols.x[t]!, c.dataGb[t]! / capS]);
          groups.set(key, g);
        }
      }
    }
    for (const [key, terms] of groups) row('storage', key, terms, -Infinity, p.storageCapGb / capS);
  }
  // (8i) delay, (8j) error
  for (let i = 0; i < I; i++) {
    const dl: [number, number][] = [];
    const er: [number, number][] = [];
    for (let j = 0; j < J; j++) {
      for (let k = 0; k < K; k++) {
        const t = tIdx(i, j, k);
        er.push([cols.x[t]!, c.ebar[t]!]);
        for (let cf = 0; cf < C; cf++) dl.push([cols.v[t * C + cf]!, delayOf(c, t, i, cf)]);
      }
    }
    row('delay', `delay_${i}`, dl, -Infinity, p.types[i]!.delaySloS);
    row('error', `err_${i}`, er, -Infinity, p.types[i]!.errorSlo);
  }
  // (8k) x ≤ z ≤ q, and the McCormick / compact linking of v
  for (let i = 0; i < I; i++) {
    for (let j = 0; j < J; j++) {
      for (let k = 0; k < K; k++) {
        const t = tIdx(i, j, k), pr = j * K + k;
        row('admission', `xz_${i}_${j}_${k}`, [[cols.x[t]!, 1], [cols.z[t]!, -1]], -Infinity, 0);
        row('admission', `zq_${i}_${j}_${k}`, [[cols.z[t]!, 1], [cols.q[pr]!, -1]], -Infinity, 0);
        if (enc === 'compact') {
          const sum: [number, number][] = [[cols.x[t]!, -1]];
          for (let cf = 0; cf < C; cf++) {
            sum.push([cols.v[t * C + cf]!, 1]);
            row('admission', `vw_${i}_${j}_${k}_${cf}`, [[cols.v[t * C + cf]!, 1], [cols.w[pr * C + cf]!, -1]], -Infinity, 0);
          }
          row('admission', `vx_${i}_${j}_${k}`, sum, 0, 0);
        } else {
          for (let cf = 0; cf < C; cf++) {
            const v = cols.v[t * C + cf]!, w = cols.w[pr * C + cf]!;
            row('admission', `mc1_${i}_${j}_${k}_${cf}`, [[v, 1], [cols.x[t]!, -1]], -Infinity, 0);
            row('admission', `mc2_${i}_${j}_${k}_${cf}`, [[v, 1], [w, -1]], -Infinity, 0);
            row('admission', `mc3_${i}_${j}_${k}_${cf}`, [[v, 1], [cols.x[t]!, -1], [w, -1]], -1, Infinity);
          }
        }
      }
    }
  }
  return { model: b.model, cols, families };
}

/** Reads an allocation from a solver's column values (rounding binaries; dropping x < 1e-9). */
export function decodeMilp(c: Coefficients, m: MilpModel, values: Float64Array): Allocation {
  const a = emptyAllocation(c);
  const C = c.configs.length;
  for (let pr = 0; pr < c.J * c.K; pr++) {
    if (values[m.cols.q[pr]!]! < 0.5) continue;
    let best = -1, bv = 0.5;
    for (let cf = 0; cf < C; cf++) if (values[m.cols.w[pr * C + cf]!]! > bv) { bv = values[m.cols.w[pr * C + cf]!]!; best = cf; }
    a.cfg[pr] = best;
  }
  for (let i = 0; i < c.I; i++) {
    let served = 0;
    for (let t = i * c.J * c.K; t < (i + 1) * c.J * c.K; t++) {
      const pr = t % (c.J * c.K);
      const x = values[m.cols.x[t]!]!;
      a.z[t] = values[m.cols.z[t]!]! > 0.5 && a.cfg[pr]! >= 0 ? 1 : 0;
      a.x[t] = x > 1e-9 && a.z[t] ? Math.min(1, x) : 0;
      served += a.x[t]!;
    }
    a.u[i] = Math.max(0, 1 - served);
  }
  return a;
}

/** The column values of an allocation ({@link decodeMilp}'s inverse): a MIP start for HiGHS. */
export function encodeAllocation(c: Coefficients, m: MilpModel, a: Allocation): Float64Array {
  const values = new Float64Array(m.model.names.length);
  const C = c.configs.length, JK = c.J * c.K;
  for (let pr = 0; pr < JK; pr++) {
    const cf = a.cfg[pr]!;
    if (cf < 0) continue;
    values[m.cols.q[pr]!] = 1;
    values[m.cols.w[pr * C + cf]!] = 1;
    values[m.cols.y[pr]!] = c.configs[cf]!.gpus;
  }
  for (let t = 0; t < c.I * JK; t++) {
    const cf = a.cfg[t % JK]!;
    if (cf < 0 || !a.z[t]) continue;
    values[m.cols.z[t]!] = 1;
    values[m.cols.x[t]!] = a.x[t]!;
    values[m.cols.v[t * C + cf]!] = a.x[t]!;
  }
  for (let i = 0; i < c.I; i++) values[m.cols.u[i]!] = a.u[i]!;
  return values;
}

/**
 * HiGHS accepts binaries within its integrality tolerance (1e-6), and its solutions use that: a pair opened at
 * q = z ≈ 1.5e-7 (for ≈ 1.5e-7 of a GPU's rental) carrying ≈ 6e-8 of several types' traffic. `decodeMilp` rounds
 * such a pair away, and the traffic it carried becomes unserved, so the decoded plan cost more than the solver
 * reported (generated 3,4,4 seed 99984, paper encoding: $27.1694 vs $27.1656, a gap of 1.4e-4 above HiGHS's 1e-4
 * while "optimal"). With the rounded deployment fixed, routing is an LP: re-solve it (u ≤ ζ kept) and take its
 * plan when the evaluator finds it feasible and cheaper.
 */
async function rerouteDecoded(c: Coefficients, a: Allocation): Promise<Allocation> {
  const r = await routeFixed(c, { cfg: a.cfg, z: a.z }, { strictCap: true });
  if (!r.ok) return a;
  const before = evaluate(c, a), after = evaluate(c, r.allocation);
  return after.feasible && (!before.feasible || after.objective < before.objective) ? r.allocation : a;
}

export interface MilpResult {
  status: SolveStatus;
  allocation: Allocation | null;
  objective: number | null;
  bound: number | null;
  gap: number | null;
  solveSeconds: number;
  vars: number;
  rows: number;
  /** For infeasible problems: which constraint families, relaxed alone, restore feasibility. */
  infeasibility?: InfeasibilityReport;
}

export interface InfeasibilityReport {
  /** Families whose relaxation alone makes the problem feasible. */
  sufficient: ConstraintFamily[];
  /** Rows with positive slack when every family is relaxed at once (minimum total relative violation). */
  elasticRows: { family: ConstraintFamily; row: string; slack: number }[];
  message: string;
}

export interface MilpSolveOptions {
  encoding?: Encoding;
  timeLimitS?: number;
  mipRelGap?: number;
  relax?: boolean;
  allowedTiers?: (k: number) => boolean;
  diagnose?: boolean;
  /** A plan to start from (a MIP start); one the evaluator finds infeasible is not passed (HiGHS would reject it). */
  start?: Allocation;
}

export async function solveMilp(c: Coefficients, opts: MilpSolveOptions = {}): Promise<MilpResult> {
  const m = buildMilp(c, { ...(opts.encoding ? { encoding: opts.encoding } : {}), ...(opts.allowedTiers ? { allowedTiers: opts.allowedTiers } : {}) });
  const so = {
    ...(opts.timeLimitS !== undefined ? { timeLimitS: opts.timeLimitS } : {}),
    ...(opts.mipRelGap !== undefined ? { mipRelGap: opts.mipRelGap } : {}),
    ...(opts.relax ? { relax: true } : {}),
    ...(opts.start && evaluate(c, opts.start).feasible ? { start: encodeAllocation(c, m, opts.start) } : {}),
  };
  let r: SolveResult = await solveModel(m.model, so);
  // HiGHS-WASM presolve has reported false infeasibility on badly scaled rows; confirm without presolve.
  if (r.status === 'infeasible') {
    const left = opts.timeLimitS !== undefined ? Math.max(1, opts.timeLimitS - r.solveSeconds) : undefined;
    const r2 = await solveModel(m.model, { ...so, presolve: 'off', ...(left !== undefined ? { timeLimitS: left } : {}) });
    r2.solveSeconds += r.solveSeconds;
    if (r2.status !== 'error') r = r2;
  }
  const decoded = r.hasSolution && !opts.relax ? await rerouteDecoded(c, decodeMilp(c, m, r.values)) : null;
  const out: MilpResult = {
    status: r.status, allocation: decoded, objective: r.objective,
    bound: r.bound, gap: r.gap, solveSeconds: r.solveSeconds, vars: m.model.names.length, rows: m.model.rowNames.length,
  };
  if (r.status === 'infeasible' && opts.diagnose !== false) out.infeasibility = await diagnoseInfeasible(c, opts);
  return out;
}

const FAMILIES: ConstraintFamily[] = ['unserved-cap', 'budget', 'storage', 'delay', 'error', 'memory', 'compute'];

/** Re-solves with slack per family (digest/issue: "which constraint family binds"). */
export async function diagnoseInfeasible(c: Coefficients, opts: MilpSolveOptions = {}): Promise<InfeasibilityReport> {
  const tl = Math.min(opts.timeLimitS ?? 30, 30);
  const enc = opts.encoding ?? 'compact';
  const sufficient: ConstraintFamily[] = [];
  for (const f of FAMILIES) {
    const m = buildMilp(c, { encoding: enc, elastic: new Set([f]), ...(opts.allowedTiers ? { allowedTiers: opts.allowedTiers } : {}) });
    const r = await solveModel(m.model, { timeLimitS: tl });
    if (r.hasSolution) sufficient.push(f);
  }
  const m = buildMilp(c, { encoding: enc, elastic: new Set(FAMILIES), ...(opts.allowedTiers ? { allowedTiers: opts.allowedTiers } : {}) });
  const r = await solveModel(m.model, { timeLimitS: tl });
  const elasticRows: InfeasibilityReport['elasticRows'] = [];
  if (r.hasSolution) {
    for (let v = 0; v < m.model.names.length; v++) {
      const nm = m.model.names[v]!;
      if (!nm.startsWith('s_') || r.values[v]! <= 1e-7) continue;
      const rowName = nm.slice(2);
      let fam: ConstraintFamily = 'admission';
      for (const [f, rows] of m.families) if (rows.some((ri) => m.model.rowNames[ri] === rowName)) fam = f;
      elasticRows.push({ family: fam, row: describeRow(c, rowName), slack: r.values[v]! });
    }
  }
  const fams = [...new Set(elasticRows.map((e) => e.family))];
  const message = `infeasible: ${sufficient.length ? `relaxing any one of [${sufficient.join(', ')}] restores feasibility` : 'no single constraint family explains it'}` +
    (elasticRows.length ? `; least total violation needs slack on ${fams.join(', ')}: ${elasticRows.slice(0, 6).map((e) => `${e.row} +${+e.slack.toPrecision(3)}`).join('; ')}` : '');
  return { sufficient, elasticRows, message };
}

function describeRow(c: Coefficients, row: string): string {
  const [kind, ...ix] = row.split('_');
  const n = ix.map(Number);
  const ty = (i: number) => c.p.types[i]?.name ?? String(i);
  const pair = (j: number, k: number) => `${c.p.models[j]?.name}@${c.p.tiers[k]?.name}`;
  switch (kind) {
    case 'cap': return `unserved cap of ${ty(n[0]!)} (ζ=${c.p.types[n[0]!]!.unservedCap})`;
    case 'delay': return `delay SLO of ${ty(n[0]!)} (${c.p.types[n[0]!]!.delaySloS} s)`;
    case 'err': return `error SLO of ${ty(n[0]!)} (${c.p.types[n[0]!]!.errorSlo})`;
    case 'budget': return `budget ($${c.p.budgetUsd})`;
    case 'stor': return ix.length === 0 ? `storage cap (${c.p.storageCapGb} GB)` : `storage cap ${ix.length === 1 ? ty(n[0]!) : pair(n[0]!, n[1]!)}`;
    case 'mem': return `memory of ${pair(n[0]!, n[1]!)}`;
    case 'comp': return `compute of ${pair(n[0]!, n[1]!)}`;
    default: return row;
  }
}
