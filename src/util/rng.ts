import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
type RandomGenerator = ReturnType<typeof xoroshiro128plus>;

/**
 * The one seeded randomness source of a run. Subsystems take a named fork (`rng.fork('router')`), so a
 * new draw in one subsystem never shifts the stream of another (STYLE.md, "Determinism").
 */
export class Rng {
  private readonly gen: RandomGenerator;
  constructor(readonly seed: number) {
    this.gen = xoroshiro128plus(seed | 0);
  }

  /** An independent stream whose seed depends only on this seed and the name. */
  fork(name: string): Rng {
    return new Rng(hash32(`${this.seed}/${name}`));
  }

  /** Uniform in [0, 1). */
  next(): number {
    return uniformFloat64(this.gen);
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Exponential with the given rate (mean 1/rate). */
  exponential(rate: number): number {
    return -Math.log(1 - this.next()) / rate;
  }

  /** Standard normal (Box–Muller; one value per call, the pair's second half is discarded for simplicity). */
  normal(mean = 0, sd = 1): number {
    const u = 1 - this.next();
    const v = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Gamma(shape k, scale θ) by Marsaglia–Tsang; k < 1 uses the boost Γ(k) = Γ(k+1)·U^(1/k). */
  gamma(shape: number, scale: number): number {
    // An infinite shape makes the acceptance test NaN (d − d·v = ∞ − ∞): the loop would never return.
    if (!(shape > 0 && shape < Infinity)) throw new RangeError(`gamma: expected a finite shape > 0, got ${shape}`);
    if (shape < 1) return this.gamma(shape + 1, scale) * Math.pow(1 - this.next(), 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = this.normal();
      const v0 = 1 + c * x;
      if (v0 <= 0) continue;
      const v = v0 * v0 * v0;
      const u = 1 - this.next();
      if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v * scale;
    }
  }

  lognormal(mu: number, sigma: number): number {
    return Math.exp(this.normal(mu, sigma));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** FNV-1a, 32-bit: a stable string hash for fork seeds. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
