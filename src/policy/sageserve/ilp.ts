import { ModelBuilder, solveModel, type LinearModel, type SolveOptions } from '../../optimize/highs.ts';
import { invariant } from '../../util/errors.ts';

/**
 * SageServe's hourly instance-allocation ILP (§5, Table 2; digest §3.8), over models i, regions j, GPU types k:
 *   δ_ijk = δ⁺ − δ⁻ ∈ ℤ, δ⁺, δ⁻ ≥ 0, δ⁻ ≤ n_ijk                                   (C3: no negative counts)
 *   (C1) ∀i,j: Σ_k (n_ijk + δ_ijk) θ_ik ≥ ε ρ_ij                                  local coverage
 *   (C2) ∀i:   Σ_j Σ_k (n_ijk + δ_ijk) θ_ik ≥ Σ_j ρ_ij                            global coverage
 *   min Σ_k α_k Σ_ij (δ⁺ − δ⁻) + Σ_ijk σ_ik δ⁺                                    start-up + deployment cost
 * ρ_ij is already the peak over the hour's windows plus β (the caller takes the max over w). Optional per
 * (i,j,k) bounds on n + δ (the endpoint's min/max instances) are our addition: the paper has none.
 */
export interface IlpInput {
  models: readonly string[];
  regions: readonly string[];
  gpus: readonly string[];
  /** n[i][j][k]: instances now. */
  n: readonly (readonly (readonly number[])[])[];
  /** rho[i][j]: demand (input tokens/s) to cover. */
  rho: readonly (readonly number[])[];
  /** theta[i][k]: input tokens/s one instance sustains. */
  theta: readonly (readonly number[])[];
  /** alpha[k]: VM price (per hour) — the paper's γ charges one α per instance change. */
  alpha: readonly number[];
  /** sigma[i][k]: model start-up cost, α_k × mean start-up time of model i on k (hours). */
  sigma: readonly (readonly number[])[];
  /** 0 < ε ≤ 1: share of its own demand each region must cover locally. */
  epsilon: number;
  minCount?: readonly (readonly (readonly number[])[])[];
  maxCount?: readonly (readonly (readonly number[])[])[];
}

export interface IlpSolution {
  /** delta[i][j][k] */
  delta: number[][][];
  objective: number;
  status: 'optimal' | 'infeasible' | 'time-limit' | 'error' | 'unbounded';
  solveSeconds: number;
}

const idx = (a: readonly (readonly (readonly number[])[])[] | undefined, i: number, j: number, k: number, dflt: number) => a?.[i]?.[j]?.[k] ?? dflt;

/** The ILP as a HiGHS linear model; column names `dp_i_j_k` / `dm_i_j_k` (δ⁺ / δ⁻). */
export function buildSageServeIlp(p: IlpInput): LinearModel {
  const b = new ModelBuilder('min');
  const L = p.models.length;
  const R = p.regions.length;
  const G = p.gpus.length;
  const dp: number[][][] = [];
  const dm: number[][][] = [];
  for (let i = 0; i < L; i++) {
    dp.push([]);
    dm.push([]);
    for (let j = 0; j < R; j++) {
      dp[i]!.push([]);
      dm[i]!.push([]);
      for (let k = 0; k < G; k++) {
        const n = p.n[i]![j]![k]!;
        const max = idx(p.maxCount, i, j, k, Infinity);
        dp[i]![j]!.push(b.addVar(`dp_${i}_${j}_${k}`, 0, Math.max(0, max - n), p.alpha[k]! + p.sigma[i]![k]!, 'integer'));
        dm[i]![j]!.push(b.addVar(`dm_${i}_${j}_${k}`, 0, n, -p.alpha[k]!, 'integer'));
        const min = idx(p.minCount, i, j, k, 0);
        if (min > 0) b.addRow(`min_${i}_${j}_${k}`, [[dp[i]![j]![k]!, 1], [dm[i]![j]![k]!, -1]], min - n, Infinity);
        // δ⁺'s upper bound caps n + δ only when n ≤ max; an endpoint already above its maximum must shrink to it.
        if (n > max) b.addRow(`max_${i}_${j}_${k}`, [[dp[i]![j]![k]!, 1], [dm[i]![j]![k]!, -1]], -Infinity, max - n);
      }
    }
  }
  for (let i = 0; i < L; i++) {
    const global: [number, number][] = [];
    let globalHave = 0;
    let globalNeed = 0;
    for (let j = 0; j < R; j++) {
      const terms: [number, number][] = [];
      let have = 0;
      for (let k = 0; k < G; k++) {
        const th = p.theta[i]![k]!;
        terms.push([dp[i]![j]![k]!, th], [dm[i]![j]![k]!, -th]);
        have += p.n[i]![j]![k]! * th;
      }
      b.addRow(`c1_${i}_${j}`, terms, p.epsilon * p.rho[i]![j]! - have, Infinity);
      global.push(...terms);
      globalHave += have;
      globalNeed += p.rho[i]![j]!;
    }
    b.addRow(`c2_${i}`, global, globalNeed - globalHave, Infinity);
  }
  return b.model;
}

