import type { HardwareSpec, ModelSpec } from '../model/types.ts';

/** What runs on one instance: a model on tp × pp devices of one kind. */
export interface Deployment {
  model: ModelSpec;
  hardware: HardwareSpec;
  tp: number;
  pp: number;
}

/** The composition of one engine iteration, all that step time may depend on. */
export interface BatchShape {
  /** Prompt tokens computed in this step (sum of prefill chunk lengths). */
  prefillTokens: number;
  /** Sequences with a prefill chunk in this step. */
  prefillSeqs: number;
  /** Σ over prefill chunks of chunk × (tokens already cached + (chunk + 1) / 2): attention work of the chunks. */
  prefillAttendTokens: number;
  /** Sequences decoding one token in this step. */
  decodeSeqs: number;
  /** Σ context length (tokens in KV) of the decoding sequences. */
  decodeContextTokens: number;
}

/**
 * Execution-time model of one deployment. A decode-only step must cost exactly
 * `baseS + perContextTokenS × decodeContextTokens` with the coefficients of `decodeStepCoeffs(k)`: the engine
 * uses this linearity to fast-forward runs of identical decode steps in closed form (DESIGN.md, "speed").
 */
export interface PerfModel {
  readonly name: string;
  /** Seconds for one iteration of a batch that has at least one prefill chunk. */
  stepTimeS(b: BatchShape): number;
  /** Coefficients of a decode-only step with k sequences. */
  decodeStepCoeffs(k: number): DecodeCoeffs;
}

export interface DecodeCoeffs {
  baseS: number;
  perContextTokenS: number;
}

/** KV memory of one instance, in 16-token blocks by default. */
export interface MemoryPlan {
  weightsBytesPerDevice: number;
  kvBytesPerToken: number;
  kvCapacityTokens: number;
  kvBlocks: number;
  blockTokens: number;
}
