import { headlineAttainment, type Summary } from '../metrics/summary.ts';
import { UserError } from '../util/errors.ts';
import { asPrinted } from './format.ts';
import { paretoFrontier } from './pareto.ts';
import { meanCi95, noValueText, type MeanCi } from './stats.ts';
import { comparisonColumns, type ColumnUnit, type ComparisonTable, type TableCell } from './table.ts';

/** The most seeds `--seeds N` runs (N runs of every variant). */
export const MAX_SEED_COUNT = 1000;

/**
 * `--seeds`: a count `N` (2 ≤ N ≤ 1000: seeds base, base+1, …, base+N−1) or a comma list of at least two distinct
 * integer seeds (`1,2,3`), in the order given.
 */
export function parseSeedsFlag(text: string, base: number): number[] {
  const expected = `--seeds: expected a count from 2 to ${MAX_SEED_COUNT} or a comma list of at least two distinct integer seeds (e.g. 5 or 1,2,3), got '${text}'`;
  const int = /^\s*-?\d+\s*$/;
  if (!text.includes(',')) {
    if (!int.test(text)) throw new UserError(expected);
    const n = Number(text);
    if (n < 2 || n > MAX_SEED_COUNT) throw new UserError(expected);
    // Past 2^53 − 1 the doubles are 2 apart: base + i would repeat seeds (a bogus interval over duplicate runs).
    if (!Number.isSafeInteger(base) || base > Number.MAX_SAFE_INTEGER - (n - 1)) {
      throw new UserError(`--seeds ${text.trim()}: seeds ${base} to ${base} + ${n - 1} go past ${Number.MAX_SAFE_INTEGER} (2^53 − 1, the largest seed); expected a first seed (--seed or the scenario's seed) ≤ ${Number.MAX_SAFE_INTEGER - (n - 1)}`);
    }
    return Array.from({ length: n }, (_, i) => base + i);
  }
  const parts = text.split(',');
  if (parts.some((p) => !int.test(p) || !Number.isSafeInteger(Number(p)))) throw new UserError(expected);
  const seeds = parts.map(Number);
  const dup = seeds.find((s, i) => seeds.indexOf(s) !== i);
  if (dup !== undefined) throw new UserError(`--seeds ${text}: seed ${dup} is given twice; expected distinct seeds`);
  return seeds;
}

/** `--baseline NAME`: the index of the variant it names. */
export function baselineIndex(name: string | undefined, variants: readonly string[]): number {
  if (name === undefined) return 0;
  const i = variants.indexOf(name);
  if (i < 0) throw new UserError(`--baseline ${name}: expected the name of a variant: ${variants.join(', ')}`);
  return i;
}

/** One variant's summaries, one per seed, in the order of the seeds. */
export interface SeededEntry {
  name: string;
  summaries: readonly Summary[];
}

/**
 * A table cell over seeds: the mean (`value`, marks the best) and the 95 % interval half-width; `nWithValue` of the
 * `n` seeds had a value (the mean needs all of them: the text is then `– (k/n seeds)`).
 */
export interface SeededCell extends TableCell {
  ci95: number;
  n: number;
  nWithValue: number;
}

export interface SeededTable extends ComparisonTable {
  columns: { key: string; title: string; better: 'min' | 'max'; unit: ColumnUnit }[];
  rows: { name: string; cells: SeededCell[] }[];
}

/**
 * The comparison table over seeds: per variant and column, the mean over seeds ± the half-width of its two-sided
 * 95 % t-interval. The columns are those of the single-seed table for all the runs; the best mean of each column is
 * marked, ties judged on the mean as the single-seed table would print it.
 */
export function seededTable(entries: readonly SeededEntry[]): SeededTable {
  const all = comparisonColumns(entries.flatMap((e) => e.summaries));
  const rows = entries.map((e) => ({
    name: e.name,
    cells: all.map((c): SeededCell => {
      const m = meanCi95(e.summaries.map(c.value));
      const text = Number.isFinite(m.mean) ? formatMeanCi(c.unit, m) : noValueText(m);
      return { value: m.mean, ci95: m.ci95, n: m.n, nWithValue: m.nWithValue, text, best: false };
    }),
  }));
  all.forEach((c, j) => {
    const cells = rows.map((r) => r.cells[j]!).filter((x) => Number.isFinite(x.value));
    if (cells.length === 0) return;
    const pick = c.better === 'min' ? Math.min : Math.max;
    const bestText = c.format(pick(...cells.map((x) => x.value)));
    for (const x of cells) x.best = c.format(x.value) === bestText;
  });
  return { columns: all.map(({ key, title, better, unit }) => ({ key, title, better, unit })), rows };
}

/**
 * The table's means and half-widths by column key, in the summary's units (USD, GPU-hours, fraction, seconds,
 * requests), and on how many seeds each column had a value (`nWithValue`). A mean or half-width with no value is
 * NaN (`null` in comparison.json): a mean needs a value on every seed, a half-width two seeds or more.
 */
