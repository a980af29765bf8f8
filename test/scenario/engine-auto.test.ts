import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadScenario } from '../../src/scenario/load.ts';
import { resolvePools } from '../../src/sim/simulator.ts';
import { BUILTIN_CATALOG } from '../../src/model/catalog.ts';
import { ConfigError } from '../../src/util/errors.ts';

const limits = (sets: string[]) => {
  const { scenario, baseDir } = loadScenario({ file: 'scenarios/default.yaml', sets: ['engine.maxNumSeqs=auto', 'engine.maxBatchedTokens=auto', ...sets] });
  const [pool] = resolvePools(scenario, baseDir, 'fast', BUILTIN_CATALOG);
  return [pool!.engine.maxNumSeqs, pool!.engine.maxBatchedTokens];
};

test("engine limits 'auto' are vLLM's own defaults for the pool's scheduler, GPU and model", () => {
  const pool = (model: string, hw: string) => [`fleet.pools.0.model=${model}`, `fleet.pools.0.hardware=${hw}`];
  // V1 API server: 1,024 / 8,192 on ≥ 70 GiB GPUs other than A100, else 256 / 2,048.
  assert.deepEqual(limits(pool('llama3.1-8b', 'h100-80gb')), [1024, 8192]);
  assert.deepEqual(limits(pool('llama3.1-8b', 'h200')), [1024, 8192]);
  assert.deepEqual(limits(pool('llama3.1-8b', 'a100-80gb')), [256, 2048]);
  assert.deepEqual(limits(pool('llama3.1-8b', 'l4')), [256, 2048]);
  assert.deepEqual(limits(pool('llama3.2-1b', 'xeon-amx')), [128, 2048]);
  // V0 without chunked prefill: a whole prompt fits one step, max(max_model_len, 2,048).
  assert.deepEqual(limits([...pool('llama2-7b', 'a100-80gb'), 'engine.scheduler=vllm-v0', 'engine.chunkedPrefill=false']), [256, 4096]);
  // V0 takes the pool's context length (vLLM's --max-model-len), not the model's maximum.
  assert.deepEqual(limits([...pool('llama3.1-8b', 'h100-80gb'), 'fleet.pools.0.contextLength=4096', 'engine.scheduler=vllm-v0', 'engine.chunkedPrefill=false']), [256, 4096]);
  // V1 without chunked prefill: the budget is at least max_model_len, at most max_num_seqs × max_model_len, and
  // max_num_seqs at most the budget (vllm/engine/arg_utils.py, _set_default_max_num_seqs_and_batched_tokens_args).
  assert.deepEqual(limits([...pool('llama3.1-8b', 'h100-80gb'), 'fleet.pools.0.contextLength=32768', 'engine.chunkedPrefill=false']), [1024, 32768]);
  assert.deepEqual(limits([...pool('llama3.1-8b', 'h100-80gb'), 'fleet.pools.0.contextLength=2048', 'engine.chunkedPrefill=false']), [1024, 8192]);
  assert.deepEqual(limits([...pool('llama3.1-8b', 'h100-80gb'), 'fleet.pools.0.contextLength=4', 'engine.maxNumSeqs=2']), [2, 8]);
  assert.deepEqual(limits([...pool('llama3.1-8b', 'h100-80gb'), 'fleet.pools.0.contextLength=4']), [1024, 4096]);
  // A number still wins, and the fixed defaults are unchanged.
  assert.deepEqual(limits([...pool('llama3.1-8b', 'h100-80gb'), 'engine.maxNumSeqs=64']), [64, 8192]);
  const { scenario, baseDir } = loadScenario({ file: 'scenarios/default.yaml', sets: [] });
  const [fixed] = resolvePools(scenario, baseDir, 'fast', BUILTIN_CATALOG);
  assert.deepEqual([fixed!.engine.maxNumSeqs, fixed!.engine.maxBatchedTokens], [256, 8192]);
});

test("'auto' with the splitwise scheduler is an error naming the pool and key", () => {
  assert.throws(
    () => limits(['engine.scheduler=splitwise', 'engine.chunkedPrefill=false']),
    (e: unknown) => e instanceof ConfigError && /fleet\.pools\[0\] engine\.maxNumSeqs: expected a number with scheduler splitwise/.test(e.message),
  );
});
