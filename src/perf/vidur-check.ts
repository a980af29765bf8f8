import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BUILTIN_CATALOG, type Catalog } from '../model/catalog.ts';
import type { HardwareSpec, ModelSpec } from '../model/types.ts';
import { ConfigError, UserError } from '../util/errors.ts';
import { minimize, type ErrorStats } from './calibrate.ts';
import { efficiencyFor, type Efficiency } from './efficiency.ts';
import { rooflinePerfModel } from './roofline.ts';
import type { BatchShape, Deployment, PerfModel } from './types.ts';

/**
 * Checks the roofline against Vidur's measured GPU profiles (data/profiles/vidur/, copied from microsoft/vidur):
 *
 * - `compute/<gpu>/<org>/<model>/mlp.csv`: one transformer layer on one GPU, everything but attention (the QKV,
 *   output, gate+up and down projections, two RMSNorms, RoPE, the activation, the residual add), median ms per
 *   (shape, TP, tokens in the batch). Compared with the roofline's linear-layer time of that layer.
 * - `network/<gpu>_<topology>/all_reduce.csv`: NCCL fp16 all-reduce, median ms per (GPUs, bytes). Compared with
 *   the roofline's ring all-reduce. Only single-node rows with 2, 4 or 8 GPUs (what tensor parallelism uses).
 *
 * The simulator's own `rooflinePerfModel` is evaluated, not a copy of its formulas: a layer is a one-layer model
 * of the profiled shape with every fixed overhead zero and an infinitely fast link; an all-reduce of B bytes is
 * half a one-token step of a one-layer model (two all-reduces per layer) whose hidden vector is B bytes.
 *
 * Per row group (one layer shape and TP, or one node and GPU count) the rows are sorted by tokens or bytes and
 * alternate rows go to training and test. Per GPU the layer factors (compute, memory, and a fixed latency per
 * layer that the roofline itself lacks) are fitted on the training rows, and per node the link factors (comm, hop
 * latency), minimising mean |log(predicted / measured)| as `calibrate` does; the error is reported on the test
 * rows for the default, the calibrated and the fitted factors.
 */

/** Vidur's GPU folder names → catalog devices (its A100 profiles are from 80 GB DGX A100s). */
const VIDUR_GPUS: Readonly<Record<string, string>> = { a100: 'a100-80gb', h100: 'h100-80gb' };

/** The nine per-layer operators Vidur sums (it never uses `emb`). */
export const LAYER_OPS = [
  'input_layernorm',
  'attn_pre_proj',
  'attn_rope',
  'attn_post_proj',
  'post_attention_layernorm',
  'mlp_up_proj',
  'mlp_act',
  'mlp_down_proj',
  'add',
] as const;

interface Obs {
  /** Row group: `<gpu>/<model>/tp<k>` or `<node>/tp<k>`. */
  key: string;
  /** The catalog device whose factors are fitted (layers: per GPU; all-reduce: per node). */
  group: string;
  /** Tokens (layers) or bytes (all-reduce). */
  x: number;
  measuredS: number;
  split: 'train' | 'test';
  /** The one-layer deployment (shared by the rows of a key) and the step that stands for the row. */
  dep: Deployment;
  shape: BatchShape;
  /** Fraction of the step's time the row measures (½ for an all-reduce: a layer has two). */
  scale: number;
}

/** A layer's fixed latency the fit may add (kernel launches and tails; the roofline has a per-step overhead instead). */
export interface Fitted extends Efficiency {
  layerFixedS?: number;
}

const NO_OVERHEADS = { stepOverheadS: 0, prefillOverheadS: 0, perSeqOverheadS: 0 } as const;

/** Predicts rows under one set of factors, building the roofline once per deployment. */
function predictor(eff: Fitted): (o: Obs) => number {
  const models = new Map<Deployment, PerfModel>();
  return (o) => {
    let pm = models.get(o.dep);
    if (!pm) models.set(o.dep, (pm = rooflinePerfModel(o.dep, { ...eff, ...NO_OVERHEADS })));
    return pm.stepTimeS(o.shape) * o.scale + (eff.layerFixedS ?? 0);
  };
}

const oneStep = (tokens: number): BatchShape => ({ prefillTokens: tokens, prefillSeqs: 1, prefillAttendTokens: 0, decodeSeqs: 0, decodeContextTokens: 0 });

