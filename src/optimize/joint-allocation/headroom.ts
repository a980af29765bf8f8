import { UserError } from '../../util/errors.ts';
import { delayOf, type Coefficients } from './coefficients.ts';

/**
 * [ours] Planning with headroom (issue 4). The paper calls its Stage-1 plans "headroom-aware" but its model
 * 𝒫_DM has no term that pays for spare capacity, so the cost-minimal plan has none. Here Stage 1 may plan
 * against inflated coefficients — every λ_i × (1 + demand), every d^comp, d^comm and ē × (1 + slo), capped per
 * type by `sloFactors` — and the deployment (cfg, z) it returns is then fixed and scored on the nominal
 * coefficients (routing re-optimised) and on the un-inflated problem's Stage-2 scenarios. demand = slo = 0 is the plain model.
 * Study default: 0.2 / 0.25 = the upper edge of the paper's Stage-2 perturbation (λ ± 20 %, delay/error
 * up to +25 %).
 */
export interface Headroom {
  /** Relative demand inflation d (λ × (1 + d)). */
  demand: number;
  /** Relative delay and error inflation s (d^comp, d^comm, ē × (1 + s)). */
  slo: number;
}

export const STUDY_HEADROOM: Headroom = { demand: 0.2, slo: 0.25 };

/** "demand +20 %, delay/error +25 %" for messages. */
export function describeHeadroom(h: Headroom): string {
  return `demand +${+(h.demand * 100).toFixed(4)} %, delay/error +${+(h.slo * 100).toFixed(4)} %`;
}

export function isNoHeadroom(h: Headroom | undefined): boolean {
  return !h || (h.demand === 0 && h.slo === 0);
}

/**
 * The largest demand or delay/error inflation (+10,000 %). Beyond any use, and it keeps the inflated coefficients
 * finite: `--headroom 1e308,0` made λ × (1 + d) = Infinity, and the MILP, LPR and HF ended in "HiGHS could not load
 * the model … |coefficient| Infinity in row budget", naming no flag.
 */
export const MAX_HEADROOM = 100;

/** Checks a headroom (finite, in [0, MAX_HEADROOM]); `what` names the flag or field in the error. */
export function checkHeadroom(h: Headroom, what = 'headroom'): Headroom {
  for (const [k, v] of Object.entries(h)) {
    if (!Number.isFinite(v) || v < 0 || v > MAX_HEADROOM) throw new UserError(`${what}: ${k} must be a finite number ≥ 0 and ≤ ${MAX_HEADROOM}, got ${String(v)}`);
  }
  return h;
}

/** Parses "d,s" (e.g. "0.2,0.25") as a flag value; UserError names the flag. */
export function parseHeadroom(flag: string, v: string): Headroom {
  const parts = v.split(',').map((s) => s.trim());
  const nums = parts.map(Number);
  if (parts.length !== 2 || parts.some((s) => s === '') || nums.some((n) => !Number.isFinite(n) || n < 0 || n > MAX_HEADROOM)) {
    throw new UserError(`--${flag}: expected d,s (demand and delay/error inflation, two numbers in [0, ${MAX_HEADROOM}], e.g. 0.2,0.25), got ${JSON.stringify(v)}`);
  }
  return { demand: nums[0]!, slo: nums[1]! };
}

/**
 * Per type, how far its delay and error coefficients are inflated: 1 + slo, but never past the point where no
 * candidate (model, tier, TP×PP config that holds the weights) still meets the type's error and delay SLO —
 * inflating further would only make Stage 1 give the type up, a plan no nominal re-routing can repair.
 * A type no candidate serves even nominally keeps factor 1.
 */
export function sloFactors(c: Coefficients, slo: number): Float64Array {
  const f = new Float64Array(c.I).fill(1);
  if (slo === 0) return f;
  const JK = c.J * c.K;
  for (let i = 0; i < c.I; i++) {
    const ty = c.p.types[i]!;
    let best = 0;
    for (let pr = 0; pr < JK; pr++) {
      const t = i * JK + pr;
      const errSlack = c.ebar[t]! > 0 ? ty.errorSlo / c.ebar[t]! : Infinity;
      if (errSlack <= best) continue;
      for (let cf = 0; cf < c.configs.length; cf++) {
        if (c.weightsGb[pr]! / c.configs[cf]!.gpus > c.p.tiers[pr % c.K]!.memoryGb) continue;
        best = Math.max(best, Math.min(errSlack, ty.delaySloS / delayOf(c, t, i, cf)));
      }
    }
    // A hair below the limit, so the best candidate still passes the solvers' ≤ checks after rounding.
    f[i] = best <= 1 ? 1 : Math.min(1 + slo, best * (1 - 1e-9));
  }
  return f;
}

/**
 * Coefficients inflated by a headroom, on top of whatever `c` was built with (so a forecast λ or a
 * scenario's multipliers stay in): the λ-proportional arrays (λ, compute load, data GB, data storage cost)
 * × (1 + demand); d^comp, d^comm, ē × the type's `sloFactors` (1 + slo where some candidate stays
 * within the SLOs). No headroom returns `c` itself.
 */
export function withHeadroom(c: Coefficients, h: Headroom): Coefficients {
  checkHeadroom(h);
  if (isNoHeadroom(h)) return c;
  const fd = 1 + h.demand;
  const fs = sloFactors(c, h.slo);
  const JK = c.J * c.K;
  const byDemand = (a: Float64Array) => a.map((v) => v * fd);
  const byType = (a: Float64Array) => a.map((v, t) => v * fs[Math.floor(t / JK)]!);
  return {
    ...c,
    lambda: byDemand(c.lambda),
    computeLoad: byDemand(c.computeLoad),
    dataGb: byDemand(c.dataGb),
    dataStorageCost: byDemand(c.dataStorageCost),
    dcomp: byType(c.dcomp),
    dcomm: byType(c.dcomm),
    ebar: byType(c.ebar),
  };
}
