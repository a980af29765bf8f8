import { BUILTIN_CATALOG, type Catalog } from '../model/catalog.ts';
import type { HardwareSpec, ModelSpec } from '../model/types.ts';
import { ConfigError } from '../util/errors.ts';
import { efficiencyFor, REFERENCE_LAYERS, type Efficiency } from './efficiency.ts';
import { keyString, median, type ProfileRow, type ProfileTable } from './profile-table.ts';
import { rooflinePerfModel } from './roofline.ts';
import type { BatchShape, Deployment } from './types.ts';
import { own } from '../util/own.ts';

/**
 * Fits the roofline's efficiency factors to a SplitwiseSim-format profile and measures the error on grid points
 * held out of the fit.
 *
 * What a profile row means (SplitwiseSim's profiling runs): `batch_size` prompts of `prompt_size` tokens are
 * prefilled in one step (`prompt_time`), then the batch decodes together; `token_time` is the mean decode step,
 * so e2e ≈ prompt_time + generated × token_time. Runs often stop before `token_size` (EOS), so the generated
 * count is read back from the row as (e2e − prompt_time) / token_time, capped at token_size, and the decode is
 * evaluated at the mean context prompt_size + generated / 2 per sequence.
 *
 * Split: per key (model, hardware, tp) the grid points are sorted by tokens (prompt × batch, then the rest) and
 * alternate points go to training and test, so both ends of every curve are trained on and the test points sit
 * between them. Factors are fitted per profile hardware over all its models and TPs together (one set per
 * device, as the roofline uses them), minimising the mean |log(predicted / measured)| of prefill and decode
 * (L1 in log space: robust to the few grid points that are clearly broken measurements).
 */

export interface CalibrationOptions {
  /** Profile model key → catalog model id, for keys whose names differ (e.g. SageServe's anonymised A–D). */
  modelMap?: Readonly<Record<string, string>>;
  catalog?: Catalog;
  /** Fit one set of factors per profile hardware (default, what the roofline uses) or per key (diagnostic). */
  fitPer?: 'hardware' | 'key';
  /** Fit the large-step communication knee too (default true); false fits the plain roofline (ablation). */
  largeStepComm?: boolean;
  /** Starting factors (default: the uncalibrated per-hardware defaults). */
  start?: (hw: HardwareSpec) => Efficiency;
}

/** One grid point turned into a step to predict. */
interface Obs {
  key: string;
  /** `prompt×batch` (prefill) or `prompt×batch×tokens` (decode). */
  point: string;
  phase: 'prefill' | 'decode';
  shape: BatchShape;
  measuredS: number;
  split: 'train' | 'test';
  dep: Deployment;
}

export interface ErrorStats {
  /** Mean absolute percentage error, in percent. */
  mape: number;
  maxApe: number;
  n: number;
}

export interface KeyCalibration {
  key: string;
  model: string;
  hardware: string;
  tp: number;
  prefill: { train: ErrorStats; test: ErrorStats };
  decode: { train: ErrorStats; test: ErrorStats };
}

export interface HardwareCalibration {
  /** The profile's hardware key, e.g. `h100-80gb-pcap`. */
  profileHardware: string;
  /** The catalog device whose datasheet numbers the roofline used. */
  catalogHardware: string;
  efficiency: Efficiency;
  /** Factors the rows cannot tell and that kept their starting values (TP traffic when every row is at TP 1). */
  notFitted: (keyof Efficiency)[];
  trainLoss: number;
}

export interface CalibrationResult {
  source: string;
  hardware: HardwareCalibration[];
  keys: KeyCalibration[];
  skipped: { key: string; reason: string }[];
  /** Grid points faster than the datasheet allows (broken measurements), left out of fit and error. */
  excluded: { key: string; phase: 'prefill' | 'decode'; point: string; measuredS: number; lowerBoundS: number }[];
}

/** Catalog device for a profile hardware key: itself, or the base of a `-pcap` (power-capped) variant. */
function catalogHardwareFor(name: string, catalog: Catalog): HardwareSpec | undefined {
  const base = Object.hasOwn(catalog.hardware, name) ? name : name.replace(/-pcap$/, '');
  return Object.hasOwn(catalog.hardware, base) ? catalog.hardware[base] : undefined;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const g = m.get(k);
    if (g) g.push(it);
    else m.set(k, [it]);
  }
  return m;
}

