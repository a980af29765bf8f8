import { delayOf, kvPerGpu, weightsPerGpu, type Coefficients } from './coefficients.ts';

/**
 * A decision of 𝒫_DM in flat arrays (t = (i·J + j)·K + k, pair = j·K + k). `cfg[pair]` is the config index
 * (TP×PP) or -1 when the pair is not deployed; y = gpus(cfg), q = cfg ≥ 0, w one-hot on cfg.
 */
export interface Allocation {
  cfg: Int32Array;
  x: Float64Array;
  z: Uint8Array;
  u: Float64Array;
}

export type ConstraintFamily = 'balance' | 'budget' | 'memory' | 'compute' | 'storage' | 'delay' | 'error' | 'admission' | 'unserved-cap';

export interface Violation {
  family: ConstraintFamily;
  where: string;
  /** How far over (in the row's unit). */
  excess: number;
}

export interface CostBreakdown {
  gpuRental: number;   // C1
  modelStorage: number; // C2
  dataStorage: number; // C3
  delayPenalty: number; // C4
  unmetPenalty: number; // C5
}

/**
 * One query type of a plan. `delayS` and `error` are the left sides of the paper's (8i) and (8j), Σ x·D and Σ x·ē:
 * weighted by the served share x, not averaged over served queries (digest §2.4: u carries zero delay and error), so
 * leaving part of a type unserved dilutes them; the slacks are those rows' (what the MILP enforces).
 * `delayPerServedS` and `errorPerServed` are what a served query sees on average (÷ served share) and
 * `servedOverSlo` names the SLOs those exceed — a partly served type can meet (8i)/(8j) and still be listed there.
 * A type served not at all (served 0) has no delay or error: the four values are null (its rows' value is 0, the
 * slacks Δ_i and ε_i).
 */
export interface TypeReport {
  type: string;
  served: number;
  unserved: number;
  /** (8i)'s left side Σ x·D (s); null when served is 0. */
  delayS: number | null;
  delaySloS: number;
  delaySlackS: number;
  /** (8j)'s left side Σ x·ē; null when served is 0. */
  error: number | null;
  errorSlo: number;
  errorSlack: number;
  /** [ours] Mean delay (s) and error of a served query, Σ x·D / Σ x and Σ x·ē / Σ x; null when served is 0. */
  delayPerServedS: number | null;
  errorPerServed: number | null;
  /** [ours] The SLOs (Δ_i, ε_i) that the per-served-query means exceed; empty when within both or served is 0. */
  servedOverSlo: ('delay' | 'error')[];
}

/** Below this served share a type counts as not served (plan.json's routing lists fractions above it only). */
export const SERVED_EPS = 1e-9;

export interface Evaluation {
  objective: number;
  costBreakdown: CostBreakdown;
  feasible: boolean;
  violations: Violation[];
  perType: TypeReport[];
  gpusByTier: Record<string, number>;
  budgetUsedUsd: number;
  storageUsedGb: number;
}

export function emptyAllocation(c: Coefficients): Allocation {
  return {
    cfg: new Int32Array(c.J * c.K).fill(-1),
    x: new Float64Array(c.I * c.J * c.K),
    z: new Uint8Array(c.I * c.J * c.K),
    u: new Float64Array(c.I).fill(1),
  };
}

const TOL = 1e-6;

