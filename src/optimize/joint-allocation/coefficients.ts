import type { Problem } from './problem.ts';

/**
 * Precomputed coefficients of 𝒫_DM (digest §2.2–2.7), flat arrays indexed by
 * t = (i·J + j)·K + k for (type, model, tier) and p = j·K + k for a (model, tier) pair.
 * One source of truth for the MILP builder, the evaluator, GH/AGH and Stage-2.
 */
export interface Config {
  tp: number;
  pp: number;
  gpus: number;
}

export interface Coefficients {
  I: number;
  J: number;
  K: number;
  configs: Config[];
  /** d^comp (s/token at TP 1) per t. */
  dcomp: Float64Array;
  /** d^comm (s/token per PP stage) per t. */
  dcomm: Float64Array;
  /** ē = μ_k e^base per t. */
  ebar: Float64Array;
  /** λ_i used (queries/hour). */
  lambda: Float64Array;
  /** r_i = h_i + f_i. */
  tokens: Float64Array;
  outTokens: Float64Array;
  /** Effective weights (GB) per pair: B_j, or ν_k B_j with `quantizedWeights`. */
  weightsGb: Float64Array;
  /** Compute capacity per GPU per pair: η · 3600 · P_k (TFLOP/h). */
  gpuTflopPerHour: Float64Array;
  /** Compute load per unit x per t: α r λ / 1e3 (TFLOP/h). */
  computeLoad: Float64Array;
  /** Storage footprint per unit x per t: θ r λ (GB, paper's reading, digest §2.7). */
  dataGb: Float64Array;
  /** Cost coefficients over the horizon. */
  rentalPerGpu: Float64Array; // per pair: Δ_T p_k
  modelStorageCost: Float64Array; // per t: Δ_T p^s B_j
  dataStorageCost: Float64Array; // per t: Δ_T p^s θ r λ
  unmetCost: Float64Array; // per i: Δ_T φ_i
  /** ρ_i · msPerS ($ per second of traffic-weighted delay). */
  delayCostPerS: Float64Array;
  p: Problem;
}

export function configsOf(p: Problem): Config[] {
  const out: Config[] = [];
  for (const tp of p.tpDegrees) for (const pp of p.ppDepths) out.push({ tp, pp, gpus: tp * pp });
  return out;
}

/** Optional scenario overrides (Stage-2 perturbations, demand multipliers). */
export interface CoefOverrides {
  lambda?: ArrayLike<number>;
  /** Multipliers per t on d^comp and d^comm. */
  delayScale?: ArrayLike<number>;
  /** Multipliers per t on ē. */
  errorScale?: ArrayLike<number>;
}

export function buildCoefficients(p: Problem, ov: CoefOverrides = {}): Coefficients {
  const I = p.types.length, J = p.models.length, K = p.tiers.length;
  const N = I * J * K;
  const dcomp = new Float64Array(N), dcomm = new Float64Array(N), ebar = new Float64Array(N);
  const computeLoad = new Float64Array(N), dataGb = new Float64Array(N);
  const modelStorageCost = new Float64Array(N), dataStorageCost = new Float64Array(N);
  const lambda = Float64Array.from(p.types.map((t, i) => (ov.lambda ? ov.lambda[i]! : t.arrivalsPerHour)));
  const tokens = Float64Array.from(p.types.map((t) => t.inputTokens + t.outputTokens));
  const outTokens = Float64Array.from(p.types.map((t) => t.outputTokens));
  const weightsGb = new Float64Array(J * K), gpuTflopPerHour = new Float64Array(J * K), rentalPerGpu = new Float64Array(J * K);
  const T = p.horizonHours, ps = p.storagePriceUsdPerGbHour;
  for (let j = 0; j < J; j++) {
    for (let k = 0; k < K; k++) {
      const tier = p.tiers[k]!;
      weightsGb[j * K + k] = p.options.quantizedWeights ? tier.latencyScale * p.models[j]!.weightsGb : p.models[j]!.weightsGb;
      gpuTflopPerHour[j * K + k] = p.eta * 3600 * tier.tflops;
      rentalPerGpu[j * K + k] = T * tier.priceUsdPerHour;
    }
  }
  for (let i = 0; i < I; i++) {
    const ty = p.types[i]!;
    for (let j = 0; j < J; j++) {
      const m = p.models[j]!;
      const alpha = m.gflopPerToken ?? m.weightsGb; // [A] 2 FLOP per parameter, B_j = 2 bytes/param ⇒ α = B_j GFLOP/token
      for (let k = 0; k < K; k++) {
        const tier = p.tiers[k]!;
        const t = (i * J + j) * K + k;
        const ds = ov.delayScale ? ov.delayScale[t]! : 1;
        dcomp[t] = ds * (ty.delayOverhead * m.weightsGb * tier.latencyScale) / tier.bandwidthGbPerS;
        dcomm[t] = ds * ((m.activationKbPerToken * 1e-6) / tier.linkGbPerS + tier.hopLatencyS);
        ebar[t] = (ov.errorScale ? ov.errorScale[t]! : 1) * tier.errorScale * m.baseError[ty.name]!;
        computeLoad[t] = (alpha * tokens[i]! * lambda[i]!) / 1e3;
        dataGb[t] = ty.storageKbPerToken * 1e-6 * tokens[i]! * lambda[i]!;
        modelStorageCost[t] = T * ps * m.weightsGb;
        dataStorageCost[t] = T * ps * dataGb[t]!;
      }
    }
  }
  return {
    I, J, K, configs: configsOf(p), dcomp, dcomm, ebar, lambda, tokens, outTokens, weightsGb, gpuTflopPerHour,
    computeLoad, dataGb, rentalPerGpu, modelStorageCost, dataStorageCost,
    unmetCost: Float64Array.from(p.types.map((t) => T * t.unmetPenaltyUsdPerHour)),
    delayCostPerS: Float64Array.from(p.types.map((t) => t.delayPenaltyUsdPerMsQuery * p.options.msPerS)),
    p,
  };
}

/** D_{i,j}^k(n,m) = d^comp r_i / n + m d^comm f_i (digest §2.4). */
export function delayOf(c: Coefficients, t: number, i: number, cfg: number): number {
  const cf = c.configs[cfg]!;
  return (c.dcomp[t]! * c.tokens[i]!) / cf.tp + cf.pp * c.dcomm[t]! * c.outTokens[i]!;
}

/** Weights per GPU of a pair under a config (GB). */
export function weightsPerGpu(c: Coefficients, pair: number, cfg: number): number {
  return c.weightsGb[pair]! / c.configs[cfg]!.gpus;
}

/**
 * KV-cache GB per GPU per unit routing fraction (the v-coefficient of (8f)).
 * 'paper': (β_j/(nm)) r_i T^res with T^res = r_i β_j / BW_k (β in GB/token) — tiny, as the digest notes.
 * 'little': Little's law occupancy (λ_i/3600) · D · r_i · β_j / (nm).
 */
export function kvPerGpu(c: Coefficients, t: number, i: number, j: number, k: number, cfg: number): number {
  const beta = c.p.models[j]!.kvKbPerToken * 1e-6;
  const g = c.configs[cfg]!.gpus;
  if (c.p.options.kvMode === 'paper') {
    const tres = (c.tokens[i]! * beta) / c.p.tiers[k]!.bandwidthGbPerS;
    return (beta * c.tokens[i]! * tres) / g;
  }
  return ((c.lambda[i]! / 3600) * delayOf(c, t, i, cfg) * c.tokens[i]! * beta) / g;
}