/** Observations of one key: prefill per (prompt, batch), decode per (prompt, batch, tokens), alternately split. */
function observations(rows: readonly ProfileRow[], dep: Deployment, key: string): Obs[] {
  const out: Obs[] = [];
  const prefillGroups = [...groupBy(rows, (r) => `${r.promptSize}x${r.batchSize}`).values()].sort(
    (a, b) => a[0]!.promptSize * a[0]!.batchSize - b[0]!.promptSize * b[0]!.batchSize || a[0]!.batchSize - b[0]!.batchSize,
  );
  prefillGroups.forEach((g, i) => {
    const p = g[0]!.promptSize;
    const b = g[0]!.batchSize;
    out.push({
      key,
      point: `${p}x${b}`,
      phase: 'prefill',
      shape: {
        prefillTokens: p * b,
        prefillSeqs: b,
        prefillAttendTokens: (b * p * (p + 1)) / 2,
        decodeSeqs: 0,
        decodeContextTokens: 0,
      },
      measuredS: median(g.map((r) => r.promptTimeS)),
      split: i % 2 === 0 ? 'train' : 'test',
      dep,
    });
  });
  const decodeGroups = [...groupBy(rows, (r) => `${r.promptSize}x${r.batchSize}x${r.tokenSize}`).values()].sort(
    (a, b) =>
      a[0]!.batchSize - b[0]!.batchSize || a[0]!.promptSize - b[0]!.promptSize || a[0]!.tokenSize - b[0]!.tokenSize,
  );
  decodeGroups.forEach((g, i) => {
    const p = g[0]!.promptSize;
    const k = g[0]!.batchSize;
    const generated = median(
      g.map((r) =>
        r.e2eTimeS === undefined
          ? r.tokenSize
          : Math.min(r.tokenSize, Math.max(1, Math.round((r.e2eTimeS - r.promptTimeS) / r.tokenTimeS))),
      ),
    );
    out.push({
      key,
      point: `${p}x${k}x${g[0]!.tokenSize}`,
      phase: 'decode',
      shape: { prefillTokens: 0, prefillSeqs: 0, prefillAttendTokens: 0, decodeSeqs: k, decodeContextTokens: k * (p + generated / 2) },
      measuredS: median(g.map((r) => r.tokenTimeS)),
      split: i % 2 === 0 ? 'train' : 'test',
      dep,
    });
  });
  return out;
}

/** The datasheet roofline with no overheads: nothing real can be faster. */
const PEAK: Efficiency = { compute: 1, memory: 1, comm: 1, stepOverheadS: 0, prefillOverheadS: 0, perSeqOverheadS: 0, allReduceHopLatencyS: 0 };

function predict(o: Obs, eff: Efficiency): number {
  const pm = rooflinePerfModel(o.dep, eff);
  if (o.phase === 'prefill') return pm.stepTimeS(o.shape);
  const c = pm.decodeStepCoeffs(o.shape.decodeSeqs);
  return c.baseS + c.perContextTokenS * o.shape.decodeContextTokens;
}

function stats(obs: readonly Obs[], eff: Efficiency): ErrorStats {
  if (obs.length === 0) return { mape: NaN, maxApe: NaN, n: 0 };
  let sum = 0;
  let max = 0;
  for (const o of obs) {
    const ape = (Math.abs(predict(o, eff) - o.measuredS) / o.measuredS) * 100;
    sum += ape;
    max = Math.max(max, ape);
  }
  return { mape: sum / obs.length, maxApe: max, n: obs.length };
}

// Parameters live in log space; the fractions are capped at 1.
const ROOFLINE_PARAMS = ['compute', 'memory', 'comm', 'stepOverheadS', 'prefillOverheadS', 'perSeqOverheadS', 'allReduceHopLatencyS'] as const;
const KNEE_PARAMS = ['commKneeTokens', 'largeStepComm'] as const;
type Param = (typeof ROOFLINE_PARAMS)[number] | (typeof KNEE_PARAMS)[number];
const FRACTIONS = new Set<Param>(['compute', 'memory', 'comm', 'largeStepComm']);