/** Objective (8a) split into C1..C5 and feasibility of (8b)–(8k) + u ≤ ζ, with named violations. */
export function evaluate(c: Coefficients, a: Allocation): Evaluation {
  const { I, J, K, p } = c;
  const bd: CostBreakdown = { gpuRental: 0, modelStorage: 0, dataStorage: 0, delayPenalty: 0, unmetPenalty: 0 };
  const v: Violation[] = [];
  const over = (family: ConstraintFamily, where: string, lhs: number, rhs: number) => {
    if (lhs > rhs + TOL * Math.max(1, Math.abs(rhs))) v.push({ family, where, excess: lhs - rhs });
  };
  const gpusByTier: Record<string, number> = {};
  for (let j = 0; j < J; j++) {
    for (let k = 0; k < K; k++) {
      const pr = j * K + k;
      const cf = a.cfg[pr]!;
      if (cf < 0) continue;
      const g = c.configs[cf]!.gpus;
      bd.gpuRental += c.rentalPerGpu[pr]! * g;
      const tn = p.tiers[k]!.name;
      gpusByTier[tn] = (Object.hasOwn(gpusByTier, tn) ? gpusByTier[tn]! : 0) + g;
    }
  }
  let storageGlobal = 0;
  const storageType = new Float64Array(I), storagePair = new Float64Array(J * K);
  const perType: TypeReport[] = [];
  for (let i = 0; i < I; i++) {
    let served = 0, delay = 0, err = 0;
    for (let j = 0; j < J; j++) {
      for (let k = 0; k < K; k++) {
        const t = (i * J + j) * K + k, pr = j * K + k;
        const x = a.x[t]!;
        if (x < -TOL) v.push({ family: 'balance', where: `x[${p.types[i]!.name},${p.models[j]!.name},${p.tiers[k]!.name}]`, excess: -x });
        if (a.z[t]) {
          bd.modelStorage += c.modelStorageCost[t]!;
          if (a.cfg[pr]! < 0) v.push({ family: 'admission', where: `z on undeployed pair ${p.models[j]!.name}@${p.tiers[k]!.name}`, excess: 1 });
        }
        const sGb = (a.z[t] ? p.models[j]!.weightsGb : 0) + c.dataGb[t]! * x;
        storageGlobal += sGb; storageType[i] += sGb; storagePair[pr] += sGb;
        if (x <= 0) continue;
        if (!a.z[t] || a.cfg[pr]! < 0) v.push({ family: 'admission', where: `x>0 without z/q at ${p.types[i]!.name}→${p.models[j]!.name}@${p.tiers[k]!.name}`, excess: x });
        served += x;
        bd.dataStorage += c.dataStorageCost[t]! * x;
        if (a.cfg[pr]! >= 0) {
          const d = delayOf(c, t, i, a.cfg[pr]!);
          delay += d * x;
        }
        err += c.ebar[t]! * x;
      }
    }
    const u = a.u[i]!;
    bd.delayPenalty += c.delayCostPerS[i]! * delay;
    bd.unmetPenalty += c.unmetCost[i]! * u;
    const ty = p.types[i]!;
    if (Math.abs(served + u - 1) > TOL) v.push({ family: 'balance', where: `type ${ty.name}: served ${served.toFixed(6)} + unserved ${u.toFixed(6)} ≠ 1`, excess: Math.abs(served + u - 1) });
    over('unserved-cap', `type ${ty.name} unserved`, u, ty.unservedCap);
    over('delay', `type ${ty.name} delay (s)`, delay, ty.delaySloS);
    over('error', `type ${ty.name} error`, err, ty.errorSlo);
    const any = served > SERVED_EPS;
    const delayPerServedS = any ? delay / served : null, errorPerServed = any ? err / served : null;
    const exceeds = (v: number | null, slo: number) => v !== null && v > slo + TOL * Math.max(1, Math.abs(slo));
    perType.push({
      type: ty.name, served, unserved: u, delayS: any ? delay : null, delaySloS: ty.delaySloS, delaySlackS: ty.delaySloS - delay,
      error: any ? err : null, errorSlo: ty.errorSlo, errorSlack: ty.errorSlo - err, delayPerServedS, errorPerServed,
      servedOverSlo: [...(exceeds(delayPerServedS, ty.delaySloS) ? ['delay' as const] : []), ...(exceeds(errorPerServed, ty.errorSlo) ? ['error' as const] : [])],
    });
  }
  for (let j = 0; j < J; j++) {
    for (let k = 0; k < K; k++) {
      const pr = j * K + k;
      const cf = a.cfg[pr]!;
      if (cf < 0) continue;
      let mem = weightsPerGpu(c, pr, cf), load = 0;
      for (let i = 0; i < I; i++) {
        const t = (i * J + j) * K + k;
        const x = a.x[t]!;
        if (x <= 0) continue;
        mem += kvPerGpu(c, t, i, j, k, cf) * x;
        load += c.computeLoad[t]! * x;
      }
      const nm = `${p.models[j]!.name}@${p.tiers[k]!.name}`;
      over('memory', `${nm} GB per GPU`, mem, p.tiers[k]!.memoryGb);
      over('compute', `${nm} TFLOP/h`, load, c.gpuTflopPerHour[pr]! * c.configs[cf]!.gpus);
    }
  }
  const budgetUsed = bd.gpuRental + bd.modelStorage + bd.dataStorage;
  over('budget', 'C1+C2+C3 (USD)', budgetUsed, p.budgetUsd);
  const scope = p.options.storageScope;
  if (scope === 'global') over('storage', 'global storage (GB)', storageGlobal, p.storageCapGb);
  else if (scope === 'per-type') storageType.forEach((s, i) => over('storage', `type ${p.types[i]!.name} storage (GB)`, s, p.storageCapGb));
  else storagePair.forEach((s, pr) => over('storage', `pair ${p.models[Math.floor(pr / K)]!.name}@${p.tiers[pr % K]!.name} storage (GB)`, s, p.storageCapGb));
  const objective = bd.gpuRental + bd.modelStorage + bd.dataStorage + bd.delayPenalty + bd.unmetPenalty;
  return { objective, costBreakdown: bd, feasible: v.length === 0, violations: v, perType, gpusByTier, budgetUsedUsd: budgetUsed, storageUsedGb: storageGlobal };
}