/** Solves the ILP on HiGHS (WebAssembly). */
export async function solveSageServeIlp(p: IlpInput, opts: SolveOptions = {}): Promise<IlpSolution> {
  const model = buildSageServeIlp(p);
  const r = await solveModel(model, opts);
  const delta = p.models.map((_, i) =>
    p.regions.map((_, j) => p.gpus.map((_, k) => (r.hasSolution ? Math.round(r.values[model.names.indexOf(`dp_${i}_${j}_${k}`)]! - r.values[model.names.indexOf(`dm_${i}_${j}_${k}`)]!) : 0))),
  );
  return { delta, objective: r.objective ?? NaN, status: r.status, solveSeconds: r.solveSeconds };
}

/**
 * The exact optimum for one GPU type (g = 1) without a shared capacity bound, in closed form (digest §3.8):
 * the problem separates per model; each region goes to its C1 floor (removing surplus earns α each), then C2
 * is met by first keeping instances that would have been removed (marginal cost α, the forgone credit) and
 * only then adding new ones (α + σ). Used inside the simulator, which cannot wait for the WASM solver; the
 * test suite checks it against HiGHS on random instances.
 * Worked example: θ = 100, ε = 0.5, n = [4, 1], ρ = [150, 350] ⇒ floors ⌈75/100⌉ = 1, ⌈175/100⌉ = 2; C2 needs
 * ⌈500/100⌉ = 5 > 3: keep 2 of region 0's 3 surplus ⇒ targets [3, 2], δ = [−1, +1].
 */
export function greedySageServe(p: IlpInput): IlpSolution {
  invariant(p.gpus.length === 1, 'greedySageServe handles one GPU type; use solveSageServeIlp for more');
  const a = p.alpha[0]!;
  const delta: number[][][] = [];
  let objective = 0;
  let status: IlpSolution['status'] = 'optimal';
  for (let i = 0; i < p.models.length; i++) {
    const th = p.theta[i]![0]!;
    const s = p.sigma[i]![0]!;
    const R = p.regions.length;
    const n = p.regions.map((_, j) => p.n[i]![j]![0]!);
    const lo = p.regions.map((_, j) => idx(p.minCount, i, j, 0, 0));
    const hi = p.regions.map((_, j) => idx(p.maxCount, i, j, 0, Infinity));
    // ε ρ / θ with a hair of slack so 2.0000000001 (float noise) does not round up to 3.
    const need = (x: number) => Math.max(0, Math.ceil(x / th - 1e-9));
    const target = n.map((_, j) => Math.max(lo[j]!, need(p.epsilon * p.rho[i]![j]!)));
    for (let j = 0; j < R; j++) {
      if (target[j]! > hi[j]!) {
        target[j] = hi[j]!;
        status = 'infeasible';
      }
    }
    let missing = need(p.rho[i]!.reduce((x, y) => x + y, 0)) - target.reduce((x, y) => x + y, 0);
    // Keep surplus first (cost α each), in region order, then add new ones where the demand is largest.
    for (let j = 0; j < R && missing > 0; j++) {
      const keep = Math.min(missing, Math.max(0, Math.min(n[j]!, hi[j]!) - target[j]!));
      target[j]! += keep;
      missing -= keep;
    }
    const byDemand = [...target.keys()].sort((x, y) => p.rho[i]![y]! - p.rho[i]![x]! || x - y);
    for (const j of byDemand) {
      if (missing <= 0) break;
      const add = Math.min(missing, hi[j]! - target[j]!);
      target[j]! += add;
      missing -= add;
    }
    if (missing > 0) status = 'infeasible';
    delta.push(target.map((t, j) => [t - n[j]!]));
    for (let j = 0; j < R; j++) {
      const d = target[j]! - n[j]!;
      objective += a * d + (d > 0 ? s * d : 0);
    }
  }
  return { delta, objective, status, solveSeconds: 0 };
}