function toEff(params: readonly Param[], u: readonly number[]): Efficiency {
  const e = {} as Efficiency;
  params.forEach((p, i) => {
    const v = Math.exp(u[i]!);
    e[p] = FRACTIONS.has(p) ? Math.min(1, v) : v;
  });
  return e;
}

function loss(obs: readonly Obs[], eff: Efficiency): number {
  // Prefill and decode weigh the same whatever their counts.
  let pre = 0;
  let nPre = 0;
  let dec = 0;
  let nDec = 0;
  for (const o of obs) {
    const l = Math.abs(Math.log(predict(o, eff) / o.measuredS));
    if (o.phase === 'prefill') {
      pre += l;
      nPre++;
    } else {
      dec += l;
      nDec++;
    }
  }
  return (nPre ? pre / nPre : 0) + (nDec ? dec / nDec : 0);
}

/** Plain Nelder–Mead (deterministic); returns the best point found. */
export function nelderMead(f: (x: number[]) => number, x0: number[], step: number, iterations: number): { x: number[]; fx: number } {
  const n = x0.length;
  let simplex = [x0, ...x0.map((_, i) => x0.map((v, j) => (j === i ? v + step : v)))].map((x) => ({ x, fx: f(x) }));
  for (let it = 0; it < iterations; it++) {
    simplex.sort((a, b) => a.fx - b.fx);
    const best = simplex[0]!;
    const worst = simplex[n]!;
    const centroid = x0.map((_, j) => simplex.slice(0, n).reduce((s, p) => s + p.x[j]!, 0) / n);
    const along = (t: number): number[] => centroid.map((c, j) => c + t * (worst.x[j]! - c));
    const r = { x: along(-1), fx: 0 };
    r.fx = f(r.x);
    if (r.fx < best.fx) {
      const e = { x: along(-2), fx: 0 };
      e.fx = f(e.x);
      simplex[n] = e.fx < r.fx ? e : r;
    } else if (r.fx < simplex[n - 1]!.fx) {
      simplex[n] = r;
    } else {
      const c = { x: along(r.fx < worst.fx ? -0.5 : 0.5), fx: 0 };
      c.fx = f(c.x);
      if (c.fx < Math.min(worst.fx, r.fx)) simplex[n] = c;
      else {
        // Shrink every vertex halfway towards the best one.
        simplex = simplex.map((p, i) => {
          if (i === 0) return p;
          const x = p.x.map((v, j) => best.x[j]! + 0.5 * (v - best.x[j]!));
          return { x, fx: f(x) };
        });
      }
    }
  }
  simplex.sort((a, b) => a.fx - b.fx);
  return simplex[0]!;
}

const COMM_PARAMS = new Set<Param>(['comm', 'allReduceHopLatencyS', ...KNEE_PARAMS]);

function fit(obs: readonly Obs[], start: Efficiency, withKnee: boolean): { eff: Efficiency; loss: number; notFitted: Param[] } {
  const all: Param[] = withKnee ? [...ROOFLINE_PARAMS, ...KNEE_PARAMS] : [...ROOFLINE_PARAMS];
  // Rows at TP 1 move no tensor-parallel traffic: the communication factors would drift to anything (an all-reduce
  // hop of 141 ms was printed for such a profile), so they keep their starting values.
  const noTp = obs.every((o) => o.dep.tp === 1);
  const params = noTp ? all.filter((p) => !COMM_PARAMS.has(p)) : all;
  const notFitted = noTp ? (['comm', 'allReduceHopLatencyS'] as Param[]) : [];
  const f = (u: number[]): number => loss(obs, { ...start, ...toEff(params, u) });
  const init: Required<Efficiency> = { commKneeTokens: 3000, largeStepComm: start.comm / 6, perLayerOverheadS: 0, ...start };
  const best = minimize(f, params.map((p) => Math.log(Math.max(init[p], 1e-7))));
  const { commKneeTokens: _k, largeStepComm: _l, ...plain } = start;
  return { eff: { ...(noTp ? plain : start), ...toEff(params, best.x) }, loss: best.fx, notFitted };
}