export function seededStats(t: SeededTable, row: number): { mean: Record<string, number>; ci95: Record<string, number>; nWithValue: Record<string, number> } {
  const r = t.rows[row]!;
  return {
    mean: Object.fromEntries(t.columns.map((c, j) => [c.key, r.cells[j]!.value])),
    ci95: Object.fromEntries(t.columns.map((c, j) => [c.key, r.cells[j]!.ci95])),
    nWithValue: Object.fromEntries(t.columns.map((c, j) => [c.key, r.cells[j]!.nWithValue])),
  };
}

/** Variants on the cost / SLO-attainment Pareto frontier of the means (as printed: cents, 0.01 %), cheapest first. */
export function seededFrontier(entries: readonly SeededEntry[]): string[] {
  const points = seededPoints(entries);
  return paretoFrontier(points).map((i) => entries[i]!.name);
}

/** Each variant's mean cost and mean headline attainment over the seeds, as printed. */
export function seededPoints(entries: readonly SeededEntry[]): { costUsd: number; attainment: number }[] {
  return entries.map((e) =>
    asPrinted({ costUsd: meanCi95(e.summaries.map((s) => s.fleet.costUsd)).mean, attainment: meanCi95(e.summaries.map(headlineAttainment)).mean }),
  );
}

/** The columns of the paired block: cost, headline SLO attainment and the TTFT and E2E tails. */
export const PAIRED_METRICS = ['cost', 'slo', 'ttftP99', 'e2eP99'] as const;

/** One variant − baseline difference over seeds. */
export interface PairedCell extends MeanCi {
  /** Seeds on which the variant did better than the baseline (lower cost or latency, higher attainment) as printed: a difference the table shows as a tie is no win. */
  wins: number;
  /** The 95 % interval excludes 0. */
  excludesZero: boolean;
}

export interface PairedBlock {
  baseline: string;
  metrics: { key: string; title: string; better: 'min' | 'max'; unit: ColumnUnit }[];
  /** Every variant, the baseline included (its differences are 0). */
  rows: { name: string; cells: PairedCell[] }[];
}

/**
 * Paired differences against the baseline variant: on each seed both ran the same workload, so the per-seed
 * difference (variant − baseline) removes the workload's own noise; its mean ± 95 % t-interval, and on how many
 * seeds the variant won (a seed where both print the same in the single-seed table is a tie, not a win).
 */
export function pairedBlock(entries: readonly SeededEntry[], baseline: number): PairedBlock {
  const columns = comparisonColumns(entries.flatMap((e) => e.summaries)).filter((c) => (PAIRED_METRICS as readonly string[]).includes(c.key));
  const base = entries[baseline]!;
  return {
    baseline: base.name,
    metrics: columns.map(({ key, title, better, unit }) => ({ key, title, better, unit })),
    rows: entries.map((e) => ({
      name: e.name,
      cells: columns.map((c): PairedCell => {
        const pairs = e.summaries.map((s, i) => [c.value(s), c.value(base.summaries[i]!)] as const);
        const diffs = pairs.map(([v, b]) => v - b);
        const m = meanCi95(diffs);
        // A win only where the table would print the two values differently (as its ties: $6.03 and $6.03 tie).
        const wins = pairs.filter(([v, b]) => Number.isFinite(v) && Number.isFinite(b) && c.format(v) !== c.format(b) && (c.better === 'min' ? v < b : v > b)).length;
        // Judged as printed, as the wins are: a difference the block shows as 0 ($0.00) is not flagged.
        const printedZero = !/^[+-]/.test(formatDiffCi(c.unit, m));
        return { ...m, wins, excludesZero: Number.isFinite(m.ci95) && Math.abs(m.mean) > m.ci95 && !printedZero };
      }),
    })),
  };
}

/** A mean ± half-width as the table prints it, e.g. `43.2 ± 0.8 ms`, `$6.03 ± 0.12`, `99.25 ± 0.35%`; `–` where undefined. */
export function formatMeanCi(unit: ColumnUnit, m: { mean: number; ci95: number }): string {
  const { mean, ci95 } = m;
  if (!Number.isFinite(mean) || !Number.isFinite(ci95)) return '–';
  switch (unit) {
    case 'usd':
      return `$${mean.toFixed(2)} ± ${ci95.toFixed(2)}`;
    case 'hours':
      return `${mean.toFixed(2)} ± ${ci95.toFixed(2)}`;
    case 'attainment':
      // Floored to 0.01 % as the single-seed table prints it: a mean below 100 % never shows 100.
      return mean >= 1 ? `100 ± ${(ci95 * 100).toFixed(2)}%` : `${(Math.floor(mean * 1e4 + 1e-7) / 100).toFixed(2)} ± ${(ci95 * 100).toFixed(2)}%`;
    case 'latency':
      return Math.max(mean, ci95) < 1 ? `${(mean * 1000).toFixed(1)} ± ${(ci95 * 1000).toFixed(1)} ms` : `${mean.toFixed(2)} ± ${ci95.toFixed(2)} s`;
    case 'count':
      return Number.isInteger(mean) && ci95 === 0 ? `${mean} ± 0` : `${mean.toFixed(1)} ± ${ci95.toFixed(1)}`;
  }
}

