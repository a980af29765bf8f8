import type { HardwareSpec } from '../model/types.ts';
import { CALIBRATED_EFFICIENCY } from './calibrated.ts';
import { own } from '../util/own.ts';

/**
 * How far a device falls short of its datasheet in the roofline, plus the fixed costs a roofline cannot see.
 * compute/memory/comm are fractions of peak FLOP/s, memory bandwidth and interconnect bandwidth.
 */
export interface Efficiency {
  compute: number;
  memory: number;
  comm: number;
  /** Fixed cost of one iteration (scheduling, kernel launches, sampling), seconds. */
  stepOverheadS: number;
  /** Extra fixed cost of a step that has a prefill chunk (engines replay CUDA graphs for decode only), seconds. */
  prefillOverheadS: number;
  /** Extra cost per sequence in the batch (sampling, bookkeeping), seconds. */
  perSeqOverheadS: number;
  /**
   * Fixed latency per transformer layer (kernel launches and tails), seconds; omitted = 0. Measured on H100 and
   * H200 with fused, graph-replayed kernels on five models from 1B to a 70B slice: 39–43 µs (docs/fidelity/perf.md).
   */
  perLayerOverheadS?: number;
  /** Latency of one hop of a ring all-reduce (a ring over tp devices has 2(tp − 1) hops), seconds. */
  allReduceHopLatencyS: number;
  /**
   * Steps with more than `commKneeTokens` new tokens move the tensor-parallel traffic of the tokens past the knee at
   * `largeStepComm` (fraction of interconnect bandwidth) instead of `comm`. Fitted on measured profiles, where the
   * per-token cost of large prefills rises past ≈ 1.5–2k tokens for every model and TP (see docs/fidelity/perf.md).
   * Omitted = `comm` throughout.
   */
  commKneeTokens?: number;
  largeStepComm?: number;
}

/**
 * Plausible defaults for a modern engine (vLLM-like, CUDA graphs) on a device nobody has calibrated. The fixed cost
 * of a step was a plausible 4 ms before any measurement; the 40 µs per layer measured since (calibrate --steps) is
 * its share that grows with depth, so the rest (the engine's CPU side, unmeasured) is 4 ms less 32 layers' worth:
 * a 32-layer model (Llama-2-7B, Llama-3.1-8B) keeps the 4 ms, a 1B model (16 layers) pays 3.36 ms, an 80-layer
 * 70B 5.92 ms.
 */
const PER_LAYER_S = 40e-6;
/** The depth at which the per-layer share adds up to the 4 ms step (Llama-2-7B, Llama-3.1-8B). */
export const REFERENCE_LAYERS = 32;
const GPU_NVLINK: Efficiency = {
  compute: 0.6,
  memory: 0.8,
  comm: 0.6,
  stepOverheadS: 4e-3 - REFERENCE_LAYERS * PER_LAYER_S,
  perLayerOverheadS: PER_LAYER_S,
  prefillOverheadS: 2e-3,
  perSeqOverheadS: 2e-5,
  allReduceHopLatencyS: 2e-6,
};
const GPU_PCIE: Efficiency = { ...GPU_NVLINK, comm: 0.5, allReduceHopLatencyS: 8e-6 };
const CPU_AMX: Efficiency = {
  compute: 0.35,
  memory: 0.6,
  comm: 0.5,
  stepOverheadS: 8e-3,
  prefillOverheadS: 2e-3,
  perSeqOverheadS: 1e-4,
  allReduceHopLatencyS: 2e-5,
};

/**
 * Per-hardware defaults. Calibrated values (CALIBRATED_EFFICIENCY, fitted by `llmfleet calibrate` on the bundled
 * SplitwiseSim profile) replace them for the devices they cover when a scenario asks for `calibrated: true`.
 */
export const DEFAULT_EFFICIENCY: Readonly<Record<string, Efficiency>> = {
  'a100-40gb': GPU_NVLINK,
  'a100-80gb': GPU_NVLINK,
  'h100-80gb': GPU_NVLINK,
  h200: GPU_NVLINK,
  mi300x: { ...GPU_NVLINK, compute: 0.45, memory: 0.7 },
  l4: GPU_PCIE,
  a10g: GPU_PCIE,
  a6000: GPU_PCIE,
  rtx4090: GPU_PCIE,
  'xeon-amx': CPU_AMX,
};

/** Interconnect bandwidth from which a device nobody listed is taken for an NVLink-class GPU (PCIe 5 x16: 64 GB/s). */
const NVLINK_CLASS_BYTES_PER_S = 100e9;

/**
 * Efficiency for a device: calibrated factors when there are some, else its default, else the default of its
 * kind (a GPU with ≥ 100 GB/s of interconnect gets the NVLink factors, a slower one the PCIe ones); then the
 * caller's overrides. Only `calibrated: true` uses the calibrated table.
 */
export function efficiencyFor(
  hw: HardwareSpec,
  overrides: Partial<Efficiency> = {},
  opts: { calibrated?: boolean } = {},
): Efficiency {
  const base =
    (opts.calibrated === true ? own(CALIBRATED_EFFICIENCY, hw.name) : undefined) ??
    own(DEFAULT_EFFICIENCY, hw.name) ??
    (hw.kind === 'cpu' ? CPU_AMX : hw.interconnectBytesPerS >= NVLINK_CLASS_BYTES_PER_S ? GPU_NVLINK : GPU_PCIE);
  const out = { ...base };
  for (const [k, v] of Object.entries(overrides) as [keyof Efficiency, number | undefined][]) {
    if (v !== undefined) out[k] = v;
  }
  return out;
}
