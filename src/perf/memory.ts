import { ConfigError } from '../util/errors.ts';
import { headParams, weightsBytes as modelWeightsBytes } from '../model/params.ts';
import type { ModelSpec } from '../model/types.ts';
import type { Deployment, MemoryPlan } from './types.ts';

export interface MemoryOptions {
  /** Fraction of each device's memory the engine may use (weights + activations + KV), as vLLM's flag. */
  gpuMemoryUtilization?: number;
  /** Bytes per device kept for activations; default `defaultActivationReserveBytes`. */
  activationReserveBytes?: number;
  /** Tokens per KV block. */
  blockTokens?: number;
}

export const DEFAULT_GPU_MEMORY_UTILIZATION = 0.9;
export const DEFAULT_BLOCK_TOKENS = 16;

/**
 * KV bytes one token adds to the instance: K and V for every layer and KV head. With GQA only kvHeads are stored
 * (llama2-70b: 2 · 80 · 8 · 128 · 2 B = 327,680 B); with tp > kvHeads each KV head is replicated on tp / kvHeads
 * devices, as vLLM does, so the instance stores 2 · layers · tp · headDim · bytes instead.
 */
export function kvBytesPerToken(model: ModelSpec, tp = 1): number {
  const storedHeads = Math.max(model.kvHeads, tp);
  return 2 * model.layers * storedHeads * model.headDim * model.bytesPerParam;
}

/**
 * Activation peak per device that vLLM's memory profiling would find, approximated as a prefill of 8,192 batched
 * tokens × 8 hidden-size-wide bf16 tensors live at once (residual, QKV, MLP intermediate / tp): 0.5 GiB for a 7B,
 * 1 GiB for a 70B. A rough figure: pass `activationReserveBytes` when you know better.
 */
export function defaultActivationReserveBytes(model: ModelSpec): number {
  return 8192 * model.hiddenSize * model.bytesPerParam * 8;
}

const GB = 1e9;
const fmtGb = (b: number): string => `${Math.round(b / GB)} GB`;

/** Throws the one-line ConfigError of a deployment whose weights (+ activation reserve) exceed usable memory. */
export function checkWeightsFit(dep: Deployment, util: number, reserve: number): { weightsBytesPerDevice: number; usablePerDevice: number; where: string } {
  const { model, hardware, tp, pp } = dep;
  const devices = tp * pp;
  // With pp > 1 a tied embedding is held twice: by the first stage (embedding) and the last (LM head), as vLLM does.
  const tiedCopy = model.tiedEmbeddings === true && pp > 1 ? headParams(model) * model.bytesPerParam : 0;
  const weightsBytes = modelWeightsBytes(model) + tiedCopy;
  const weightsBytesPerDevice = weightsBytes / devices;
  const usablePerDevice = hardware.memoryBytes * util;
  const where = `${devices} × ${hardware.name} at tp ${tp}${pp > 1 ? ` pp ${pp}` : ''}`;
  if (weightsBytesPerDevice + reserve >= usablePerDevice) {
    const err = new ConfigError({ path: 'deployment', expected: 'a deployment whose weights fit', got: where });
    err.message =
      `${model.name} needs ${fmtGb(weightsBytes)} of weights (+${fmtGb(reserve * devices)} activations); ` +
      `${where} has ${fmtGb(usablePerDevice * devices)} usable`;
    throw err;
  }
  return { weightsBytesPerDevice, usablePerDevice, where };
}

/**
 * Weights and KV capacity of one instance. Weights split evenly over tp · pp devices; every device keeps the
 * same activation reserve; what is left of `gpuMemoryUtilization × memory` on all devices holds KV (each device
 * holds its share of layers and heads, so capacity pools across devices). Throws a ConfigError when the model
 * does not fit or leaves no room for one KV block.
 */
export function planMemory(dep: Deployment, opts: MemoryOptions = {}): MemoryPlan {
  const { model, tp, pp } = dep;
  const util = opts.gpuMemoryUtilization ?? DEFAULT_GPU_MEMORY_UTILIZATION;
  const blockTokens = opts.blockTokens ?? DEFAULT_BLOCK_TOKENS;
  const reserve = opts.activationReserveBytes ?? defaultActivationReserveBytes(model);
  if (!(util > 0 && util <= 1)) {
    throw new ConfigError({ path: 'gpuMemoryUtilization', expected: 'a number in (0, 1]', got: util });
  }
  if (!Number.isInteger(blockTokens) || blockTokens < 1) {
    throw new ConfigError({ path: 'blockTokens', expected: 'a positive integer', got: blockTokens });
  }
  if (!(reserve >= 0)) throw new ConfigError({ path: 'activationReserveBytes', expected: 'a number ≥ 0', got: reserve });
  if (!Number.isInteger(tp) || tp < 1 || !Number.isInteger(pp) || pp < 1) {
    throw new ConfigError({ path: 'tp/pp', expected: 'positive integers', got: `tp ${tp}, pp ${pp}` });
  }
  const devices = tp * pp;
  const { weightsBytesPerDevice, usablePerDevice, where } = checkWeightsFit(dep, util, reserve);
  const kvPerToken = kvBytesPerToken(model, tp);
  const kvBytes = (usablePerDevice - weightsBytesPerDevice - reserve) * devices;
  const kvBlocks = Math.floor(kvBytes / kvPerToken / blockTokens);
  if (kvBlocks < 1) {
    throw new ConfigError({ path: 'deployment', expected: 'room for at least one KV block', got: where });
  }
  return {
    weightsBytesPerDevice,
    kvBytesPerToken: kvPerToken,
    kvCapacityTokens: kvBlocks * blockTokens,
    kvBlocks,
    blockTokens,
  };
}

/** The engine settings that decide an instance's KV capacity. */
export interface KvSettings {
  kvBlocks?: number;
  kvCapacityTokens?: number;
  blockTokens: number;
  gpuMemoryUtilization: number;
  activationReserveBytes?: number;
}

/**
 * KV blocks of one instance: fixed by `kvBlocks` or `kvCapacityTokens` (the weights must still fit), else planned
 * from memory (planMemory). Throws planMemory's / checkWeightsFit's ConfigError.
 */
export function kvBlocksFor(dep: Deployment, e: KvSettings): number {
  const fixed = e.kvBlocks ?? (e.kvCapacityTokens ? Math.floor(e.kvCapacityTokens / e.blockTokens) : 0);
  if (!fixed) return planMemory(dep, { gpuMemoryUtilization: e.gpuMemoryUtilization, activationReserveBytes: e.activationReserveBytes, blockTokens: e.blockTokens }).kvBlocks;
  checkWeightsFit(dep, e.gpuMemoryUtilization, e.activationReserveBytes ?? defaultActivationReserveBytes(dep.model));
  return fixed;
}