/** A difference ± half-width, signed: `-3.1 ± 8.2 ms`, `+$0.04 ± 0.01`, `+0.17 ± 0.72 pp` (attainment in percentage points). */
export function formatDiffCi(unit: ColumnUnit, m: { mean: number; ci95: number }): string {
  const { mean, ci95 } = m;
  if (!Number.isFinite(mean) || !Number.isFinite(ci95)) return '–';
  // A difference that prints as zero has no sign.
  const sign = (text: string) => `${Number(text) === 0 ? '' : mean < 0 ? '-' : '+'}${text}`;
  const abs = Math.abs(mean);
  switch (unit) {
    case 'usd': {
      const t = abs.toFixed(2);
      return `${Number(t) === 0 ? '' : mean < 0 ? '-' : '+'}$${t} ± ${ci95.toFixed(2)}`;
    }
    case 'hours':
      return `${sign(abs.toFixed(2))} ± ${ci95.toFixed(2)}`;
    case 'attainment':
      return `${sign((abs * 100).toFixed(2))} ± ${(ci95 * 100).toFixed(2)} pp`;
    case 'latency':
      return Math.max(abs, ci95) < 1 ? `${sign((abs * 1000).toFixed(1))} ± ${(ci95 * 1000).toFixed(1)} ms` : `${sign(abs.toFixed(2))} ± ${ci95.toFixed(2)} s`;
    case 'count':
      return `${sign(abs.toFixed(1))} ± ${ci95.toFixed(1)}`;
  }
}

/**
 * True when every seed gave every variant the same results (a trace replayed as is, with policies that draw on no
 * random numbers): the intervals are then 0 and say nothing about noise.
 */
export function seedsIdentical(entries: readonly SeededEntry[]): boolean {
  return entries.every((e) => e.summaries.every((s) => sameResults(s, e.summaries[0]!)));
}

function sameResults(a: Summary, b: Summary): boolean {
  const strip = (s: Summary) => JSON.stringify({ ...s, seed: 0, sim: { ...s.sim, wallSeconds: 0 } });
  return strip(a) === strip(b);
}

/** The request counts over every variant and seed: `1,117`, or `1,098–1,117` when the seeds' workloads differ. */
export function requestsRange(entries: readonly SeededEntry[]): string {
  const totals = entries.flatMap((e) => e.summaries.map((s) => s.requests.total));
  const [lo, hi] = [Math.min(...totals), Math.max(...totals)];
  return lo === hi ? lo.toLocaleString('en-US') : `${lo.toLocaleString('en-US')}–${hi.toLocaleString('en-US')}`;
}

/** The note for seedsIdentical runs (text and report.html). */
export const IDENTICAL_SEEDS_NOTE =
  'every seed gave the same results (nothing in this scenario draws on the seed, e.g. a trace replayed as is): the intervals are 0 and say nothing about run-to-run noise';

/** What the paired block's marks and counts mean (text and report.html). */
export function pairedNotes(p: PairedBlock, seeds: number): { head: string; mark: string } {
  return {
    head: `Paired against ${p.baseline} over ${seeds} seeds: per-seed difference (variant − ${p.baseline}), mean ± 95 % CI; wins: seeds on which the variant did better as printed (a difference that rounds to a tie is no win)`,
    mark: '† the interval excludes 0',
  };
}

/**
 * The paired block as fixed-width text: per variant other than the baseline, a line of differences and a line of
 * wins, one column per metric.
 */
export function formatPairedBlock(p: PairedBlock, seeds: number): string {
  const others = p.rows.filter((r) => r.name !== p.baseline);
  const notes = pairedNotes(p, seeds);
  if (others.length === 0) return `${notes.head}: no other variant\n`;
  const head = ['', ...p.metrics.map((m) => m.title)];
  const body = others.flatMap((r) => [
    [r.name, ...r.cells.map((c, j) => `${Number.isFinite(c.mean) ? formatDiffCi(p.metrics[j]!.unit, c) : noValueText(c)}${c.excludesZero ? '†' : ' '}`)],
    ['  wins', ...r.cells.map((c) => `${c.wins}/${c.n} `)],
  ]);
  const widths = head.map((h, j) => Math.max(h.length + (j === 0 ? 0 : 1), ...body.map((r) => r[j]!.length)));
  const line = (cells: string[]) => cells.map((c, j) => (j === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  ').trimEnd();
  return [notes.head, line(head.map((h, j) => (j === 0 ? h : `${h} `))), ...body.map(line), '', notes.mark].join('\n') + '\n';
}
