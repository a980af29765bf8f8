import { invariant } from '../util/errors.ts';
import type { BatchShape, DecodeCoeffs, Deployment, PerfModel } from './types.ts';
import { headParams, vocabParams } from '../model/params.ts';
import { kvBytesPerToken } from './memory.ts';
import type { Efficiency } from './efficiency.ts';

/**
 * Analytic step time of one engine iteration on tp × pp devices. With T = new tokens in the step (prefill tokens
 * + one per decoding sequence):
 *
 * - linear layers of the transformer body (all but the embedding and LM head): roofline
 *   max(2 · bodyActive · T / tp FLOP, body weight bytes / tp) per device (mixture-of-experts: the body weight bytes
 *   read grow with T as 1 − (1 − bodyActive/bodyParams)^T of all experts, one expert draw per token);
 * - the LM head, its own kernel: logits for one token per sequence in the batch (the last of each prompt chunk, as
 *   vLLM computes them), max(2 · vocab · hidden · seqs / tp FLOP, head bytes / tp). The embedding is a gather of T
 *   rows, not a matmul: no FLOPs and no read of the table (T · hidden bytes, negligible);
 * - attention, run as its own kernels after the linear layers: prefill 4 · layers · heads · headDim FLOP per
 *   attended (query, key) pair (`prefillAttendTokens`), compute-bound; decode reads each context token's KV once,
 *   max(FLOP, KV bytes) per context token — both linear in context, so the decode cost is A(k) + B · context;
 * - tensor parallelism: 2 ring all-reduces per layer of T · hidden · bytes, each 2(tp − 1)/tp · bytes over the
 *   interconnect plus 2(tp − 1) hop latencies; optionally slower per token past a knee in T (Efficiency.commKneeTokens);
 * - pipeline parallelism: one batch in flight, so an iteration crosses every stage in turn (Σ stage times = the
 *   same work as one stage holding all layers) plus pp − 1 point-to-point activation transfers. No micro-batch
 *   overlap: this is the latency of an iteration, not the throughput of a full pipeline;
 * - a fixed per-step overhead, an extra one for steps with a prefill, a per-sequence overhead, and optionally a
 *   fixed latency per layer (every layer runs once per iteration, whatever tp and pp).
 * Every term is divided by its efficiency factor (Efficiency).
 */
export function rooflinePerfModel(dep: Deployment, eff: Efficiency): PerfModel {
  const { model, hardware, tp, pp } = dep;
  invariant(tp >= 1 && pp >= 1, 'tp and pp are positive');
  const flops = hardware.bf16Flops * eff.compute;
  const bw = hardware.memBandwidthBytesPerS * eff.memory;
  const link = hardware.interconnectBytesPerS * eff.comm;
  const bytes = model.bytesPerParam;

  // The body: every weight but the embedding and the LM head (the catalog checks that activeParams exceeds them).
  const bodyParams = model.params - vocabParams(model);
  const bodyActive = model.activeParams - vocabParams(model);
  invariant(bodyActive > 0, `${model.name}: activeParams must exceed the embedding and LM-head parameters`);
  const bodyFlopsPerToken = (2 * bodyActive) / tp;
  const bodyBytesPerDevice = (bodyParams * (model.weightBytesPerParam ?? bytes)) / tp;
  const headFlopsPerSeq = (2 * headParams(model)) / tp;
  // The head stays 16-bit in quantised checkpoints (see weightsBytes in model/params.ts).
  const headBytesPerDevice = (headParams(model) * bytes) / tp;
  const activeFraction = bodyActive / bodyParams;
  const dense = activeFraction >= 1;
  // Seconds per attended (query, key) pair in prefill, and per context token in decode.
  const attnFlopsPerPair = (4 * model.layers * model.heads * model.headDim) / tp;
  const prefillAttnPerPairS = attnFlopsPerPair / flops;
  const decodeAttnPerTokenS = Math.max(attnFlopsPerPair / flops, kvBytesPerToken(model, tp) / tp / bw);
  // Communication per new token, and its fixed latency per step.
  const msgBytesPerToken = model.hiddenSize * bytes;
  const allReduces = tp > 1 ? 2 * model.layers : 0;
  const ringFactor = (2 * (tp - 1)) / tp;
  const commPerTokenS = (allReduces * ringFactor * msgBytesPerToken) / link + ((pp - 1) * msgBytesPerToken) / link;
  const commFixedS = allReduces * 2 * (tp - 1) * eff.allReduceHopLatencyS + (pp - 1) * eff.allReduceHopLatencyS;

  // Traffic of the tokens past the knee moves at the large-step rate: e.g. knee 2,048, comm 0.6 vs 0.1 ⇒ a
  // 4,096-token step pays 2,048 + 2,048 × 6 token-units of all-reduce. Convex in tokens; decode steps stay below it.
  const kneeTokens = eff.commKneeTokens ?? Infinity;
  const largeStepSlowdown = eff.largeStepComm !== undefined ? eff.comm / Math.min(eff.comm, eff.largeStepComm) : 1;
  const commS = (tokens: number): number =>
    commPerTokenS * (tokens <= kneeTokens ? tokens : kneeTokens + (tokens - kneeTokens) * largeStepSlowdown);
  const linearS = (tokens: number, seqs: number): number => {
    const touched = dense ? 1 : 1 - Math.pow(1 - activeFraction, tokens);
    const body = Math.max((bodyFlopsPerToken * tokens) / flops, (bodyBytesPerDevice * touched) / bw);
    return body + (seqs > 0 ? Math.max((headFlopsPerSeq * seqs) / flops, headBytesPerDevice / bw) : 0);
  };
  // Everything but attention for `tokens` new tokens over `seqs` sequences.
  const layersS = (eff.perLayerOverheadS ?? 0) * model.layers;
  const baseS = (tokens: number, seqs: number): number =>
    eff.stepOverheadS + eff.perSeqOverheadS * seqs + linearS(tokens, seqs) + commFixedS + commS(tokens) + layersS;

  return {
    name: `roofline(${model.name}@${hardware.name} tp${tp}${pp > 1 ? ` pp${pp}` : ''})`,
    stepTimeS(b: BatchShape): number {
      const tokens = b.prefillTokens + b.decodeSeqs;
      return (
        baseS(tokens, b.prefillSeqs + b.decodeSeqs) +
        (b.prefillTokens > 0 ? eff.prefillOverheadS : 0) +
        prefillAttnPerPairS * b.prefillAttendTokens +
        decodeAttnPerTokenS * b.decodeContextTokens
      );
    },
    decodeStepCoeffs(k: number): DecodeCoeffs {
      return { baseS: baseS(k, k), perContextTokenS: decodeAttnPerTokenS };
    },
  };
}
