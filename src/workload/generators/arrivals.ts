import { UserError } from '../../util/errors.ts';
import type { Rng } from '../../util/rng.ts';

/**
 * Arrival processes. Each yields arrival times in seconds from 0, non-decreasing, forever; the caller stops.
 * - poisson: exponential gaps with mean 1/ratePerS.
 * - gamma: Gamma-distributed gaps with mean 1/ratePerS and coefficient of variation cv (shape k = 1/cv²,
 *   scale = cv²/ratePerS; cv = 1 is Poisson, cv > 1 burstier, cv < 1 more regular).
 * - curve: a non-homogeneous Poisson process λ(t) = base · (1 + A·cos(2π(h − peakHour)/24)) · w(day),
 *   h the hour of day, w = weekendFactor on Saturday and Sunday, 1 otherwise; t = 0 is `startHour` o'clock
 *   on `startDay` (0 = Monday). Drawn by thinning (Lewis & Shedler): candidates at λmax, each kept with
 *   probability λ(t)/λmax.
 * - table: λ(t) linear between points [tS, ratePerS] (flat before the first and after the last point),
 *   optionally repeating every periodS; also by thinning.
 */
export type ArrivalSpec =
  | { kind: 'poisson'; ratePerS: number }
  | { kind: 'gamma'; ratePerS: number; cv: number }
  | {
      kind: 'curve';
      baseRatePerS: number;
      diurnalAmplitude: number;
      peakHour: number;
      weekendFactor: number;
      startDay?: number;
      startHour?: number;
    }
  | { kind: 'table'; points: [number, number][]; periodS?: number };

const DAY_S = 86_400;

/**
 * The smallest gamma cv: the shape 1/cv² is then at most 10¹², where Marsaglia–Tsang's acceptance test (terms of
 * size shape · c·x cancelling to O(1)) still has about 10⁻⁴ of absolute precision; gaps spread by 10⁻⁶ of their mean
 * are evenly spaced arrivals for any fleet. Below it the sampler degrades, and at cv < 1e-154 the shape overflows to
 * Infinity and the sampler never returns.
 */
export const MIN_GAMMA_CV = 1e-6;
/** The largest gamma cv: a shape 1/cv² below 1/400 makes inter-arrival gaps underflow to 0 (endless arrivals at one instant). */
export const MAX_GAMMA_CV = 20;

/** The instantaneous rate λ(t) of a spec (constant for poisson and gamma). */
export function rateAt(spec: ArrivalSpec): (tS: number) => number {
  switch (spec.kind) {
    case 'poisson':
    case 'gamma': {
      const r = spec.ratePerS;
      return () => r;
    }
    case 'curve': {
      const { baseRatePerS: base, diurnalAmplitude: a, peakHour, weekendFactor } = spec;
      const startS = (spec.startDay ?? 0) * DAY_S + (spec.startHour ?? 0) * 3600;
      return (t) => {
        const abs = startS + t;
        const hour = (abs % DAY_S) / 3600;
        const weekday = Math.floor(abs / DAY_S) % 7;
        const w = weekday >= 5 ? weekendFactor : 1;
        return base * (1 + a * Math.cos((2 * Math.PI * (hour - peakHour)) / 24)) * w;
      };
    }
    case 'table': {
      const pts = spec.points;
      const period = spec.periodS;
      return (t0) => {
        const t = period === undefined ? t0 : t0 % period;
        if (t <= pts[0]![0]) return pts[0]![1];
        const last = pts[pts.length - 1]!;
        if (t >= last[0]) return last[1];
        let lo = 0;
        let hi = pts.length - 1;
        while (hi - lo > 1) {
          const mid = (lo + hi) >> 1;
          if (pts[mid]![0] <= t) lo = mid;
          else hi = mid;
        }
        const [ta, ra] = pts[lo]!;
        const [tb, rb] = pts[hi]!;
        return ra + ((rb - ra) * (t - ta)) / (tb - ta);
      };
    }
  }
}

/** The largest rate a spec reaches: the thinning envelope. */
export function maxRate(spec: ArrivalSpec): number {
  switch (spec.kind) {
    case 'poisson':
    case 'gamma':
      return spec.ratePerS;
    case 'curve':
      return spec.baseRatePerS * (1 + spec.diurnalAmplitude) * Math.max(1, spec.weekendFactor);
    case 'table':
      return Math.max(...spec.points.map((p) => p[1]));
  }
}

export function checkArrivals(spec: ArrivalSpec): void {
  const bad = (what: string) => new UserError(`arrivals (${spec.kind}): expected ${what}`);
  switch (spec.kind) {
    case 'poisson':
      if (!(spec.ratePerS > 0 && Number.isFinite(spec.ratePerS))) throw bad(`ratePerS > 0, got ${spec.ratePerS}`);
      return;
    case 'gamma':
      if (!(spec.ratePerS > 0 && Number.isFinite(spec.ratePerS))) throw bad(`ratePerS > 0, got ${spec.ratePerS}`);
      if (!(spec.cv >= MIN_GAMMA_CV && spec.cv <= MAX_GAMMA_CV)) throw bad(`cv in [${MIN_GAMMA_CV}, ${MAX_GAMMA_CV}], got ${spec.cv}`);
      return;
    case 'curve':
      if (!(spec.baseRatePerS > 0)) throw bad(`baseRatePerS > 0, got ${spec.baseRatePerS}`);
      if (!(spec.diurnalAmplitude >= 0 && spec.diurnalAmplitude <= 1)) throw bad(`diurnalAmplitude in [0, 1], got ${spec.diurnalAmplitude}`);
      if (!(spec.weekendFactor >= 0)) throw bad(`weekendFactor ≥ 0, got ${spec.weekendFactor}`);
      return;
    case 'table': {
      const p = spec.points;
      if (p.length === 0) throw bad('at least one point');
      for (let i = 0; i < p.length; i++) {
        if (!(p[i]![1] >= 0)) throw bad(`rates ≥ 0, got ${p[i]![1]} at point ${i}`);
        if (i > 0 && !(p[i]![0] > p[i - 1]![0])) throw bad(`point times increasing, got ${p[i]![0]} after ${p[i - 1]![0]}`);
      }
      if (!(maxRate(spec) > 0)) throw bad('some rate > 0');
      if (spec.periodS !== undefined && !(spec.periodS > 0)) throw bad(`periodS > 0, got ${spec.periodS}`);
      return;
    }
  }
}

/**
 * Arrival times from 0, forever, drawn from `rng` (the caller passes a dedicated fork). The thinned kinds
 * (curve, table) yield their first candidate at or past `untilS` as it is: a rate that stays 0 (a table
 * ending at 0, a weekend at factor 0) accepts no candidate, and without a horizon the caller's
 * `t ≥ durationS` check would never be reached. Times before `untilS` do not depend on it.
 */
export function* arrivalTimes(spec: ArrivalSpec, rng: Rng, untilS = Infinity): Generator<number, never, undefined> {
  checkArrivals(spec);
  let t = 0;
  switch (spec.kind) {
    case 'poisson': {
      const rate = spec.ratePerS;
      for (;;) {
        t += rng.exponential(rate);
        yield t;
      }
    }
    case 'gamma': {
      const shape = 1 / (spec.cv * spec.cv);
      const scale = 1 / (spec.ratePerS * shape);
      for (;;) {
        t += rng.gamma(shape, scale);
        yield t;
      }
    }
    default: {
      const rate = rateAt(spec);
      const lmax = maxRate(spec);
      for (;;) {
        t += rng.exponential(lmax);
        if (t >= untilS || rng.next() * lmax < rate(t)) yield t;
      }
    }
  }
}