export interface VidurKeyCheck {
  key: string;
  kind: 'layer' | 'all-reduce';
  /** Hardware whose datasheet the roofline used. */
  hardware: string;
  tp: number;
  /** Held-out error with the uncalibrated defaults, with `calibrated: true` (where calibrated.ts has the device), and with the factors fitted here. */
  test: { default: ErrorStats; calibrated?: ErrorStats; fitted: ErrorStats };
  /** Measured and default-roofline ms at a few sizes, for the eye. */
  samples: { x: number; measuredMs: number; defaultMs: number; fittedMs: number }[];
}

export interface VidurFit {
  /** GPU folder (layers) or node folder (all-reduce). */
  group: string;
  kind: 'layer' | 'all-reduce';
  hardware: string;
  /** Layers: compute, memory, layerFixedS; all-reduce: comm, allReduceHopLatencyS. */
  fitted: Partial<Fitted>;
  trainLoss: number;
}

export interface VidurCheckResult {
  source: string;
  keys: VidurKeyCheck[];
  fits: VidurFit[];
  skipped: { file: string; reason: string }[];
}

/** A headed CSV of numbers and words; identical data rows are dropped as Vidur drops them. */
function readCsv(path: string, source: string, required: readonly string[]): { line: number; get: (c: string) => string }[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const header = (lines[0] ?? '').replace(/\r$/, '').split(',');
  const col = new Map(header.map((h, i) => [h.trim(), i]));
  const missing = required.filter((c) => !col.has(c));
  if (missing.length > 0) throw new ConfigError({ source, line: 1, expected: `a header with columns ${required.join(', ')}`, got: `missing ${missing.join(', ')}` });
  const seen = new Set<string>();
  const rows: { line: number; get: (c: string) => string }[] = [];
  lines.forEach((raw, i) => {
    const text = raw.replace(/\r$/, '');
    if (i === 0 || text.trim() === '') return;
    const cells = text.split(',');
    if (cells.length !== header.length) throw new ConfigError({ source, line: i + 1, expected: `${header.length} cells`, got: cells.length });
    // The all-reduce files start with a pandas row index, which differs between duplicate rows.
    const identity = header[0] === '' ? cells.slice(1).join(',') : text;
    if (seen.has(identity)) return;
    seen.add(identity);
    rows.push({ line: i + 1, get: (c) => cells[col.get(c)!]!.trim() });
  });
  return rows;
}

function numberCell(row: { line: number; get: (c: string) => string }, source: string, c: string, integer = false): number {
  const s = row.get(c);
  const v = Number(s);
  if (s === '' || !Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v))) {
    throw new ConfigError({ source, line: row.line, path: c, expected: integer ? 'a non-negative integer' : 'a non-negative number', got: s });
  }
  return v;
}

/** Alternate rows of each group (sorted by size) to training and test. */
function split(obs: Omit<Obs, 'split'>[]): Obs[] {
  const byKey = new Map<string, Omit<Obs, 'split'>[]>();
  for (const o of obs) {
    const g = byKey.get(o.key);
    if (g) g.push(o);
    else byKey.set(o.key, [o]);
  }
  return [...byKey.values()].flatMap((g) => g.sort((a, b) => a.x - b.x).map((o, i) => ({ ...o, split: i % 2 === 0 ? ('train' as const) : ('test' as const) })));
}

const MLP_SHAPE = ['n_head', 'n_kv_head', 'n_embd', 'n_expanded_embd', 'vocab_size', 'use_gated_mlp', 'num_tokens', 'num_tensor_parallel_workers'];

