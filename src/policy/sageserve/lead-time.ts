import type { z } from 'zod';
import type { leadTimeSchema } from '../../scenario/schema.ts';
import type { Rng } from '../../util/rng.ts';

/** `fleet.spot.sameModelS` / `otherModelS`: fixed seconds, or `{ median, max, sigma? }`. */
export type LeadTime = z.output<typeof leadTimeSchema>;

/** The standard normal's 99th percentile: with the default σ, `max` is the untruncated p99. */
export const Z99 = 2.3263478740408408;

/**
 * σ of the lognormal behind a lead-time distribution: the given one, else ln(max / median) / z₀.₉₉. The paper
 * (digest §2.1, §2.3) gives only the median (1 min) and the maximum (5 min) of the spot ↔ internal move; a
 * lognormal is the usual shape for a positive, right-skewed delay, and reading its maximum as the 99th
 * percentile of the many moves measured gives σ = ln 5 / 2.326 = 0.692 for 60 s / 300 s.
 */
export function leadTimeSigma(d: { median: number; max: number; sigma?: number | undefined }): number {
  return d.sigma ?? Math.log(d.max / d.median) / Z99;
}

/**
 * One lead time in seconds. A number is returned as is (no draw, so fixed scenarios keep their random streams);
 * a distribution draws exp(N(ln median, σ)) from `rng` and draws again while the value is above `max`
 * (a truncated lognormal: never above `max`; at least half of the draws are accepted since max ≥ median).
 * With the default σ the truncated median is 60 × e^(σ·Φ⁻¹(0.495)) = 59.5 s for 60 / 300, the mean 73.1 s.
 */
export function sampleLeadTime(spec: LeadTime, rng: Rng): number {
  if (typeof spec === 'number') return spec;
  const mu = Math.log(spec.median);
  const sigma = leadTimeSigma(spec);
  for (;;) {
    const x = rng.lognormal(mu, sigma);
    if (x <= spec.max) return x;
  }
}
