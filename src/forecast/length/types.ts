import type { TraceRequest } from '../../workload/types.ts';

/** What is known when a request arrives, plus its true output length for the oracles and for `observe`. */
export type LengthRequest = TraceRequest & { promptText?: string };

export interface LengthPrediction {
  /** Point estimate of output tokens (an integer ≥ 1). */
  point: number;
  p10: number;
  p50: number;
  p90: number;
}

/**
 * Predicts a request's output length at arrival. Only `oracle` and `noisy-oracle` read `outputTokens` in
 * `predict`; every other predictor uses only arrival-time features (input tokens, model, app, tier, prompt
 * text) and learns from `observe`, which the caller invokes once the true length is known (completion).
 */
export interface LengthPredictor {
  readonly name: string;
  predict(req: LengthRequest): LengthPrediction;
  observe(req: LengthRequest): void;
}

/** PreServe caps lengths at LLaMA-2's 4,096-token limit (§3.2). */
export const MAX_OUTPUT_TOKENS = 4096;

export function clampTokens(v: number, max = MAX_OUTPUT_TOKENS): number {
  return Math.min(max, Math.max(1, Math.round(v)));
}
