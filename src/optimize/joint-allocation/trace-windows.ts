import { UserError } from '../../util/errors.ts';
import { LineReader } from '../../workload/line-reader.ts';
import { detectFormat, openTrace } from '../../workload/trace.ts';
import { bundledPath } from '../../util/paths.ts';
import { utcDateMs } from '../../util/civil-date.ts';

/**
 * Demand multipliers for the diurnal replay (digest §4.8, Table V): a trace's requests counted in equal
 * windows, multiplier = window count / mean window count. The trace is streamed (the 2024 code week is
 * 16.8 M rows, too large to read into one string).
 *
 * Which span is cut into windows:
 * - `day: 'YYYY-MM-DD'` — that UTC day, as the paper replays 2024-05-14 (needs absolute timestamps: azure);
 * - `day: 'busiest'` — the UTC day with the most requests (the paper's choice of 2024-05-14);
 * - no `day` — a trace spanning more than a day replays its busiest day, a shorter one its whole span
 *   (first to last request). The bundled 2023 sample spans ≈ 57 minutes, so its "day" is minute-scale
 *   burstiness, not a diurnal cycle.
 */

export const BUNDLED_REPLAY_TRACE = bundledPath('data/azure-llm/AzureLLMInferenceTrace_code.csv');

const DAY_S = 86_400;

export interface TraceWindows {
  multipliers: number[];
  source: string;
  /** What was cut into windows: a UTC day or the trace's whole span. */
  span: { kind: 'day'; day: string; busiest: boolean } | { kind: 'whole' };
  /** Requests inside the span. */
  requests: number;
  /** Largest over smallest non-zero multiplier. */
  peakToTrough: number;
}

/** Parses `YYYY-MM-DD`; UserError naming `what` otherwise. Returns the day's start in epoch seconds. */
export function parseDay(what: string, v: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  const t = m ? utcDateMs(+m[1]!, +m[2]!, +m[3]!) / 1000 : NaN;
  if (!m || !Number.isFinite(t) || isoDay(t) !== v) throw new UserError(`${what}: expected a date YYYY-MM-DD or "busiest", got ${JSON.stringify(v)}`);
  return t;
}

function isoDay(epochS: number): string {
  return new Date(epochS * 1000).toISOString().slice(0, 10);
}

/** Epoch seconds of an Azure trace's first request (its arrivals are relative to it). */
function azureStartEpochS(path: string): number {
  const lr = new LineReader(path, { chunkBytes: 64 * 1024 });
  try {
    lr.next(); // header; openTrace has checked it
    let line: string | undefined;
    do line = lr.next();
    while (line !== undefined && line.trim() === '');
    const m = line && /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?/.exec(line.trim());
    if (!m) throw new UserError(`${path}: no request rows`);
    return Date.parse(`${m[1]}T${m[2]!.slice(0, 12)}${m[3] ?? 'Z'}`) / 1000;
  } finally {
    lr.close();
  }
}

export function traceWindows(path: string, bins: number, opts: { day?: string } = {}): TraceWindows {
  const format = detectFormat(path);
  const trace = openTrace(path, format);
  const absolute = format === 'azure';
  if (opts.day !== undefined && !absolute) {
    throw new UserError(`--day: ${path} is a ${format} trace without absolute timestamps; a day can be chosen only in an azure trace (TIMESTAMP,ContextTokens,GeneratedTokens)`);
  }
  const wantDay = opts.day !== undefined && opts.day !== 'busiest' ? parseDay('--day', opts.day) : undefined;
  const start = absolute ? azureStartEpochS(path) : 0;

  // Pass 1: the span, and per UTC day window counts (absolute timestamps only; a given day alone).
  const perDay = new Map<number, number[]>();
  let first = Infinity, last = -Infinity;
  for (const r of trace) {
    first = Math.min(first, r.arrivalS);
    last = Math.max(last, r.arrivalS);
    if (!absolute) continue;
    const t = start + r.arrivalS;
    const d = Math.floor(t / DAY_S) * DAY_S;
    if (wantDay !== undefined && d !== wantDay) continue;
    let counts = perDay.get(d);
    if (!counts) perDay.set(d, (counts = new Array<number>(bins).fill(0)));
    counts[Math.min(bins - 1, Math.floor(((t - d) / DAY_S) * bins))]! += 1;
  }
  if (!Number.isFinite(first)) throw new UserError(`${path}: the trace has no requests`);

  let counts: number[];
  let span: TraceWindows['span'];
  if (wantDay !== undefined) {
    const c = perDay.get(wantDay);
    if (!c) throw new UserError(`--day ${opts.day}: ${path} has no requests on that day (it spans ${isoDay(start + first)} to ${isoDay(start + last)})`);
    counts = c;
    span = { kind: 'day', day: opts.day!, busiest: false };
  } else if (absolute && (opts.day === 'busiest' || last - first > DAY_S)) {
    let best = NaN, bestN = -1;
    for (const [d, c] of perDay) {
      const n = c.reduce((a, b) => a + b, 0);
      if (n > bestN) { best = d; bestN = n; }
    }
    counts = perDay.get(best)!;
    span = { kind: 'day', day: isoDay(best), busiest: true };
  } else {
    // Pass 2: the whole span first..last in equal windows.
    counts = new Array<number>(bins).fill(0);
    const width = Math.max(1e-9, last - first);
    for (const r of trace) counts[Math.min(bins - 1, Math.floor(((r.arrivalS - first) / width) * bins))]! += 1;
    span = { kind: 'whole' };
  }
  const requests = counts.reduce((a, b) => a + b, 0);
  const mean = requests / bins;
  const multipliers = counts.map((v) => v / mean);
  const nz = multipliers.filter((v) => v > 0);
  return { multipliers, source: path, span, requests, peakToTrough: Math.max(...nz) / Math.min(...nz) };
}
