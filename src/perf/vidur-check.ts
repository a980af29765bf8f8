import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BUILTIN_CATALOG, type Catalog } from '../model/catalog.ts';
import type { HardwareSpec, ModelSpec } from '../model/types.ts';
import { UserError } from '../util/errors.ts';
import { efficiencyFor, type Efficiency } from './efficiency.ts';
import { checkGroups, noLayerLatency, numberCell, readCsv, type GroupFit, type Obs, type RowGroupCheck } from './measured-check.ts';
import type { BatchShape, Deployment } from './types.ts';

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

export type VidurKeyCheck = RowGroupCheck;
export type VidurFit = GroupFit;

export interface VidurCheckResult {
  source: string;
  keys: VidurKeyCheck[];
  fits: VidurFit[];
  skipped: { file: string; reason: string }[];
}

const oneStep = (tokens: number): BatchShape => ({ prefillTokens: tokens, prefillSeqs: 1, prefillAttendTokens: 0, decodeSeqs: 0, decodeContextTokens: 0 });

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
      // One layer alone: no embedding and no LM head.
      vocabSize: 0,
      params,
      activeParams: params,
      contextLength: 1,
      bytesPerParam: 2,
    };
    const shapeKey = `${heads},${kvHeads},${hidden},${inter},${gated},${tp}`;
    let dep = deps.get(shapeKey);
    if (!dep) deps.set(shapeKey, (dep = { model: layer, hardware: { ...hw, interconnectBytesPerS: Infinity }, tp, pp: 1 }));
    const measuredMs = LAYER_OPS.reduce((s, op) => s + numberCell(row, source, `time_stats.${op}.median`), 0);
    return { key: `${gpu}/${modelName}/tp${tp}`, kind: 'layer' as const, group: gpu, x: tokens, measuredS: measuredMs / 1e3, dep, shape: oneStep(tokens), scale: 1 };
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
    vocabSize: 0,
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
    return [{ key: `${node}/tp${workers}`, kind: 'all-reduce' as const, group: node, x: bytes, measuredS, dep, shape: oneStep(bytes / 2), scale: 0.5 }];
  });
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

  const efficiencyOf = (hw: HardwareSpec, calibrated: boolean): Efficiency => efficiencyFor(hw, {}, { calibrated });
  const checks = [
    // A layer has no all-reduce here (its link is infinitely fast, its hop latency 0); the defaults and the fit add a fixed
    // latency per layer. An all-reduce is checked without the large-step knee and the per-layer latency, whole-step effects.
    checkGroups(layers, ['compute', 'memory', 'perLayerOverheadS'], (e) => ({ ...e, allReduceHopLatencyS: 0 }), efficiencyOf, noLayerLatency),
    checkGroups(comms, ['comm', 'allReduceHopLatencyS'], ({ commKneeTokens: _k, largeStepComm: _l, ...e }) => noLayerLatency(e), efficiencyOf),
  ];
  const keys = checks.flatMap((c) => c.keys);
  const fits = checks.flatMap((c) => c.fits);
  if (keys.length === 0) throw new UserError(`${dir}: found no compute/<gpu>/<org>/<model>/mlp.csv or network/<node>/all_reduce.csv to check`);
  return { source: dir, keys, fits, skipped };
}
