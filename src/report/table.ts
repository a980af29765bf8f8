import { headlineAttainment, type Summary } from '../metrics/summary.ts';
import { paretoFrontier } from './pareto.ts';
import { asPrinted, formatAmount, formatAttainment as pct, formatLatency as ms } from './format.ts';

/**
 * One column of the comparison table; `value` is NaN where it does not apply (no request for SLO attainment, no
 * completed request for a latency, no request with more than one output token for TPOT).
 */
export interface Column {
  key: string;
  title: string;
  better: 'min' | 'max';
  value: (s: Summary) => number;
  format: (v: number) => string;
  /** The unit, for formats other than `format` (a mean ± its interval over seeds: seeds.ts). */
  unit: ColumnUnit;
}

export type ColumnUnit = 'usd' | 'hours' | 'attainment' | 'latency' | 'count';

export interface TableCell {
  value: number;
  text: string;
  /** Best in its column (every tied value is marked). */
  best: boolean;
}

export interface ComparisonTable {
  columns: { key: string; title: string; better: 'min' | 'max' }[];
  rows: { name: string; cells: TableCell[] }[];
}

/** A latency only exists when something completed; 0 would otherwise win the column. */
const lat = (pick: (s: Summary) => number) => (s: Summary) => (s.requests.completed > 0 ? pick(s) : NaN);
/** TPOT only exists for completed requests with more than one output token (`tpot.count`). */
const tpotLat = (pick: (s: Summary) => number) => (s: Summary) => (s.tpot.count > 0 ? pick(s) : NaN);
/** Attainment only exists where there were requests to attain it (`simulate` prints `–` too). */
const attained = (s: Summary) => (s.requests.total > 0 ? headlineAttainment(s) : NaN);

/**
 * Columns in display order; tier columns come from the union of tier names, sorted. SLO is the headline
 * attainment (each request by its tier's targets when there are tiers). `unfinished` appears when a variant left
 * requests unfinished: its latency columns then describe only the requests that finished.
 */
export function comparisonColumns(summaries: readonly Summary[]): Column[] {
  const tiers = [...new Set(summaries.flatMap((s) => Object.keys(s.tiers ?? {})))].sort();
  return [
    { key: 'cost', title: 'cost', better: 'min', unit: 'usd', value: (s) => s.fleet.costUsd, format: (v) => `$${v.toFixed(2)}` },
    { key: 'gpuHours', title: 'GPU-h', better: 'min', unit: 'hours', value: (s) => s.fleet.gpuHours, format: (v) => v.toFixed(2) },
    { key: 'slo', title: 'SLO', better: 'max', unit: 'attainment', value: attained, format: pct },
    ...tiers.map(
      (t): Column => ({ key: `slo:${t}`, title: `SLO ${t}`, better: 'max', unit: 'attainment', value: (s) => s.tiers?.[t]?.slo.attainment ?? NaN, format: pct }),
    ),
    { key: 'ttftP50', title: 'TTFT p50', better: 'min', unit: 'latency', value: lat((s) => s.ttft.p50), format: ms },
    { key: 'ttftP99', title: 'TTFT p99', better: 'min', unit: 'latency', value: lat((s) => s.ttft.p99), format: ms },
    { key: 'tpotP50', title: 'TPOT p50', better: 'min', unit: 'latency', value: tpotLat((s) => s.tpot.p50), format: ms },
    { key: 'tpotP99', title: 'TPOT p99', better: 'min', unit: 'latency', value: tpotLat((s) => s.tpot.p99), format: ms },
    { key: 'e2eP50', title: 'E2E p50', better: 'min', unit: 'latency', value: lat((s) => s.e2e.p50), format: ms },
    { key: 'e2eP99', title: 'E2E p99', better: 'min', unit: 'latency', value: lat((s) => s.e2e.p99), format: ms },
    { key: 'drops', title: 'drops', better: 'min', unit: 'count', value: (s) => s.requests.dropped, format: (v) => String(v) },
    ...(summaries.some((s) => s.engine?.prefixCache)
      ? [{ key: 'prefixHitRate', title: 'prefix hits', better: 'max', unit: 'attainment', value: (s) => s.engine?.prefixCache?.hitRate ?? NaN, format: pct } satisfies Column]
      : []),
    ...(summaries.some((s) => s.requests.unfinished > 0)
      ? [{ key: 'unfinished', title: 'unfinished', better: 'min', unit: 'count', value: (s) => s.requests.unfinished, format: (v) => String(v) } satisfies Column]
      : []),
  ];
}

/**
 * The comparison table with the best value of each column marked. Every cell that prints the same as the
 * best value is marked too, so two variants that show $6.03 are tied rather than split by float noise.
 */
