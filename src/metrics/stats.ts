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
  return selectDist(Float64Array.from(values as ArrayLike<number>));
}

/**
 * `dist` without the copy, and without a full sort: the order statistics the percentiles interpolate between are
 * found by selection (expected O(n); sorting 1.6 M latencies a column was 12 % of a SageServe run). `a` is
 * reordered. The mean sums in `a`'s own order (request order), the percentiles are exact.
 */
export function selectDist(a: Float64Array): Dist {
  const n = a.length;
  if (n === 0) return { mean: 0, p50: 0, p90: 0, p95: 0, p99: 0 };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += a[i]!;
  const ps = [50, 90, 95, 99] as const;
  // Order statistics ascending; each selection leaves a[0..k] ≤ a[k] ≤ a[k+1..], so the next one searches (k, n).
  let left = 0;
  for (const p of ps) {
    const lo = Math.floor((p / 100) * (n - 1));
    for (const k of [lo, Math.min(n - 1, lo + 1)]) {
      if (k < left) continue;
      select(a, k, left, n - 1);
      left = k + 1;
    }
  }
  const [p50, p90, p95, p99] = ps.map((p) => percentile(a, p)) as [number, number, number, number];
  return { mean: sum / n, p50, p90, p95, p99 };
}

/** Puts the k-th smallest of a[left..right] at a[k], smaller-or-equal before it, greater-or-equal after (introselect). */
function select(a: Float64Array, k: number, left: number, right: number): void {
  let budget = 2 * Math.ceil(Math.log2(right - left + 2)) + 8;
  while (right > left) {
    if (right - left < 16 || budget-- <= 0) {
      a.subarray(left, right + 1).sort();
      return;
    }
    // Median of three as the pivot, then Hoare partition.
    const x = a[left]!;
    const y = a[(left + right) >>> 1]!;
    const z = a[right]!;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = left;
    let j = right;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return;
  }
}
