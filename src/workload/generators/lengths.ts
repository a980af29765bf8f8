import { UserError } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import type { RequestSource } from '../types.ts';
import { MAX_TRACE_TOKENS } from '../fields.ts';

/** One side (input or output) of a lognormal length model: round(exp(N(mu, sigma))) clamped to [min, max]. */
export interface LognormalSide {
  mu: number;
  sigma: number;
  min: number;
  max: number;
}

/** (input, output) pairs kept together, so the sampled pairs keep the trace's correlation. */
export interface EmpiricalLengths {
  inputs: Int32Array;
  outputs: Int32Array;
}

export type LengthModel =
  | { kind: 'lognormal'; input: LognormalSide; output: LognormalSide }
  | { kind: 'empirical'; pairs: EmpiricalLengths };

/** Writes inputTokens / outputTokens of `out` from one draw; one draw per side (lognormal) or one (empirical). */
export type LengthSampler = (rng: Rng, out: { inputTokens: number; outputTokens: number }) => void;

export function lengthSampler(model: LengthModel): LengthSampler {
  if (model.kind === 'empirical') {
    const { inputs, outputs } = model.pairs;
    const n = inputs.length;
    if (n === 0) throw new UserError('empirical lengths: expected at least one (input, output) pair');
    return (rng, out) => {
      const i = rng.int(n);
      out.inputTokens = inputs[i]!;
      out.outputTokens = outputs[i]!;
    };
  }
  const a = checkSide(model.input, 'input');
  const b = checkSide(model.output, 'output');
  return (rng, out) => {
    out.inputTokens = drawSide(rng, a);
    out.outputTokens = drawSide(rng, b);
  };
}

function checkSide(s: LognormalSide, name: string): LognormalSide {
  // max ≤ MAX_TRACE_TOKENS: every draw is clamped to it, so none can pass the 32-bit integers the request log stores.
  const ok = Number.isFinite(s.mu) && s.sigma >= 0 && Number.isInteger(s.min) && s.min >= 1 && s.max >= s.min && s.max <= MAX_TRACE_TOKENS;
  if (!ok) throw new UserError(`lognormal ${name} lengths: expected finite mu, sigma ≥ 0, integer min ≥ 1, min ≤ max ≤ 1e9, got ${JSON.stringify(s)}`);
  return s;
}

function drawSide(rng: Rng, s: LognormalSide): number {
  const v = Math.round(rng.lognormal(s.mu, s.sigma));
  return v < s.min ? s.min : v > s.max ? Math.floor(s.max) : v;
}

/**
 * Keeps a source's (input, output) pairs for empirical sampling. Beyond `maxPairs` (default 1,000,000, 8 MB)
 * it keeps a uniform reservoir sample (Vitter's algorithm R) drawn from `rng` (default seed 0).
 */
export function fitEmpirical(src: RequestSource, opts: { maxPairs?: number; rng?: Rng } = {}): EmpiricalLengths {
  const cap = opts.maxPairs ?? 1_000_000;
  if (!(Number.isInteger(cap) && cap >= 1)) throw new UserError(`fitEmpirical: expected maxPairs an integer ≥ 1, got ${cap}`);
  const rng = opts.rng ?? new Rng(0);
  let inputs = new Int32Array(Math.min(cap, 1024));
  let outputs = new Int32Array(inputs.length);
  let seen = 0;
  for (const r of src) {
    let slot = seen;
    if (seen >= cap) {
      slot = Math.floor(rng.next() * (seen + 1));
      if (slot >= cap) {
        seen++;
        continue;
      }
    } else if (seen === inputs.length) {
      const n = Math.min(cap, inputs.length * 2);
      const i2 = new Int32Array(n);
      const o2 = new Int32Array(n);
      i2.set(inputs);
      o2.set(outputs);
      inputs = i2;
      outputs = o2;
    }
    inputs[slot] = r.inputTokens;
    outputs[slot] = r.outputTokens;
    seen++;
  }
  if (seen === 0) throw new UserError('fitEmpirical: the source has no requests');
  const n = Math.min(seen, cap);
  return { inputs: inputs.slice(0, n), outputs: outputs.slice(0, n) };
}

/**
 * Maximum-likelihood lognormal per side: mu and sigma are the mean and (population) standard deviation of
 * ln(tokens) (Welford's one-pass update); min and max are the observed extremes, used as clamps.
 */
export function fitLognormal(src: RequestSource): { input: LognormalSide; output: LognormalSide } {
  const a = new Welford();
  const b = new Welford();
  for (const r of src) {
    a.add(r.inputTokens);
    b.add(r.outputTokens);
  }
  if (a.n === 0) throw new UserError('fitLognormal: the source has no requests');
  return { input: a.side(), output: b.side() };
}

class Welford {
  n = 0;
  private mean = 0;
  private m2 = 0;
  private lo = Infinity;
  private hi = -Infinity;
  add(x: number): void {
    const l = Math.log(x);
    this.n++;
    const d = l - this.mean;
    this.mean += d / this.n;
    this.m2 += d * (l - this.mean);
    if (x < this.lo) this.lo = x;
    if (x > this.hi) this.hi = x;
  }
  side(): LognormalSide {
    return { mu: this.mean, sigma: Math.sqrt(this.m2 / this.n), min: this.lo, max: this.hi };
  }
}