function layerObservations(file: string, source: string, gpu: string, modelName: string, hw: HardwareSpec): Omit<Obs, 'split'>[] {
  const rows = readCsv(file, source, [...MLP_SHAPE, ...LAYER_OPS.map((op) => `time_stats.${op}.median`)]);
  const deps = new Map<string, Deployment>();
  return rows.map((row) => {
    const heads = numberCell(row, source, 'n_head', true);
    const kvHeads = numberCell(row, source, 'n_kv_head', true);
    const hidden = numberCell(row, source, 'n_embd', true);
    const inter = numberCell(row, source, 'n_expanded_embd', true);
    const tp = numberCell(row, source, 'num_tensor_parallel_workers', true);
    const tokens = numberCell(row, source, 'num_tokens', true);
    const gated = row.get('use_gated_mlp') === 'True';
    const headDim = hidden / heads;
    // Q, K, V and output projections, then the MLP's two (or three, gated) matrices.
    const params = hidden * (heads + 2 * kvHeads) * headDim + heads * headDim * hidden + (gated ? 3 : 2) * hidden * inter;
    const layer: ModelSpec = {
      name: modelName,
      layers: 1,
      hiddenSize: hidden,
      heads,
      kvHeads,
      headDim,
      intermediateSize: inter,
      vocabSize: numberCell(row, source, 'vocab_size', true),
      params,
      activeParams: params,
      contextLength: 1,
      bytesPerParam: 2,
    };
    const shapeKey = `${heads},${kvHeads},${hidden},${inter},${gated},${tp}`;
    let dep = deps.get(shapeKey);
    if (!dep) deps.set(shapeKey, (dep = { model: layer, hardware: { ...hw, interconnectBytesPerS: Infinity }, tp, pp: 1 }));
    const measuredMs = LAYER_OPS.reduce((s, op) => s + numberCell(row, source, `time_stats.${op}.median`), 0);
    return { key: `${gpu}/${modelName}/tp${tp}`, group: gpu, x: tokens, measuredS: measuredMs / 1e3, dep, shape: oneStep(tokens), scale: 1 };
  });
}

const ALL_REDUCE_COLS = ['time_stats.all_reduce.median', 'num_workers', 'size', 'devices_per_node'];

function allReduceObservations(file: string, source: string, node: string, hw: HardwareSpec): Omit<Obs, 'split'>[] {
  // One fp16 element per token (hidden size 1): a step of bytes / 2 tokens all-reduces `bytes` twice. The layer
  // has a negligible 1e-12 parameters (0 would make its expert fraction 0/0).
  const model: ModelSpec = {
    name: 'all-reduce',
    layers: 1,
    hiddenSize: 1,
    heads: 1,
    kvHeads: 1,
    headDim: 1,
    intermediateSize: 1,
    vocabSize: 1,
    params: 1e-12,
    activeParams: 1e-12,
    contextLength: 1,
    bytesPerParam: 2,
  };
  const deps = new Map<number, Deployment>();
  return readCsv(file, source, ALL_REDUCE_COLS).flatMap((row) => {
    const workers = numberCell(row, source, 'num_workers', true);
    if (workers !== numberCell(row, source, 'devices_per_node', true) || ![2, 4, 8].includes(workers)) return [];
    const bytes = numberCell(row, source, 'size', true);
    let dep = deps.get(workers);
    if (!dep) deps.set(workers, (dep = { model, hardware: hw, tp: workers, pp: 1 }));
    const measuredS = numberCell(row, source, 'time_stats.all_reduce.median') / 1e3;
    return [{ key: `${node}/tp${workers}`, group: node, x: bytes, measuredS, dep, shape: oneStep(bytes / 2), scale: 0.5 }];
  });
}

