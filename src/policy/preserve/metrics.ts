import { percentile } from '../../metrics/stats.ts';
import { instanceHours } from '../../sim/fleet.ts';
import type { SimResult } from '../../sim/simulator.ts';

/** The paper's measures (seed 001 §4 "Metrics", §9 item 10) computed from one run. */
export interface PreserveMetrics {
  /** Requests that arrived in [fromS, toS) and how many of them completed. */
  requests: number;
  completed: number;
  meanTtftS: number;
  /** Normalised latency: e2e / output tokens, per completed request. */
  meanNormLatencyS: number;
  p99NormLatencyS: number;
  /** Share of arrived requests (unfinished and dropped ones count as violations) with normalised latency > sloS. */
  sloViolation: number;
  /** The highest `bucketS` bucket (by arrival) of mean normalised latency. */
  peakNormLatencyS: number;
  meanE2eS: number;
  /** Instance-hours charged from launch (cold start included) to release, over [fromS, toS). */
  instanceHours: number;
  /** instanceHours over the same span at a fixed `referenceInstances` (static 8 in the paper). */
  resourceVsReference: number;
  preemptions: number;
}

export interface MetricsWindow {
  fromS?: number;
  toS?: number;
  /** Normalised-latency SLO in seconds per token (paper: 0.2). */
  sloS?: number;
  bucketS?: number;
  referenceInstances?: number;
}

/** PreServe-style measures over the requests that arrived in [fromS, toS) (default: the whole run). */
export function preserveMetrics(res: SimResult, w: MetricsWindow = {}): PreserveMetrics {
  const fromS = w.fromS ?? 0;
  const toS = w.toS ?? Infinity;
  const slo = w.sloS ?? 0.2;
  const bucketS = w.bucketS ?? 300;
  const log = res.log;
  const norm: number[] = [];
  let ttft = 0;
  let e2e = 0;
  let requests = 0;
  let violations = 0;
  let preemptions = 0;
  const buckets = new Map<number, { s: number; n: number }>();
  for (let i = 0; i < log.n; i++) {
    const a = log.arrival[i]!;
    if (a < fromS || a >= toS) continue;
    requests++;
    if (!log.isDone(i)) {
      violations++;
      continue;
    }
    const nl = log.e2e[i]! / Math.max(1, log.output[i]!);
    norm.push(nl);
    ttft += log.ttft[i]!;
    e2e += log.e2e[i]!;
    preemptions += log.preemptions[i]!;
    if (nl > slo) violations++;
    const b = Math.floor((a - fromS) / bucketS);
    const cell = buckets.get(b);
    if (cell) {
      cell.s += nl;
      cell.n++;
    } else buckets.set(b, { s: nl, n: 1 });
  }
  const n = norm.length;
  const sorted = Float64Array.from(norm).sort();
  let peak = 0;
  for (const c of buckets.values()) peak = Math.max(peak, c.s / c.n);
  let hours = 0;
  const end = Math.min(toS, res.endS);
  for (const inst of res.fleet.instances) hours += instanceHours(inst, end, fromS).instanceHours;

  const refHours = ((w.referenceInstances ?? 8) * Math.max(0, end - fromS)) / 3600;
  return {
    requests,
    completed: n,
    meanTtftS: n ? ttft / n : NaN,
    meanNormLatencyS: n ? norm.reduce((s, v) => s + v, 0) / n : NaN,
    p99NormLatencyS: n ? percentile(sorted, 99) : NaN,
    sloViolation: requests ? violations / requests : 0,
    peakNormLatencyS: peak,
    meanE2eS: n ? e2e / n : NaN,
    instanceHours: hours,
    resourceVsReference: refHours > 0 ? hours / refHours : NaN,
    preemptions,
  };
}
