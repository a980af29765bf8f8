import type { HardwareSpec, ModelSpec } from '../model/types.ts';

const GiB = 2 ** 30;

/**
 * The batch limits vLLM picks for itself when its server is started without --max-num-seqs /
 * --max-num-batched-tokens, for `engine.maxNumSeqs: auto` / `engine.maxBatchedTokens: auto`:
 *
 * - V1 (`scheduler: vllm`), OpenAI API server: 1,024 sequences and 8,192 tokens on a GPU with at least 70 GiB that
 *   is not an A100 (H100, H200, MI300X), else 256 and 2,048; on a CPU 128 and 2,048 per socket (× tp × pp)
 *   (vllm/engine/arg_utils.py, `get_batch_defaults`);
 * - V0 without chunked prefill (`scheduler: vllm-v0`): 256 sequences and max(max_model_len, 2,048) tokens, so a
 *   whole prompt always fits one step (SchedulerConfig).
 *
 * Our fixed defaults (256 / 8,192) stay the scenario default: every documented run uses them.
 */
export function vllmAutoLimits(
  scheduler: 'vllm' | 'vllm-v0',
  hardware: HardwareSpec,
  model: ModelSpec,
  worldSize: number,
): { maxNumSeqs: number; maxBatchedTokens: number } {
  if (scheduler === 'vllm-v0') return { maxNumSeqs: 256, maxBatchedTokens: Math.max(model.contextLength, 2048) };
  if (hardware.kind === 'cpu') return { maxNumSeqs: 128 * worldSize, maxBatchedTokens: 2048 * worldSize };
  const large = hardware.memoryBytes >= 70 * GiB && !hardware.name.startsWith('a100');
  return large ? { maxNumSeqs: 1024, maxBatchedTokens: 8192 } : { maxNumSeqs: 256, maxBatchedTokens: 2048 };
}