function stats(obs: readonly Obs[], eff: Fitted): ErrorStats {
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

/** Fits `params` in log space (fractions capped at 1) on the training rows. */
function fit(obs: readonly Obs[], start: Fitted, params: readonly (keyof Fitted)[]): { eff: Fitted; loss: number } {
  // At most FIT_ROWS training rows per row group, evenly spread over its sizes: the grids are dense (up to 1,124
  // training rows in a group) and a few thousand rows per loss evaluation made the fit take 18 s instead of 2.
  const train = [...new Set(obs.map((o) => o.key))].flatMap((key) => {
    const rows = obs.filter((o) => o.key === key && o.split === 'train');
    const n = Math.min(FIT_ROWS, rows.length);
    return Array.from({ length: n }, (_, i) => rows[Math.round((i * (rows.length - 1)) / Math.max(1, n - 1))]!);
  });
  const toEff = (u: readonly number[]): Fitted => {
    const e: Fitted = { ...start };
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

function subdirs(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort() : [];
}

/** Runs the check over a Vidur `data/profiling` tree (`compute/` and `network/` below `dir`). */
export function checkVidurProfiles(dir: string, catalog: Catalog = BUILTIN_CATALOG): VidurCheckResult {
  if (!existsSync(join(dir, 'compute')) && !existsSync(join(dir, 'network'))) {
    throw new UserError(`${dir}: expected a Vidur profiling folder with compute/ and network/ subfolders`);
  }
  const skipped: VidurCheckResult['skipped'] = [];
  const deviceFor = (folder: string, file: string): HardwareSpec | undefined => {
    const gpu = folder.split('_')[0]!;
    const id = VIDUR_GPUS[gpu] ?? gpu;
    if (Object.hasOwn(catalog.hardware, id)) return catalog.hardware[id];
    skipped.push({ file, reason: `GPU '${gpu}' is not in the catalog (known Vidur names: ${Object.keys(VIDUR_GPUS).join(', ')})` });
    return undefined;
  };
  const layers: Omit<Obs, 'split'>[] = [];
  const comms: Omit<Obs, 'split'>[] = [];
  for (const gpu of subdirs(join(dir, 'compute'))) {
    for (const org of subdirs(join(dir, 'compute', gpu))) {
      for (const model of subdirs(join(dir, 'compute', gpu, org))) {
        const file = join(dir, 'compute', gpu, org, model, 'mlp.csv');
        if (!existsSync(file)) continue;
        const source = relative(process.cwd(), file) || file;
        const hw = deviceFor(gpu, source);
        if (hw) layers.push(...layerObservations(file, source, gpu, model, hw));
      }
    }
  }
  for (const node of subdirs(join(dir, 'network'))) {
    const file = join(dir, 'network', node, 'all_reduce.csv');
    if (!existsSync(file)) continue;
    const source = relative(process.cwd(), file) || file;
    const hw = deviceFor(node, source);
    if (hw) comms.push(...allReduceObservations(file, source, node, hw));
  }

  const keys: VidurKeyCheck[] = [];
  const fits: VidurFit[] = [];
  const check = (all: Omit<Obs, 'split'>[], kind: 'layer' | 'all-reduce', params: readonly (keyof Fitted)[], only: (e: Efficiency) => Fitted) => {
    const obs = split(all);
    for (const group of [...new Set(obs.map((o) => o.group))]) {
      const mine = obs.filter((o) => o.group === group);
      const hw = mine[0]!.dep.hardware;
      const base = only(efficiencyFor(hw));
      const calibrated = only(efficiencyFor(hw, {}, { calibrated: true }));
      const hasCalibrated = JSON.stringify(calibrated) !== JSON.stringify(base);
      const f = fit(mine, base, params);
      fits.push({ group, kind, hardware: hw.name, fitted: Object.fromEntries(params.map((p) => [p, f.eff[p]])), trainLoss: f.loss });
      const [atBase, atFit] = [predictor(base), predictor(f.eff)];
      const tpOf = new Map(mine.map((o) => [o.key, o.dep.tp]));
      for (const key of [...tpOf.keys()].sort((a, b) => a.replace(/tp\d+$/, '').localeCompare(b.replace(/tp\d+$/, '')) || tpOf.get(a)! - tpOf.get(b)!)) {
        const rows = mine.filter((o) => o.key === key);
        const test = rows.filter((o) => o.split === 'test');
        const picks = [rows[0]!, rows[Math.floor(rows.length / 2)]!, rows[rows.length - 1]!];
        keys.push({
          key,
          kind,
          hardware: hw.name,
          tp: rows[0]!.dep.tp,
          test: { default: stats(test, base), ...(hasCalibrated ? { calibrated: stats(test, calibrated) } : {}), fitted: stats(test, f.eff) },
          samples: picks.map((o) => ({ x: o.x, measuredMs: o.measuredS * 1e3, defaultMs: atBase(o) * 1e3, fittedMs: atFit(o) * 1e3 })),
        });
      }
    }
  };
  // A layer has no all-reduce here (its link is infinitely fast, its hop latency 0); the fit may add a fixed
  // latency per layer. An all-reduce is checked without the large-step knee, which is a whole-step effect.
  check(layers, 'layer', ['compute', 'memory', 'layerFixedS'], (e) => ({ ...e, allReduceHopLatencyS: 0, layerFixedS: 0 }));
  check(comms, 'all-reduce', ['comm', 'allReduceHopLatencyS'], ({ commKneeTokens: _k, largeStepComm: _l, ...e }) => e);
  if (keys.length === 0) throw new UserError(`${dir}: found no compute/<gpu>/<org>/<model>/mlp.csv or network/<node>/all_reduce.csv to check`);
  return { source: dir, keys, fits, skipped };
}
