import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getHardware, getModel } from '../../src/model/catalog.ts';
import { kvBytesPerToken, planMemory } from '../../src/perf/memory.ts';
import type { HardwareSpec } from '../../src/model/types.ts';
import { ConfigError } from '../../src/util/errors.ts';

const round80: HardwareSpec = { ...getHardware('h100-80gb'), name: 'h80', memoryBytes: 80e9 };

test('llama2-70b on 8 × 80 GB at tp 8 holds 1,532,112 KV tokens (worked by hand)', () => {
  // weights 68.977e9 × 2 B / 8 = 17,244,250,000 B per device; KV per token 2·80·8·128·2 = 327,680 B (GQA);
  // free (80e9 − 17,244,250,000) × 8 = 502,046,000,000 B ⇒ 1,532,122.8 tokens ⇒ 95,757 blocks of 16.
  const plan = planMemory(
    { model: getModel('llama2-70b'), hardware: round80, tp: 8, pp: 1 },
    { gpuMemoryUtilization: 1, activationReserveBytes: 0 },
  );
  assert.equal(plan.weightsBytesPerDevice, 17_244_250_000);
  assert.equal(plan.kvBytesPerToken, 327_680);
  assert.equal(plan.kvBlocks, 95_757);
  assert.equal(plan.kvCapacityTokens, 95_757 * 16);
  assert.equal(plan.blockTokens, 16);
});

test('utilisation and activation reserve come off every device before KV', () => {
  // 0.9 × 80e9 = 72e9; minus 17,244,250,000 weights and 1e9 reserve = 53,755,750,000 per device, × 8 devices
  // = 430,046,000,000 B ⇒ 1,312,396.2 tokens ⇒ 82,024 blocks.
  const plan = planMemory(
    { model: getModel('llama2-70b'), hardware: round80, tp: 8, pp: 1 },
    { activationReserveBytes: 1e9 },
  );
  assert.equal(plan.kvBlocks, 82_024);
});

test('pipeline stages pool KV like tensor shards: tp 4 × pp 2 equals tp 8 when kv heads ≥ tp', () => {
  const opts = { gpuMemoryUtilization: 1, activationReserveBytes: 0 };
  const a = planMemory({ model: getModel('llama2-70b'), hardware: round80, tp: 4, pp: 2 }, opts);
  const b = planMemory({ model: getModel('llama2-70b'), hardware: round80, tp: 8, pp: 1 }, opts);
  assert.equal(a.kvBlocks, b.kvBlocks);
});

test('GQA stores kvHeads/heads of the KV of multi-head attention', () => {
  const l7 = getModel('llama2-7b'); // MHA: 2·32·32·128·2 = 524,288 B
  const l8 = getModel('llama3.1-8b'); // GQA 8 of 32: 2·32·8·128·2 = 131,072 B
  assert.equal(kvBytesPerToken(l7), 524_288);
  assert.equal(kvBytesPerToken(l8), 131_072);
  assert.equal(kvBytesPerToken(getModel('llama3.2-3b')), 114_688); // 112 KiB, as SLINFER's table
  const mha70 = { ...getModel('llama2-70b'), kvHeads: 64 };
  assert.equal(kvBytesPerToken(mha70), 8 * kvBytesPerToken(getModel('llama2-70b')));
});

test('with tp above kvHeads each KV head is replicated, so KV per token grows with tp', () => {
  const m = getModel('llama2-70b');
  assert.equal(kvBytesPerToken(m, 8), 327_680);
  assert.equal(kvBytesPerToken(m, 16), 2 * 327_680);
});

test('a model that does not fit throws a ConfigError naming the weights and the usable memory', () => {
  assert.throws(
    () => planMemory({ model: getModel('llama2-70b'), hardware: getHardware('a100-40gb'), tp: 1, pp: 1 }),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /^llama2-70b needs 138 GB of weights .*; 1 × a100-40gb at tp 1 has 39 GB usable$/);
      return true;
    },
  );
  // Fits the weights but leaves no block: 7B weights 13.48 GB + 0.1 GB reserve on 13.58 GB leave 4 MB < one 8 MB block.
  const tiny: HardwareSpec = { ...round80, memoryBytes: 13.58e9 };
  assert.throws(
    () => planMemory({ model: getModel('llama2-7b'), hardware: tiny, tp: 1, pp: 1 }, { gpuMemoryUtilization: 1, activationReserveBytes: 0.1e9 }),
    /room for at least one KV block/,
  );
});

test('bad options are rejected, not replaced by defaults', () => {
  const dep = { model: getModel('llama2-7b'), hardware: getHardware('a100-80gb'), tp: 1, pp: 1 };
  assert.throws(() => planMemory(dep, { gpuMemoryUtilization: 1.5 }), /gpuMemoryUtilization: expected a number in \(0, 1\]/);
  assert.throws(() => planMemory(dep, { blockTokens: 0 }), /blockTokens/);
  assert.throws(() => planMemory({ ...dep, tp: 0 }), /tp\/pp/);
});

test('every catalog model fits on 8 × mi300x and the KV capacity is positive', () => {
  for (const name of ['llama2-7b', 'llama3.1-70b', 'mixtral-8x7b', 'bloom-176b']) {
    const plan = planMemory({ model: getModel(name), hardware: getHardware('mi300x'), tp: 8, pp: 1 });
    assert.ok(plan.kvCapacityTokens > 100_000, name);
  }
});

test('quantised weights leave the rest of the memory to KV; the KV bytes per token do not change', () => {
  const m = getModel('llama3.1-8b');
  const hw = getHardware('rtx4090');
  const bf16 = planMemory({ model: m, hardware: hw, tp: 1, pp: 1 });
  const int4 = planMemory({ model: { ...m, weightBytesPerParam: 0.5 }, hardware: hw, tp: 1, pp: 1 });
  // The body at 0.5 bytes, the embedding and LM head (128256 × 4096 each) kept 16-bit, as AWQ / GPTQ checkpoints do.
  const vocab = 2 * 128256 * 4096;
  assert.equal(int4.weightsBytesPerDevice, (m.params - vocab) * 0.5 + vocab * 2);
  assert.equal(int4.kvBytesPerToken, bf16.kvBytesPerToken);
  // 1.5 bytes per body parameter freed, all of it KV (to within one block).
  const freedTokens = ((m.params - vocab) * 1.5) / bf16.kvBytesPerToken;
  assert.ok(Math.abs(int4.kvCapacityTokens - bf16.kvCapacityTokens - freedTokens) <= 2 * bf16.blockTokens);
});

test('with pipeline stages a tied embedding is held twice (first stage embeds, last stage computes logits), as vLLM does', () => {
  const m = getModel('llama3.2-1b');
  const hw = getHardware('l4');
  const one = planMemory({ model: m, hardware: hw, tp: 1, pp: 1 });
  const two = planMemory({ model: m, hardware: hw, tp: 1, pp: 2 });
  assert.equal(one.weightsBytesPerDevice, m.params * 2);
  assert.equal(two.weightsBytesPerDevice, (m.params + 128256 * 2048) * 2 / 2);
  // An untied model is split as it is.
  const u = getModel('llama3.1-8b');
  assert.equal(planMemory({ model: u, hardware: getHardware('h100-80gb'), tp: 1, pp: 2 }).weightsBytesPerDevice, u.params);
});
