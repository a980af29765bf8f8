import { readFileSync } from 'node:fs';
import { ConfigError } from '../util/errors.ts';
import { readHeadedCsv } from '../util/csv.ts';
import { parseDecimal } from '../util/decimal.ts';
import { MAX_MEASURED_CELL } from './profile-table.ts';
import { minimize, type ErrorStats } from './calibrate.ts';
import type { Efficiency } from './efficiency.ts';
import { rooflinePerfModel } from './roofline.ts';
import type { BatchShape, Deployment, PerfModel } from './types.ts';

/**
 * What the checks of the roofline against measured times share (`vidur-check.ts`: Vidur's operator and all-reduce
 * profiles; `step-check.ts`: whole engine steps timed on a GPU): each measurement becomes a step of the simulator's
 * own `rooflinePerfModel` to predict, rows are split alternately into training and test per row group, factors
 * are fitted per device on the training rows, and the error is reported on the test rows.
 */

export type CheckKind = 'layer' | 'all-reduce' | 'prefill' | 'decode' | 'mixed' | 'prefix';

export interface Obs {
  /** Row group, e.g. `<gpu>/<model>/tp<k>`; rows of a key share one deployment. */
  key: string;
  kind: CheckKind;
  /** The device (or node) whose factors are fitted together. */
  group: string;
  /** Size the rows of a key are sorted (and split) by: tokens, bytes. */
  x: number;
  /** The row's shape in words, for the samples (default: x). */
  label?: string;
  measuredS: number;
  split: 'train' | 'test';
  /** Whether the fit may use this row (default true): rows of a variant timed only for comparison are not. */
  fit?: boolean;
  dep: Deployment;
  shape: BatchShape;
  /** Fraction of the step's time the row measures (½ for an all-reduce: a layer has two). */
  scale: number;
}

export interface RowGroupCheck {
  key: string;
  kind: CheckKind;
  /** Hardware whose datasheet the roofline used. */
  hardware: string;
  tp: number;
  /** Held-out error with the uncalibrated defaults, with `calibrated: true` (where calibrated.ts has the device), and with the factors fitted here. */
  test: { default: ErrorStats; calibrated?: ErrorStats; fitted: ErrorStats };
  /** Measured and predicted ms at a few sizes, for the eye. */
  samples: { x: number; label: string; measuredMs: number; defaultMs: number; fittedMs: number }[];
}

export interface GroupFit {
  group: string;
  /** The kinds of rows fitted on, joined by '+' (e.g. 'layer', 'prefill+decode'). */
  kind: string;
  hardware: string;
  fitted: Partial<Efficiency>;
  trainLoss: number;
}

/** The engine's CPU-side costs: no measurement here includes them, so they are zero on the roofline's side too. */
const NO_OVERHEADS = { stepOverheadS: 0, prefillOverheadS: 0, perSeqOverheadS: 0 } as const;

/** Predicts rows under one set of factors, building the roofline once per deployment. */
function predictor(eff: Efficiency): (o: Obs) => number {
  const models = new Map<Deployment, PerfModel>();
  return (o) => {
    let pm = models.get(o.dep);
    if (!pm) models.set(o.dep, (pm = rooflinePerfModel(o.dep, { ...eff, ...NO_OVERHEADS })));
    return pm.stepTimeS(o.shape) * o.scale;
  };
}

export type CsvRow = { line: number; get: (c: string) => string; has: (c: string) => boolean };

/** A headed CSV of numbers and words; identical data rows are dropped (Vidur's files repeat some). */
export function readCsv(path: string, source: string, required: readonly string[]): CsvRow[] {
  const { header, col, rows } = readHeadedCsv(readFileSync(path, 'utf8'), source, required);
  const seen = new Set<string>();
  const out: CsvRow[] = [];
  for (const { line, cells } of rows) {
    // The all-reduce files start with a pandas row index, which differs between duplicate rows.
    const identity = (header[0] === '' ? cells.slice(1) : cells).join(',');
    if (seen.has(identity)) continue;
    seen.add(identity);
    out.push({ line, get: (c) => cells[col.get(c)!]!, has: (c) => col.has(c) });
  }
  return out;
}

export function numberCell(row: CsvRow, source: string, c: string, integer = false): number {
  const s = row.get(c);
  const v = parseDecimal(s);
  if (!Number.isFinite(v) || v < 0 || v > MAX_MEASURED_CELL || (integer && !Number.isInteger(v))) {
    throw new ConfigError({ source, line: row.line, path: c, expected: `${integer ? 'a non-negative integer' : 'a non-negative number'} ≤ 1e9`, got: s });
  }
  return v;
}

/** Alternate rows of each group (sorted by size) to training and test. */
export function splitAlternate(obs: Omit<Obs, 'split'>[]): Obs[] {
  const byKey = new Map<string, Omit<Obs, 'split'>[]>();
  for (const o of obs) {
    const g = byKey.get(o.key);
    if (g) g.push(o);
    else byKey.set(o.key, [o]);
  }
  return [...byKey.values()].flatMap((g) => g.sort((a, b) => a.x - b.x).map((o, i) => ({ ...o, split: i % 2 === 0 ? ('train' as const) : ('test' as const) })));
}

