import type { RequestLog } from '../../metrics/collector.ts';
import { percentile, selectDist } from '../../metrics/stats.ts';

/**
 * The two statistics SageServe reports that the core summary does not (summary.json `sageserve`, SageServe runs
 * only; docs/fidelity/sageserve.md "Statistics"):
 * - `latencyBy3h`: p95 TTFT and E2E per 3-hour bin (paper Fig. 16b; the released plotting script bins completed
 *   requests by completion time, as here);
 * - `memoryUtil`: per endpoint (region × model), the released script's Fig. 12b statistic: at each sample the
 *   most utilised instance, those maxima averaged per 15-min bin, and the spread of the bin means (its box plots,
 *   whiskers p5–p95).
 */
export interface SageServeStats {
  latencyBy3h: LatencyBin[];
  memoryUtil: Record<string, MemoryUtilSpread>;
}

export interface LatencyBin {
  /** Start of the 3-hour bin, seconds. */
  startS: number;
  /**
   * Per tier (`all`: every completed request of the bin; a tier itself named `all` is listed as `tier all`):
   * completions in the bin and their p95s, seconds.
   */
  tiers: Record<string, { completed: number; ttftP95: number; e2eP95: number }>;
}

/** Spread of an endpoint's 15-min bin means (effective memory utilisation, 0..1). */
export interface MemoryUtilSpread {
  bins: number;
  mean: number;
  p5: number;
  p25: number;
  p50: number;
  p75: number;
  p95: number;
}

const LATENCY_BIN_S = 3 * 3600;
const MEMORY_BIN_S = 900;

/** p95 TTFT and E2E of the completed requests per tier and per 3-hour bin of their completion time. */
export function latencyBy3h(log: RequestLog): LatencyBin[] {
  // bin → tier name ('' for all: an untiered request has no entry of its own) → request indices
  const bins = new Map<number, Map<string, number[]>>();
  const add = (bin: Map<string, number[]>, key: string, i: number) => {
    let l = bin.get(key);
    if (!l) bin.set(key, (l = []));
    l.push(i);
  };
  for (let i = 0; i < log.n; i++) {
    if (!log.isDone(i)) continue;
    const b = Math.floor((log.arrival[i]! + log.e2e[i]!) / LATENCY_BIN_S);
    let bin = bins.get(b);
    if (!bin) bins.set(b, (bin = new Map()));
    add(bin, '', i);
    const tier = log.tiers[log.tierIdx[i]!]!;
    if (tier !== '') add(bin, tier, i);
  }
  const p95 = (idx: number[], value: (i: number) => number) => selectDist(Float64Array.from(idx, value)).p95;
  return [...bins.keys()]
    .sort((a, b) => a - b)
    .map((b) => {
      const bin = bins.get(b)!;
      const names = ['', ...[...bin.keys()].filter((k) => k !== '').sort()];
      const tiers = Object.fromEntries(
        names.map((k) => {
          const idx = bin.get(k)!;
          const key = k === '' ? 'all' : k === 'all' ? 'tier all' : k;
          return [key, { completed: idx.length, ttftP95: p95(idx, (i) => log.ttft[i]!), e2eP95: p95(idx, (i) => log.e2e[i]!) }];
        }),
      );
      return { startS: b * LATENCY_BIN_S, tiers };
    });
}

/**
 * Collects the memory statistic from the timeline's samples: `note` every serving instance of a sample, then
 * `sampled`. Per endpoint, each sample contributes the largest utilisation noted for it.
 */
export class EndpointMemoryBins {
  private readonly peaks = new Map<string, number>();
  /** endpoint → 15-min bin → [sum of sample maxima, samples] */
  private readonly bins = new Map<string, Map<number, [number, number]>>();

  note(model: string, region: string, kvUsedFraction: number): void {
    const key = `${region}/${model}`;
    this.peaks.set(key, Math.max(this.peaks.get(key) ?? 0, kvUsedFraction));
  }

  sampled(t: number): void {
    const b = Math.floor(t / MEMORY_BIN_S);
    for (const [key, peak] of this.peaks) {
      let byBin = this.bins.get(key);
      if (!byBin) this.bins.set(key, (byBin = new Map()));
      const acc = byBin.get(b);
      if (acc) {
        acc[0] += peak;
        acc[1]++;
      } else byBin.set(b, [peak, 1]);
    }
    this.peaks.clear();
  }

  spread(): Record<string, MemoryUtilSpread> {
    const out: [string, MemoryUtilSpread][] = [];
    for (const key of [...this.bins.keys()].sort()) {
      const means = [...this.bins.get(key)!.values()].map(([sum, n]) => sum / n).sort((a, b) => a - b);
      const mean = means.reduce((s, x) => s + x, 0) / means.length;
      const at = (p: number) => percentile(means, p);
      out.push([key, { bins: means.length, mean, p5: at(5), p25: at(25), p50: at(50), p75: at(75), p95: at(95) }]);
    }
    return Object.fromEntries(out);
  }
}
