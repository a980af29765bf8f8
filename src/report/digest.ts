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

/**
 * `intervalS`: the run's `output.timelineIntervalS`, to draw idle gaps in the timeline as they were (`downsampleTimeline`);
 * `warmupS`: its `output.warmupS`, whose requests the CDFs leave out as the summary does.
 */
export function digestRun(summary: Summary, log: RequestLog, rows: readonly TimelineRow[], intervalS?: number, warmupS = 0): RunDigest {
  const ttft: number[] = [];
  const tpot: number[] = [];
  const e2e: number[] = [];
  for (let i = 0; i < log.n; i++) {
    if (!log.isDone(i) || log.arrival[i]! < warmupS) continue;
    ttft.push(log.ttft[i]!);
    if (log.hasTpot(i)) tpot.push(log.tpot(i));
    e2e.push(log.e2e[i]!);
  }
  return { summary, workload: workloadFingerprint(log), cdf: { ttft: cdfPoints(ttft), tpot: cdfPoints(tpot), e2e: cdfPoints(e2e) }, timeline: downsampleTimeline(rows, MAX_SERIES_POINTS, intervalS) };
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
 * Timeline rows → at most `maxPoints` points for the charts (drawn as steps: each point's values hold over the
 * interval that ends at it).
 *
 * - The first point is the start of the timeline (t = 0: the state there, the first interval's rates), so the first
 *   interval is drawn too, even in a run shorter than one interval (rows at 0 and at its end only).
 * - With `intervalS` (`output.timelineIntervalS`), an idle gap is drawn as it was: the simulator writes no row while
 *   nothing is in flight and no event comes before the next interval (src/sim/simulator.ts), so a row more than
 *   one interval after the previous one ends such a gap. Until its last interval nothing happened: the state stayed
 *   what the previous row recorded and nothing arrived, finished or was dropped — exactly what the rows it skipped
 *   would have said. A point with those values is put one interval before the row, which then covers only its
 *   own last interval (where the event that ended the gap lies), instead of smearing its state and counts over the
 *   whole gap.
 * - Rows are merged in equal runs of k = ⌈n / (maxPoints − 1)⌉ (1 000 rows, 500 points ⇒ pairs): counts are
 *   summed and divided by the merged span, states averaged over time. A row at t = 0 has no span; its counts go
 *   to the next row.
 */
export function downsampleTimeline(rows: readonly TimelineRow[], maxPoints = MAX_SERIES_POINTS, intervalS?: number): TimelinePoint[] {
  type Span = { row: TimelineRow; dt: number; arrivals: number; completions: number; drops: number };
  const spans: Span[] = [];
  let carry = { arrivals: 0, completions: 0, drops: 0 };
  let prevT = 0;
  let prev: TimelineRow | undefined;
  // The state at the timeline's start (the t = 0 row), for the first point.
  let start: TimelineRow | undefined;
  for (const row of rows) {
    const dt = row.tS - prevT;
    if (dt <= 0) {
      carry = { arrivals: carry.arrivals + row.arrivals, completions: carry.completions + row.completions, drops: carry.drops + row.drops };
      if (spans.length === 0) start = row;
      prev = row;
      continue;
    }
    // 1.5 intervals: a regular row is one interval (or less, the last) after the previous; a gap is ≥ 2.
    if (intervalS !== undefined && intervalS > 0 && prev !== undefined && dt > 1.5 * intervalS) {
      const idle = { ...prev, tS: row.tS - intervalS, arrivals: 0, completions: 0, drops: 0 };
      spans.push({ row: idle, dt: idle.tS - prevT, ...carry });
      carry = { arrivals: 0, completions: 0, drops: 0 };
      prevT = idle.tS;
    }
    spans.push({ row, dt: row.tS - prevT, arrivals: row.arrivals + carry.arrivals, completions: row.completions + carry.completions, drops: row.drops + carry.drops });
    carry = { arrivals: 0, completions: 0, drops: 0 };
    prevT = row.tS;
    prev = row;
  }
  if (spans.length === 0) return [];
  const k = Math.max(1, Math.ceil(spans.length / Math.max(1, maxPoints - 1)));
  const out: TimelinePoint[] = [];
  for (let s = 0; s < spans.length; s += k) {
    const group = spans.slice(s, s + k);
    let dt = 0;
    let arrivals = 0;
    let completions = 0;
    let drops = 0;
    for (const g of group) dt += g.dt;
    const mean = { provisioning: 0, ready: 0, draining: 0, running: 0, queued: 0, kv: 0 };
    for (const g of group) {
      arrivals += g.arrivals;
      completions += g.completions;
      drops += g.drops;
      const w = g.dt / dt;
      mean.provisioning += g.row.provisioning * w;
      mean.ready += g.row.ready * w;
      mean.draining += g.row.draining * w;
      mean.running += g.row.running * w;
      mean.queued += (g.row.waiting + g.row.deferred) * w;
      mean.kv += g.row.kvUtilization * w;
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
  // The start: the first interval's rates (a step drawn from 0 at that height), the state at t = 0 when recorded.
  const first = out[0]!;
  const at0 = start ?? spans[0]!.row;
  out.unshift({
    ...first,
    tS: spans[0]!.row.tS - spans[0]!.dt,
    provisioning: at0.provisioning,
    ready: at0.ready,
    draining: at0.draining,
    running: at0.running,
    queued: at0.waiting + at0.deferred,
    kvUtilization: at0.kvUtilization,
  });
  return out;
}