export function comparisonTable(entries: readonly { name: string; summary: Summary }[]): ComparisonTable {
  const columns = comparisonColumns(entries.map((e) => e.summary));
  const rows = entries.map((e) => ({
    name: e.name,
    cells: columns.map((c) => {
      const value = c.value(e.summary);
      return { value, text: Number.isFinite(value) ? c.format(value) : '–', best: false };
    }),
  }));
  columns.forEach((c, j) => {
    const cells = rows.map((r) => r.cells[j]!).filter((x) => Number.isFinite(x.value));
    if (cells.length === 0) return;
    const pick = c.better === 'min' ? Math.min : Math.max;
    const bestText = cells.find((x) => x.value === pick(...cells.map((y) => y.value)))!.text;
    for (const x of cells) x.best = x.text === bestText;
  });
  return { columns: columns.map(({ key, title, better }) => ({ key, title, better })), rows };
}

/** The table as fixed-width text; best values carry a trailing `*`. `overSeeds`: the cells are means over seeds (seeds.ts). */
export function formatComparisonTable(t: ComparisonTable, overSeeds = false): string {
  const head = ['variant', ...t.columns.map((c) => c.title)];
  const body = t.rows.map((r) => [r.name, ...r.cells.map((c) => (c.best ? `${c.text}*` : `${c.text} `))]);
  const widths = head.map((h, j) => Math.max(h.length + (j === 0 ? 0 : 1), ...body.map((r) => r[j]!.length)));
  const line = (cells: string[]) => cells.map((c, j) => (j === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  ');
  const headCells = head.map((h, j) => (j === 0 ? h : `${h} `));
  const n = tableNotes(t, overSeeds);
  return [line(headCells), ...body.map(line), '', `* ${n.best}`, ...(n.finishedOnly ? [n.finishedOnly] : [])].join('\n') + '\n';
}

/** What the marks mean, and (with an unfinished column) that latencies describe the finished requests only. */
export function tableNotes(t: ComparisonTable, overSeeds = false): { best: string; finishedOnly?: string } {
  const unfinished = t.columns.some((c) => c.key === 'unfinished');
  return {
    best: `best ${overSeeds ? 'mean ' : ''}in column (lowest cost, GPU-h, latency${unfinished ? ', drops and unfinished' : ' and drops'}; highest SLO attainment)`,
    ...(unfinished ? { finishedOnly: 'latencies cover finished requests only: compare them with the unfinished column' } : {}),
  };
}

/**
 * Names of the variants on the cost / SLO-attainment Pareto frontier, cheapest first, judged on the values as the
 * table prints them (cents, 0.01 %): two variants the table shows tied are both on it or both off it.
 */
export function frontierNames(entries: readonly { name: string; summary: Summary }[]): string[] {
  return paretoFrontier(entries.map((e) => costSloPoint(e.summary))).map((i) => entries[i]!.name);
}

/** The frontier's names for a sentence; none when no variant attains anything (a 0 % point is not on it). */
export function describeFrontier(names: readonly string[]): string {
  return names.length > 0 ? names.join(', ') : 'none (no variant attains the SLO for any request)';
}

/**
 * The answer to "which is the cheapest variant that meets the SLO target?" as a sentence: among the points (cost
 * and attainment as printed) attaining ≥ `target`, the cheapest (on equal cost the higher attainment, then the
 * first); when none does, the one that comes closest.
 */
export function describeTarget(names: readonly string[], points: readonly { costUsd: number; attainment: number }[], target: number): string {
  const goal = `SLO attainment ≥ ${pct(target)}`;
  const c = targetChoice(points, target);
  const p = points[c.index]!;
  return c.meets ? `cheapest with ${goal}: ${names[c.index]} ($${formatAmount(p.costUsd)}, ${pct(p.attainment)})` : `no variant reaches ${goal} (closest: ${names[c.index]}, ${pct(p.attainment)})`;
}

/** `describeTarget`'s choice: the index of the cheapest point meeting the target, or (`meets` false) of the closest. */
export function targetChoice(points: readonly { costUsd: number; attainment: number }[], target: number): { index: number; meets: boolean } {
  let best = -1;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (p.attainment < target) continue;
    const b = points[best];
    if (!b || p.costUsd < b.costUsd || (p.costUsd === b.costUsd && p.attainment > b.attainment)) best = i;
  }
  if (best >= 0) return { index: best, meets: true };
  let top = 0;
  for (let i = 1; i < points.length; i++) if (points[i]!.attainment > points[top]!.attainment) top = i;
  return { index: top, meets: false };
}

/** A run on the cost / SLO plane, as printed. */
export function costSloPoint(s: Summary): { costUsd: number; attainment: number } {
  return asPrinted({ costUsd: s.fleet.costUsd, attainment: headlineAttainment(s) });
}
