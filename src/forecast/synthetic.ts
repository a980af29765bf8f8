import { Rng } from '../util/rng.ts';

export interface SyntheticOptions {
  points: number;
  stepS: number;
  /** Mean level (e.g. requests/s). */
  base: number;
  /** Diurnal amplitude as a fraction of base (peak at 14:00). */
  daily: number;
  /** Weekend dip as a fraction of base (days 5 and 6 of each week). */
  weekly: number;
  /** Linear trend as a fraction of base per day. */
  trendPerDay: number;
  /** Gaussian noise σ as a fraction of the noiseless value. */
  noise: number;
  /** Bursts per day; each multiplies the value by (1 + burstSize) for `burstPoints` points. */
  burstsPerDay: number;
  burstSize: number;
  burstPoints: number;
  seed: number;
}

export const SYNTHETIC_DEFAULTS: SyntheticOptions = {
  points: 7 * 144,
  stepS: 600,
  base: 100,
  daily: 0.5,
  weekly: 0.2,
  trendPerDay: 0.01,
  noise: 0.03,
  burstsPerDay: 0,
  burstSize: 1,
  burstPoints: 3,
  seed: 1,
};

/**
 * A seeded series with known structure, for testing forecasters against a known noise floor:
 * y = max(0, base·(1 + trend·day) · (1 + daily·sin) · (1 − weekly·[weekend]) · (1 + burst)) · (1 + noise·N(0,1)).
 * `clean` is the same without noise and bursts, so the best possible RMSE is about noise·mean(clean).
 */
export function syntheticSeries(opts: Partial<SyntheticOptions> = {}): { values: number[]; clean: number[]; stepS: number } {
  const o = { ...SYNTHETIC_DEFAULTS, ...opts };
  const rng = new Rng(o.seed);
  const noise = rng.fork('noise');
  const bursts = rng.fork('bursts');
  const values: number[] = [];
  const clean: number[] = [];
  const pointsPerDay = 86_400 / o.stepS;
  const burstP = o.burstsPerDay / pointsPerDay;
  let burstLeft = 0;
  for (let i = 0; i < o.points; i++) {
    const tS = i * o.stepS;
    const day = tS / 86_400;
    const hour = (tS % 86_400) / 3600;
    const weekend = Math.floor(day) % 7 >= 5 ? 1 : 0;
    const c = o.base * (1 + o.trendPerDay * day) * (1 + o.daily * Math.sin((2 * Math.PI * (hour - 8)) / 24)) * (1 - o.weekly * weekend);
    if (burstLeft === 0 && bursts.next() < burstP) burstLeft = o.burstPoints;
    const b = burstLeft > 0 ? 1 + o.burstSize : 1;
    if (burstLeft > 0) burstLeft--;
    clean.push(c);
    values.push(Math.max(0, c * b * (1 + o.noise * noise.normal())));
  }
  return { values, clean, stepS: o.stepS };
}
