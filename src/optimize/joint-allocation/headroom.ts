import { UserError } from '../../util/errors.ts';
import { buildCoefficients, type Coefficients, type CoefOverrides } from './coefficients.ts';
import type { Problem } from './problem.ts';

/**
 * [ours] Planning with headroom (issue 4). The paper calls its Stage-1 plans "headroom-aware" but its model
 * 𝒫_DM has no term that pays for spare capacity, so the cost-minimal plan has none. Here Stage 1 may plan
 * against inflated coefficients — every λ_i × (1 + demand), every d^comp, d^comm and ē × (1 + slo) — and the
 * deployment (cfg, z) it returns is then fixed and scored on the nominal coefficients (routing re-optimised)
 * and on the un-inflated problem's Stage-2 scenarios. demand = slo = 0 is the plain model.
 * Study default: 0.2 / 0.25 = the upper edge of the paper's Stage-2 perturbation (λ ± 20 %, delay/error
 * up to +25 %).
 */
export interface Headroom {
  /** Relative demand inflation d (λ × (1 + d)). */
  demand: number;
  /** Relative delay and error inflation s (d^comp, d^comm, ē × (1 + s)). */
  slo: number;
}

export const NO_HEADROOM: Headroom = { demand: 0, slo: 0 };
export const STUDY_HEADROOM: Headroom = { demand: 0.2, slo: 0.25 };

export function isNoHeadroom(h: Headroom | undefined): boolean {
  return !h || (h.demand === 0 && h.slo === 0);
}

/** Checks a headroom (finite, ≥ 0); `what` names the flag or field in the error. */
export function checkHeadroom(h: Headroom, what = 'headroom'): Headroom {
  for (const [k, v] of Object.entries(h)) {
    if (!Number.isFinite(v) || v < 0) throw new UserError(`${what}: ${k} must be a finite number ≥ 0, got ${String(v)}`);
  }
  return h;
}

/** Parses "d,s" (e.g. "0.2,0.25") as a flag value; UserError names the flag. */
export function parseHeadroom(flag: string, v: string): Headroom {
  const parts = v.split(',').map((s) => s.trim());
  const nums = parts.map(Number);
  if (parts.length !== 2 || parts.some((s) => s === '') || nums.some((n) => !Number.isFinite(n) || n < 0)) {
    throw new UserError(`--${flag}: expected d,s (demand and delay/error inflation, two numbers ≥ 0, e.g. 0.2,0.25), got ${JSON.stringify(v)}`);
  }
  return { demand: nums[0]!, slo: nums[1]! };
}

/** The headroom as `CoefOverrides` of a problem's nominal coefficients. */
export function headroomOverrides(p: Problem, h: Headroom): CoefOverrides {
  checkHeadroom(h);
  const N = p.types.length * p.models.length * p.tiers.length;
  return {
    lambda: p.types.map((t) => t.arrivalsPerHour * (1 + h.demand)),
    delayScale: new Float64Array(N).fill(1 + h.slo),
    errorScale: new Float64Array(N).fill(1 + h.slo),
  };
}

/**
 * Coefficients inflated by a headroom, on top of whatever `c` was built with (so a forecast λ or a
 * scenario's multipliers stay in): the λ-proportional arrays (λ, compute load, data GB, data storage cost)
 * × (1 + demand), d^comp, d^comm, ē × (1 + slo). For nominal `c` this equals
 * `buildCoefficients(c.p, headroomOverrides(c.p, h))` up to rounding (tested). No headroom returns `c` itself.
 */
export function withHeadroom(c: Coefficients, h: Headroom): Coefficients {
  checkHeadroom(h);
  if (isNoHeadroom(h)) return c;
  const fd = 1 + h.demand, fs = 1 + h.slo;
  const scale = (a: Float64Array, f: number) => a.map((v) => v * f);
  return {
    ...c,
    lambda: scale(c.lambda, fd),
    computeLoad: scale(c.computeLoad, fd),
    dataGb: scale(c.dataGb, fd),
    dataStorageCost: scale(c.dataStorageCost, fd),
    dcomp: scale(c.dcomp, fs),
    dcomm: scale(c.dcomm, fs),
    ebar: scale(c.ebar, fs),
  };
}

/** Nominal coefficients of a problem with the headroom applied (convenience for `buildCoefficients`). */
export function headroomCoefficients(p: Problem, h: Headroom): Coefficients {
  return isNoHeadroom(h) ? buildCoefficients(p) : buildCoefficients(p, headroomOverrides(p, h));
}
