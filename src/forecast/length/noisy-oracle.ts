import { Rng, hash32 } from '../../util/rng.ts';
import { clampTokens, MAX_OUTPUT_TOKENS, type LengthPredictor } from './types.ts';

export interface NoisyOracleOptions {
  seed: number;
  /** Share of "good" predictions whose |error| ~ Exponential(mean smallMean). */
  pSmall: number;
  smallMean: number;
  /** Mean |error| of the rest. */
  largeMean: number;
  /** Added to every prediction before clamping (negative = under-predict). */
  biasTokens: number;
  /**
   * Relative errors ρ ("error proportions", as PreServe's RQ2 drew them from its predictor's test errors, which are
   * not published): when given, a request's prediction is D · (1 + ρ) with ρ drawn from this list, instead of the
   * absolute mixture. Each ρ > −1.
   */
  relativeErrors?: readonly number[];
}

/**
 * Fitted to PreServe's Table (§3.2): MAE 78.25, Acc-25/50/100 = 56.77 / 68.79 / 77.95 %. The mixture
 * 0.61·Exp(13.7) + 0.39·Exp(179) of |error| gives, in closed form with integer rounding, MAE 78.2 and
 * 56.7 / 69.1 / 77.7 % (least squares over p ∈ [0.55, 0.66], means on a 0.1/1-token grid).
 */
export const PRESERVE_ERROR: Omit<NoisyOracleOptions, 'seed'> = { pSmall: 0.61, smallMean: 13.7, largeMean: 179, biasTokens: 0 };

/**
 * Oracle + calibrated error. The error's size |e| is drawn from the mixture; its sign is random, except that
 * when D − |e| would fall below 1 token (or D + |e| above the cap) the other sign is used, so clamping does
 * not shrink errors on short outputs and the accuracy table holds whatever the length mix (the sign is then
 * biased upward for short outputs: recorded in docs/fidelity/forecast.md). Draws depend only on the seed
 * and the request id, so a request gets the same prediction whenever and however often it is asked.
 */
export function noisyOracleLength(opts: Partial<NoisyOracleOptions> = {}): LengthPredictor {
  const o = { seed: 1, ...PRESERVE_ERROR, ...opts };
  if (o.relativeErrors !== undefined) return relativeNoisyOracle(o.seed, o.relativeErrors, o.biasTokens);
  // P(|e| ≤ spread) = 0.8, so [D̂ − spread, D̂ + spread] is an 80% interval (≈ 119 tokens for PreServe's mix).
  const spread = absErrorQuantile(o, 0.8);
  return {
    name: 'noisy-oracle',
    predict(r) {
      const rng = new Rng(hash32(`${o.seed}/length/${r.id}`));
      const mean = rng.next() < o.pSmall ? o.smallMean : o.largeMean;
      const size = rng.exponential(1 / mean);
      let sign = rng.next() < 0.5 ? -1 : 1;
      const d = r.outputTokens;
      if (sign < 0 && d - size < 1) sign = 1;
      else if (sign > 0 && d + size > MAX_OUTPUT_TOKENS && d - size >= 1) sign = -1;
      const point = clampTokens(d + sign * size + o.biasTokens);
      return { point, p10: clampTokens(point - spread), p50: point, p90: clampTokens(point + spread) };
    },
    observe: () => {},
  };
}

/**
 * The relative variant: D̂ = D · (1 + ρ) + bias, ρ drawn uniformly from `errors` per request (same seed and id,
 * same draw). The 80 % interval is ± the 80th percentile of |ρ| around the point.
 */
function relativeNoisyOracle(seed: number, errors: readonly number[], biasTokens: number): LengthPredictor {
  if (errors.length === 0 || errors.some((e) => !(e > -1) || !Number.isFinite(e))) throw new RangeError('relativeErrors: expected finite errors > −1');
  const abs = errors.map(Math.abs).sort((a, b) => a - b);
  const spread = abs[Math.min(abs.length - 1, Math.floor(0.8 * abs.length))]!;
  return {
    name: 'noisy-oracle',
    predict(r) {
      const rng = new Rng(hash32(`${seed}/length/${r.id}`));
      const rho = errors[Math.floor(rng.next() * errors.length)]!;
      const point = clampTokens(r.outputTokens * (1 + rho) + biasTokens);
      return { point, p10: clampTokens(point * (1 - spread)), p50: point, p90: clampTokens(point * (1 + spread)) };
    },
    observe: () => {},
  };
}

/** x with P(|e| ≤ x) = q under the mixture, by bisection. */
export function absErrorQuantile(o: Omit<NoisyOracleOptions, 'seed' | 'biasTokens'>, q: number): number {
  const cdf = (x: number) => o.pSmall * (1 - Math.exp(-x / o.smallMean)) + (1 - o.pSmall) * (1 - Math.exp(-x / o.largeMean));
  let lo = 0;
  let hi = 100 * Math.max(o.smallMean, o.largeMean);
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (cdf(mid) < q) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
