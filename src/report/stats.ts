/**
 * Means and two-sided 95 % Student-t confidence intervals over a few seeds (`compare --seeds`).
 *
 * No statistics library is a dependency of this project, so the t quantiles are written here: a table of
 * t(0.975, df) for df = 1…30 (the usual printed table, to 7 decimals; checked in test/report/stats.test.ts against
 * the CDF integrated numerically), and above 30 degrees of freedom the Cornish–Fisher expansion of the t quantile
 * around the normal one (error < 1e-5 there).
 */

/** t(0.975, df) for df = 1…30. */
const T975: readonly number[] = [
  12.7062047, 4.3026527, 3.1824463, 2.7764451, 2.5705818, 2.4469119, 2.3646243, 2.3060041, 2.2621572, 2.2281389,
  2.2009852, 2.1788128, 2.1603687, 2.1447867, 2.1314495, 2.1199053, 2.1098156, 2.100922, 2.0930241, 2.0859634,
  2.0796138, 2.0738731, 2.0686576, 2.0638986, 2.0595386, 2.0555294, 2.0518305, 2.0484071, 2.0452296, 2.0422725,
];

/** The standard normal's 0.975 quantile. */
const Z975 = 1.959963984540054;

/** The 0.975 quantile of Student's t with `df` degrees of freedom (the half-width factor of a two-sided 95 % interval). */
/** A cell with no mean over seeds, and why: `– (3/5 seeds)`, 3 of the 5 seeds having a value. */
export function noValueText(m: Pick<MeanCi, 'n' | 'nWithValue'>): string {
  return m.n > 0 && m.nWithValue < m.n ? `– (${m.nWithValue}/${m.n} seeds)` : '–';
}

export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) return NaN;
  if (df <= T975.length) return T975[df - 1]!;
  // Cornish–Fisher: t ≈ z + g1/ν + g2/ν² + g3/ν³ + g4/ν⁴ (Abramowitz & Stegun 26.7.5).
  const z = Z975;
  const z2 = z * z;
  const g1 = (z * (z2 + 1)) / 4;
  const g2 = (z * ((5 * z2 + 16) * z2 + 3)) / 96;
  const g3 = (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
  const g4 = (z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160;
  const v = df;
  return z + g1 / v + g2 / v ** 2 + g3 / v ** 3 + g4 / v ** 4;
}

/** A sample's mean and the half-width of its two-sided 95 % t-interval (n − 1 degrees of freedom). */
export interface MeanCi {
  /** NaN (`null` in comparison.json) when there is no value: some of the `n` values are missing (see `meanCi95`). */
  mean: number;
  /** Half-width: the interval is mean ± ci95. NaN for fewer than two values, or with no mean. */
  ci95: number;
  /** Values given (one per seed). */
  n: number;
  /** How many of them have a value (are finite): the mean exists only when all `n` do. */
  nWithValue: number;
}

/**
 * Mean ± the 95 % t-interval half-width of `xs` (t(0.975, n−1) · s / √n, s the sample standard deviation).
 * A non-finite value (a latency where nothing completed) makes both NaN: a mean over the seeds where it exists
 * would compare a different set of runs with the other variants. `nWithValue` says how many values there were.
 */
export function meanCi95(xs: readonly number[]): MeanCi {
  const n = xs.length;
  const nWithValue = xs.filter((x) => Number.isFinite(x)).length;
  if (n === 0 || nWithValue < n) return { mean: NaN, ci95: NaN, n, nWithValue };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, ci95: NaN, n, nWithValue };
  const ss = xs.reduce((a, x) => a + (x - mean) ** 2, 0);
  const sd = Math.sqrt(ss / (n - 1));
  return { mean, ci95: (tQuantile975(n - 1) * sd) / Math.sqrt(n), n, nWithValue };
}
