/** Latency statistics as summary.json writes them, in seconds. */
export interface Dist {
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
}

/**
 * Percentile with linear interpolation between order statistics (numpy's default, and SplitwiseSim's).
 * `sorted` must be ascending.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const pos = (p / 100) * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Mean and the standard percentiles; an empty sample gives zeros (and callers report the count beside it). */
export function dist(values: ArrayLike<number>): Dist {
  return sortedDist(Float64Array.from(values as ArrayLike<number>));
}

/** `dist` without the copy: sorts `a` in place. */
export function sortedDist(a: Float64Array): Dist {
  a.sort();
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]!;
  return {
    mean: a.length ? sum / a.length : 0,
    p50: percentile(a, 50),
    p90: percentile(a, 90),
    p95: percentile(a, 95),
    p99: percentile(a, 99),
  };
}