function stats(obs: readonly Obs[], eff: Efficiency): ErrorStats {
  if (obs.length === 0) return { mape: NaN, maxApe: NaN, n: 0 };
  const predict = predictor(eff);
  let sum = 0;
  let max = 0;
  for (const o of obs) {
    const ape = (Math.abs(predict(o) - o.measuredS) / o.measuredS) * 100;
    sum += ape;
    max = Math.max(max, ape);
  }
  return { mape: sum / obs.length, maxApe: max, n: obs.length };
}

const FIT_ROWS = 40;

/** Fits `params` in log space (fractions capped at 1) on the training rows the fit may use. */
function fit(obs: readonly Obs[], start: Efficiency, params: readonly (keyof Efficiency)[]): { eff: Efficiency; loss: number } {
  // At most FIT_ROWS training rows per row group, evenly spread over its sizes: the grids are dense (up to 1,124
  // training rows in a group) and a few thousand rows per loss evaluation made the fit take 18 s instead of 2.
  const train = [...new Set(obs.map((o) => o.key))].flatMap((key) => {
    const rows = obs.filter((o) => o.key === key && o.split === 'train' && o.fit !== false);
    const n = Math.min(FIT_ROWS, rows.length);
    return Array.from({ length: n }, (_, i) => rows[Math.round((i * (rows.length - 1)) / Math.max(1, n - 1))]!);
  });
  const toEff = (u: readonly number[]): Efficiency => {
    const e: Efficiency = { ...start };
    params.forEach((p, i) => {
      const v = Math.exp(u[i]!);
      e[p] = p === 'compute' || p === 'memory' || p === 'comm' ? Math.min(1, v) : v;
    });
    return e;
  };
  const loss = (u: number[]): number => {
    const predict = predictor(toEff(u));
    return train.reduce((s, o) => s + Math.abs(Math.log(predict(o) / o.measuredS)), 0) / train.length;
  };
  const r = minimize(loss, params.map((p) => Math.log(Math.max(1e-6, start[p] ?? 1e-6))));
  return { eff: toEff(r.x), loss: r.fx };
}

/**
 * Fits start from no per-layer latency: the fit is local, and from 0 it finds the 39–43 µs measured on the H100 and
 * H200 steps, while from the 40 µs default it stopped on the H100 at memory 1.0 and 61.5 µs, a worse fit.
 */
export const noLayerLatency = (e: Efficiency): Efficiency => ({ ...e, perLayerOverheadS: 0 });

/**
 * Per group: fits `params` starting from `fitFrom(only(default factors))`, then reports every key's held-out error under
 * the default, calibrated and fitted factors. Keys come out sorted by name, then TP.
 */
export function checkGroups(
  all: Omit<Obs, 'split'>[],
  params: readonly (keyof Efficiency)[],
  only: (e: Efficiency) => Efficiency,
  efficiencyOf: (hw: Deployment['hardware'], calibrated: boolean) => Efficiency,
  /** The fit's starting point, from the defaults (the fit is local: a different start can end elsewhere). */
  fitFrom: (e: Efficiency) => Efficiency = (e) => e,
): { keys: RowGroupCheck[]; fits: GroupFit[] } {
  const obs = splitAlternate(all);
  const keys: RowGroupCheck[] = [];
  const fits: GroupFit[] = [];
  for (const group of [...new Set(obs.map((o) => o.group))]) {
    const mine = obs.filter((o) => o.group === group);
    const hw = mine[0]!.dep.hardware;
    const base = only(efficiencyOf(hw, false));
    const calibrated = only(efficiencyOf(hw, true));
    const hasCalibrated = JSON.stringify(calibrated) !== JSON.stringify(base);
    const f = fit(mine, fitFrom(base), params);
    const fittedKinds = [...new Set(mine.filter((o) => o.fit !== false).map((o) => o.kind))];
    fits.push({ group, kind: fittedKinds.join('+'), hardware: hw.name, fitted: Object.fromEntries(params.map((p) => [p, f.eff[p]])), trainLoss: f.loss });
    const [atBase, atFit] = [predictor(base), predictor(f.eff)];
    const tpOf = new Map(mine.map((o) => [o.key, o.dep.tp]));
    for (const key of [...tpOf.keys()].sort((a, b) => a.replace(/tp\d+$/, '').localeCompare(b.replace(/tp\d+$/, '')) || tpOf.get(a)! - tpOf.get(b)!)) {
      const rows = mine.filter((o) => o.key === key);
      const test = rows.filter((o) => o.split === 'test');
      const picks = [rows[0]!, rows[Math.floor(rows.length / 2)]!, rows[rows.length - 1]!];
      keys.push({
        key,
        kind: rows[0]!.kind,
        hardware: hw.name,
        tp: rows[0]!.dep.tp,
        test: { default: stats(test, base), ...(hasCalibrated ? { calibrated: stats(test, calibrated) } : {}), fitted: stats(test, f.eff) },
        samples: picks.map((o) => ({ x: o.x, label: o.label ?? String(o.x), measuredMs: o.measuredS * 1e3, defaultMs: atBase(o) * 1e3, fittedMs: atFit(o) * 1e3 })),
      });
    }
  }
  return { keys, fits };
}
