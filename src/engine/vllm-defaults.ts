import type { HardwareSpec } from '../model/types.ts';

const GiB = 2 ** 30;

/**
 * The batch limits vLLM picks for itself when its server is started without --max-num-seqs /
 * --max-num-batched-tokens, for `engine.maxNumSeqs: auto` / `engine.maxBatchedTokens: auto`. `maxModelLen` is
 * the pool's context length (vLLM's --max-model-len), not the model's maximum; `given` holds the limits the
 * scenario sets as numbers (the defaults are derived around them, as vLLM does with the flags a user passes).
 *
 * - V1 (`scheduler: vllm`), OpenAI API server: 1,024 sequences and 8,192 tokens on a GPU with at least 70 GiB that
 *   is not an A100 (H100, H200, MI300X), else 256 and 2,048; on a CPU 128 and 2,048 per socket (× tp × pp)
 *   (vllm/engine/arg_utils.py, `get_batch_defaults`). Then, in `_set_default_max_num_seqs_and_batched_tokens_args`:
 *   without chunked prefill the token budget is at least max_model_len (a whole prompt must fit one step), it is
 *   at most max_num_seqs × max_model_len, and max_num_seqs is at most the token budget;
 * - V0 without chunked prefill (`scheduler: vllm-v0`): 256 sequences and max(max_model_len, 2,048) tokens, so a
 *   whole prompt always fits one step (SchedulerConfig). vLLM 0.6 turns chunked prefill on by itself for
 *   max_model_len > 32k, which `vllm-v0` does not model.
 *
 * Our fixed defaults (256 / 8,192) stay the scenario default: every documented run uses them.
 */
export function vllmAutoLimits(
  scheduler: 'vllm' | 'vllm-v0',
  hardware: HardwareSpec,
  engine: { maxModelLen: number; chunkedPrefill: boolean; worldSize: number },
  given: { maxNumSeqs?: number; maxBatchedTokens?: number } = {},
): { maxNumSeqs: number; maxBatchedTokens: number } {
  const { maxModelLen, chunkedPrefill, worldSize } = engine;
  if (scheduler === 'vllm-v0') return { maxNumSeqs: given.maxNumSeqs ?? 256, maxBatchedTokens: given.maxBatchedTokens ?? Math.max(maxModelLen, 2048) };
  const large = hardware.memoryBytes >= 70 * GiB && !hardware.name.startsWith('a100');
  const [seqs, tokens] = hardware.kind === 'cpu' ? [128 * worldSize, 2048 * worldSize] : large ? [1024, 8192] : [256, 2048];
  const maxNumSeqs = given.maxNumSeqs ?? seqs;
  const maxBatchedTokens = given.maxBatchedTokens ?? Math.min(chunkedPrefill ? tokens : Math.max(maxModelLen, tokens), maxNumSeqs * maxModelLen);
  return { maxNumSeqs: given.maxNumSeqs ?? Math.min(seqs, maxBatchedTokens), maxBatchedTokens };
}