/** Nelder–Mead restarted from its best point with shrinking steps, which gets it out of its early collapses. */
export function minimize(f: (x: number[]) => number, x0: number[]): { x: number[]; fx: number } {
  let best = { x: x0, fx: f(x0) };
  for (const step of [1.5, 0.8, 0.4, 0.2, 0.1]) {
    const r = nelderMead(f, best.x, step, 400);
    if (r.fx <= best.fx) best = r;
  }
  return best;
}

/** Calibrates every key of `table` that maps to catalog models and devices; the others are listed as skipped. */
export function calibrate(table: ProfileTable, opts: CalibrationOptions = {}): CalibrationResult {
  const catalog = opts.catalog ?? BUILTIN_CATALOG;
  // The profile's fixed costs are fitted as per-step ones (its models are too few to tell a per-layer share apart):
  // the fit starts from the defaults with their per-layer share folded into the step at the reference depth.
  const start = opts.start ?? ((hw: HardwareSpec) => foldLayers(efficiencyFor(hw, {}, { calibrated: false })));
  const skipped: CalibrationResult['skipped'] = [];
  const byHardware = new Map<string, { hw: HardwareSpec; obs: Obs[] }>();
  const keyInfo = new Map<string, { model: string; hardware: string; tp: number }>();
  const groups = groupBy(table.rows, (r) => keyString(r));
  for (const key of [...groups.keys()].sort()) {
    const rows = groups.get(key)!;
    const r0 = rows[0]!;
    const modelId = own(opts.modelMap, r0.model) ?? r0.model;
    const model: ModelSpec | undefined = Object.hasOwn(catalog.models, modelId) ? catalog.models[modelId] : undefined;
    const hw = catalogHardwareFor(r0.hardware, catalog);
    if (!model) {
      skipped.push({ key, reason: `model '${r0.model}' is not a catalog model (map it with --map ${r0.model}=ID)` });
      continue;
    }
    if (!hw) {
      skipped.push({ key, reason: `hardware '${r0.hardware}' is not in the catalog` });
      continue;
    }
    const dep: Deployment = { model, hardware: hw, tp: r0.tp, pp: 1 };
    const group = opts.fitPer === 'key' ? key : r0.hardware;
    const entry = byHardware.get(group) ?? { hw, obs: [] };
    entry.obs.push(...observations(rows, dep, key));
    byHardware.set(group, entry);
    keyInfo.set(key, { model: modelId, hardware: r0.hardware, tp: r0.tp });
  }
  if (byHardware.size === 0) {
    throw new ConfigError({
      source: table.source,
      expected: 'rows whose model and hardware are in the catalog',
      got: skipped.map((s) => s.key).join(', '),
    });
  }
  const hardware: HardwareCalibration[] = [];
  const keys: KeyCalibration[] = [];
  const excluded: CalibrationResult['excluded'] = [];
  for (const name of [...byHardware.keys()].sort()) {
    const { hw } = byHardware.get(name)!;
    const obs = byHardware.get(name)!.obs.filter((o) => {
      const lowerBoundS = predict(o, PEAK);
      if (o.measuredS >= lowerBoundS) return true;
      excluded.push({ key: o.key, phase: o.phase, point: o.point, measuredS: o.measuredS, lowerBoundS });
      return false;
    });
    const train = obs.filter((o) => o.split === 'train');
    const { eff, loss: trainLoss, notFitted } = fit(train, start(hw), opts.largeStepComm ?? true);
    hardware.push({ profileHardware: name, catalogHardware: hw.name, efficiency: eff, notFitted, trainLoss });
    for (const [key, kobs] of groupBy(obs, (o) => o.key)) {
      const pick = (phase: Obs['phase'], split: Obs['split']): Obs[] => kobs.filter((o) => o.phase === phase && o.split === split);
      keys.push({
        key,
        ...keyInfo.get(key)!,
        prefill: { train: stats(pick('prefill', 'train'), eff), test: stats(pick('prefill', 'test'), eff) },
        decode: { train: stats(pick('decode', 'train'), eff), test: stats(pick('decode', 'test'), eff) },
      });
    }
  }
  keys.sort((a, b) => a.key.localeCompare(b.key));
  return { source: table.source, hardware, keys, skipped, excluded };
}

function foldLayers({ perLayerOverheadS = 0, ...e }: Efficiency): Efficiency {
  return { ...e, stepOverheadS: e.stepOverheadS + REFERENCE_LAYERS * perLayerOverheadS };
}
