import type { RequestLog } from '../metrics/collector.ts';
import { percentile } from '../metrics/stats.ts';
import type { Summary } from '../metrics/summary.ts';
import type { TimelineRow } from '../sim/timeline.ts';

/** At most this many points per time series in a chart (keeps report.html small). */
export const MAX_SERIES_POINTS = 500;

/** One point of a latency CDF: `fraction` of completed requests took at most `valueS` seconds. */
export interface CdfPoint {
  valueS: number;
  fraction: number;
}

/** One (possibly merged) timeline interval, ending at `tS`. Counts become rates; states are means over the merged rows. */
export interface TimelinePoint {
  tS: number;
  arrivalsPerS: number;
  completionsPerS: number;
  dropsPerS: number;
  provisioning: number;
  ready: number;
  draining: number;
  running: number;
  /** Requests waiting in engine queues plus requests the router deferred. */
  queued: number;
  kvUtilization: number;
}

/**
 * What a report needs from one run: the summary, latency CDFs (≤ 200 quantiles each) and a downsampled
 * timeline. Small and plain, so a worker thread can send it back instead of the per-request log.
 */
export interface RunDigest {
  summary: Summary;
  /** Fingerprint of the requests (count, arrival times, lengths): variants with equal ones replayed the same workload. */
  workload: string;
  cdf: { ttft: CdfPoint[]; tpot: CdfPoint[]; e2e: CdfPoint[] };
  timeline: TimelinePoint[];
}

export function digestRun(summary: Summary, log: RequestLog, rows: readonly TimelineRow[]): RunDigest {
  const ttft: number[] = [];
  const tpot: number[] = [];
  const e2e: number[] = [];
  for (let i = 0; i < log.n; i++) {
    if (!log.isDone(i)) continue;
    ttft.push(log.ttft[i]!);
    if (log.output[i]! > 1) tpot.push(log.tpot(i));
    e2e.push(log.e2e[i]!);
  }
  return { summary, workload: workloadFingerprint(log), cdf: { ttft: cdfPoints(ttft), tpot: cdfPoints(tpot), e2e: cdfPoints(e2e) }, timeline: downsampleTimeline(rows) };
}

/** FNV-1a over each request's arrival (µs, both 32-bit halves) and token counts. */
function workloadFingerprint(log: RequestLog): string {
  let h = 0x811c9dc5;
  const mix = (x: number) => {
    h = Math.imul(h ^ (x | 0), 16777619) >>> 0;
  };
  for (let i = 0; i < log.n; i++) {
    const us = Math.round(log.arrival[i]! * 1e6);
    mix(us);
    mix(us / 2 ** 32);
    mix(log.input[i]!);
    mix(log.output[i]!);
  }
  return `${log.n}:${h.toString(16)}`;
}

/**
 * The fractions a CDF is sampled at: 150 evenly from 0 to 0.98, then 49 more in the last 2 % where the
 * tail (p99, p99.9) lives — 199 in all.
 */
export const CDF_FRACTIONS: readonly number[] = (() => {
  const f: number[] = [];
  for (let i = 0; i < 150; i++) f.push((0.98 * i) / 149);
  for (let j = 1; j <= 49; j++) f.push(0.98 + (0.02 * j) / 49);
  return f;
})();

/** An empirical CDF of `values` sampled at CDF_FRACTIONS (linear interpolation between order statistics). */
export function cdfPoints(values: ArrayLike<number>): CdfPoint[] {
  if (values.length === 0) return [];
  const a = Float64Array.from(values as ArrayLike<number>).sort();
  return CDF_FRACTIONS.map((fraction) => ({ valueS: percentile(a, fraction * 100), fraction }));
}

/**
 * Timeline rows → at most `maxPoints` points. Rows are merged in equal runs of k = ⌈n / maxPoints⌉
 * (1 000 rows, 500 points ⇒ pairs): counts are summed and divided by the merged span, states averaged.
 * A row at t = 0 has no span; its counts go to the next row.
 */
export function downsampleTimeline(rows: readonly TimelineRow[], maxPoints = MAX_SERIES_POINTS): TimelinePoint[] {
  const spans: { row: TimelineRow; dt: number; arrivals: number; completions: number; drops: number }[] = [];
  let carry = { arrivals: 0, completions: 0, drops: 0 };
  let prevT = 0;
  for (const row of rows) {
    const dt = row.tS - prevT;
    if (dt <= 0) {
      carry = { arrivals: carry.arrivals + row.arrivals, completions: carry.completions + row.completions, drops: carry.drops + row.drops };
      continue;
    }
    spans.push({ row, dt, arrivals: row.arrivals + carry.arrivals, completions: row.completions + carry.completions, drops: row.drops + carry.drops });
    carry = { arrivals: 0, completions: 0, drops: 0 };
    prevT = row.tS;
  }
  const k = Math.max(1, Math.ceil(spans.length / Math.max(1, maxPoints)));
  const out: TimelinePoint[] = [];
  for (let s = 0; s < spans.length; s += k) {
    const group = spans.slice(s, s + k);
    let dt = 0;
    let arrivals = 0;
    let completions = 0;
    let drops = 0;
    const mean = { provisioning: 0, ready: 0, draining: 0, running: 0, queued: 0, kv: 0 };
    for (const g of group) {
      dt += g.dt;
      arrivals += g.arrivals;
      completions += g.completions;
      drops += g.drops;
      mean.provisioning += g.row.provisioning / group.length;
      mean.ready += g.row.ready / group.length;
      mean.draining += g.row.draining / group.length;
      mean.running += g.row.running / group.length;
      mean.queued += (g.row.waiting + g.row.deferred) / group.length;
      mean.kv += g.row.kvUtilization / group.length;
    }
    out.push({
      tS: group[group.length - 1]!.row.tS,
      arrivalsPerS: arrivals / dt,
      completionsPerS: completions / dt,
      dropsPerS: drops / dt,
      provisioning: mean.provisioning,
      ready: mean.ready,
      draining: mean.draining,
      running: mean.running,
      queued: mean.queued,
      kvUtilization: mean.kv,
    });
  }
  return out;
}
