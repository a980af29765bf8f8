import { solveModel } from '../highs.ts';
import type { Coefficients } from './coefficients.ts';
import { evaluate, type Allocation } from './evaluate.ts';
import { buildMilp, solveMilp } from './milp.ts';
import { routeHonouringCaps } from './route.ts';

/**
 * The paper's baselines (digest §4.9). The paper gives one line each; these designs are ours [A] and are
 * documented in docs/fidelity/joint-allocation.md. All use the same deployment space and budget.
 * LPR and DVR route their deployment with u_i ≤ ζ_i (`routeHonouringCaps`); when no routing of it meets the
 * caps, they route with u ∈ [0, 1] and the plan breaks ζ (reported as infeasible). HF is the MILP and honours ζ.
 */

function minGpuConfig(c: Coefficients, pr: number, minGpus = 1): number {
  const k = pr % c.K;
  let best = -1;
  for (let cf = 0; cf < c.configs.length; cf++) {
    const g = c.configs[cf]!.gpus;
    if (g < minGpus || c.weightsGb[pr]! / g > c.p.tiers[k]!.memoryGb) continue;
    if (best < 0 || g < c.configs[best]!.gpus || (g === c.configs[best]!.gpus && c.configs[cf]!.tp > c.configs[best]!.tp)) best = cf;
  }
  return best;
}

/** Adds a pair + admissions if the fixed costs (rental, weight storage) and storage cap allow. */
function tryOpen(c: Coefficients, cfg: Int32Array, z: Uint8Array, pr: number, cf: number, types: number[], spent: { usd: number; gb: number }): boolean {
  const JK = c.J * c.K, j = Math.floor(pr / c.K);
  const newTypes = types.filter((i) => !z[i * JK + pr]);
  const g = c.configs[cf]!.gpus;
  const extraGpus = Math.max(0, g - (cfg[pr]! >= 0 ? c.configs[cfg[pr]!]!.gpus : 0));
  const usd = c.rentalPerGpu[pr]! * extraGpus + newTypes.reduce((s, i) => s + c.modelStorageCost[i * JK + pr]!, 0);
  const gb = newTypes.length * c.p.models[j]!.weightsGb;
  if (spent.usd + usd > c.p.budgetUsd + 1e-9 || spent.gb + gb > c.p.storageCapGb + 1e-9) return false;
  if (cfg[pr]! < 0 || c.configs[cfg[pr]!]!.gpus < g) cfg[pr] = cf;
  for (const i of newTypes) z[i * JK + pr] = 1;
  spent.usd += usd; spent.gb += gb;
  return true;
}

/** LPR: LP relaxation of 𝒫_DM (u ≤ ζ), then greedy rounding (pairs by LP q, config = largest LP w), then routing LP. */
export async function lpr(c: Coefficients, opts: { timeLimitS?: number } = {}): Promise<Allocation> {
  const m = buildMilp(c, { encoding: 'compact' });
  const r = await solveModel(m.model, { relax: true, ...(opts.timeLimitS !== undefined ? { timeLimitS: opts.timeLimitS } : {}) });
  const JK = c.J * c.K, C = c.configs.length;
  const cfg = new Int32Array(JK).fill(-1), z = new Uint8Array(c.I * JK);
  if (r.hasSolution) {
    const pairs = [...Array(JK).keys()].filter((pr) => r.values[m.cols.q[pr]!]! > 1e-6)
      .sort((a, b) => r.values[m.cols.q[b]!]! - r.values[m.cols.q[a]!]! || a - b);
    const spent = { usd: 0, gb: 0 };
    for (const pr of pairs) {
      let cf = -1, wv = -1;
      for (let k = 0; k < C; k++) if (r.values[m.cols.w[pr * C + k]!]! > wv) { wv = r.values[m.cols.w[pr * C + k]!]!; cf = k; }
      const g = c.configs[cf]!.gpus;
      if (c.weightsGb[pr]! / g > c.p.tiers[pr % c.K]!.memoryGb) cf = minGpuConfig(c, pr);
      if (cf < 0) continue;
      const types = [...Array(c.I).keys()].filter((i) => r.values[m.cols.x[i * JK + pr]!]! > 1e-6);
      if (types.length) tryOpen(c, cfg, z, pr, cf, types, spent);
    }
  }
  return (await routeHonouringCaps(c, { cfg, z })).allocation;
}

/**
 * DVR (after Kim et al.): decoupled VM selection then routing. Selection ignores delay: per type (λ desc),
 * the smallest model whose FP16 error meets ε_i, on the tier with the lowest $ per TFLOP/s that holds it;
 * GPUs = the least config covering memory and the type's compute load. Then the routing LP.
 */
export async function dvr(c: Coefficients): Promise<Allocation> {
  const { I, J, K, p } = c;
  const JK = J * K;
  const cfg = new Int32Array(JK).fill(-1), z = new Uint8Array(I * JK);
  const spent = { usd: 0, gb: 0 };
  const order = [...Array(I).keys()].sort((a, b) => c.lambda[b]! - c.lambda[a]! || a - b);
  const models = [...Array(J).keys()].sort((a, b) => p.models[a]!.weightsGb - p.models[b]!.weightsGb || a - b);
  for (const i of order) {
    const j = models.find((jj) => p.models[jj]!.baseError[p.types[i]!.name]! <= p.types[i]!.errorSlo) ?? models[models.length - 1]!;
    const tiers = [...Array(K).keys()].sort((a, b) => p.tiers[a]!.priceUsdPerHour / p.tiers[a]!.tflops - p.tiers[b]!.priceUsdPerHour / p.tiers[b]!.tflops || a - b);
    for (const k of tiers) {
      const pr = j * K + k, t = i * JK + pr;
      if (c.ebar[t]! > p.types[i]!.errorSlo) continue;
      let load = c.computeLoad[t]!;
      for (let i2 = 0; i2 < I; i2++) if (z[i2 * JK + pr]) load += c.computeLoad[i2 * JK + pr]!;
      const cf = minGpuConfig(c, pr, Math.ceil(load / c.gpuTflopPerHour[pr]! - 1e-9));
      if (cf >= 0 && tryOpen(c, cfg, z, pr, cf, [i], spent)) break;
    }
  }
  return (await routeHonouringCaps(c, { cfg, z })).allocation;
}

/** HF (after DynamoLLM): a homogeneous fleet — 𝒫_DM restricted to one tier, for every tier; keep the best. */
export async function hf(c: Coefficients, opts: { timeLimitS?: number } = {}): Promise<{ allocation: Allocation | null; tier: number }> {
  let best: Allocation | null = null, bestObj = Infinity, bestK = -1;
  const per = opts.timeLimitS !== undefined ? Math.max(1, opts.timeLimitS / c.K) : undefined;
  for (let k = 0; k < c.K; k++) {
    const r = await solveMilp(c, { encoding: 'compact', allowedTiers: (kk) => kk === k, diagnose: false, ...(per !== undefined ? { timeLimitS: per } : {}) });
    if (!r.allocation) continue;
    const o = evaluate(c, r.allocation).objective;
    if (o < bestObj) { best = r.allocation; bestObj = o; bestK = k; }
  }
  return { allocation: best, tier: bestK };
}

