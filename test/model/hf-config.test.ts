import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getModel, loadCatalogFile, parseCatalogYaml } from '../../src/model/catalog.ts';
import { loadHfConfig, modelFromHfConfig } from '../../src/model/hf-config.ts';
import { MODELS } from '../../src/model/models.ts';
import { ConfigError } from '../../src/util/errors.ts';

// The published config.json of each model (keys that do not bear on the architecture left out).
const LLAMA31_8B = {
  architectures: ['LlamaForCausalLM'], attention_bias: false, hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336,
  max_position_embeddings: 131072, mlp_bias: false, model_type: 'llama', num_attention_heads: 32, num_hidden_layers: 32,
  num_key_value_heads: 8, rms_norm_eps: 1e-5,
  rope_scaling: { factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
  rope_theta: 500000.0, tie_word_embeddings: false, torch_dtype: 'bfloat16', vocab_size: 128256,
};
const LLAMA31_70B = { ...LLAMA31_8B, hidden_size: 8192, intermediate_size: 28672, num_attention_heads: 64, num_hidden_layers: 80 };
const LLAMA32_1B = { ...LLAMA31_8B, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16, head_dim: 64, tie_word_embeddings: true };
const MISTRAL_7B = {
  architectures: ['MistralForCausalLM'], hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, max_position_embeddings: 32768,
  model_type: 'mistral', num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, rms_norm_eps: 1e-5, rope_theta: 10000.0,
  sliding_window: 4096, tie_word_embeddings: false, torch_dtype: 'bfloat16', vocab_size: 32000,
};
const MIXTRAL_8X7B = {
  architectures: ['MixtralForCausalLM'], hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, max_position_embeddings: 32768,
  model_type: 'mixtral', num_attention_heads: 32, num_experts_per_tok: 2, num_hidden_layers: 32, num_key_value_heads: 8,
  num_local_experts: 8, rms_norm_eps: 1e-5, rope_theta: 1e6, sliding_window: null, tie_word_embeddings: false,
  torch_dtype: 'bfloat16', vocab_size: 32000,
};
// Non-gated MLP, LayerNorm and biases everywhere, learned positions; no tie_word_embeddings key (the class default: tied).
const OPT_30B = {
  activation_function: 'relu', architectures: ['OPTForCausalLM'], do_layer_norm_before: true, ffn_dim: 28672, hidden_size: 7168,
  max_position_embeddings: 2048, model_type: 'opt', num_attention_heads: 56, num_hidden_layers: 48, torch_dtype: 'float16',
  vocab_size: 50272, word_embed_proj_dim: 7168,
};
// BLOOM's own key names, no intermediate size (4 × hidden) and no context length (ALiBi).
const BLOOM = { architectures: ['BloomForCausalLM'], model_type: 'bloom', n_embed: 14336, n_layer: 70, num_attention_heads: 112, vocab_size: 250880 };

const near = (got: number, want: number, tol: number, what: string): void =>
  assert.ok(Math.abs(got - want) / want <= tol, `${what}: ${got} vs ${want} (${(((got - want) / want) * 100).toFixed(3)} %)`);

test('configs of Llama 3.1 8B / 70B, Llama 3.2 1B, Mistral 7B and Mixtral 8x7B give the built-in entries (params within 0.02 %)', () => {
  const cases: [keyof typeof MODELS, object][] = [
    ['llama3.1-8b', LLAMA31_8B], ['llama3.1-70b', LLAMA31_70B], ['llama3.2-1b', LLAMA32_1B],
    ['mistral-7b', MISTRAL_7B], ['mixtral-8x7b', MIXTRAL_8X7B],
  ];
  for (const [id, cfg] of cases) {
    const m = modelFromHfConfig(cfg, `${id}/config.json`);
    const b: { [k: string]: unknown } = MODELS[id];
    for (const f of ['layers', 'hiddenSize', 'heads', 'kvHeads', 'headDim', 'intermediateSize', 'vocabSize', 'contextLength', 'bytesPerParam'] as const) {
      assert.equal(m[f], b[f], `${id} ${f}`);
    }
    assert.equal(m.tiedEmbeddings, b.tiedEmbeddings === true, `${id} tiedEmbeddings`);
    near(m.params, b.params as number, 2e-4, `${id} params`);
    near(m.activeParams, b.activeParams as number, 2e-4, `${id} activeParams`);
    assert.match(m.source!, new RegExp(`^${id}/config\\.json`));
  }
  // Exact counts (the safetensors totals): Llama 3.1 8B 8,030,261,248; Mixtral 46,702,792,704 with 12,879,925,248 active.
  assert.equal(modelFromHfConfig(LLAMA31_8B, 'c').params, 8_030_261_248);
  const mix = modelFromHfConfig(MIXTRAL_8X7B, 'c');
  assert.equal(mix.params, 46_702_792_704);
  assert.equal(mix.activeParams, 12_879_925_248);
});

test('non-gated families (OPT, BLOOM, GPT-2): 2-matrix MLP, biases, LayerNorm, learned positions, tied by default', () => {
  const opt = modelFromHfConfig(OPT_30B, 'opt/config.json');
  assert.equal(opt.tiedEmbeddings, true);
  assert.equal(opt.intermediateSize, 28672);
  // The built-in leaves out the biases, LayerNorm biases and the 2050 × 7168 learned positions (+0.06 %).
  near(opt.params, MODELS['opt-30b'].params, 1e-3, 'opt-30b');
  const bloom = modelFromHfConfig(BLOOM, 'bloom/config.json', { contextLength: 2048 });
  assert.deepEqual([bloom.layers, bloom.hiddenSize, bloom.heads, bloom.kvHeads, bloom.headDim, bloom.intermediateSize], [70, 14336, 112, 112, 128, 57344]);
  near(bloom.params, MODELS['bloom-176b'].params, 1e-5, 'bloom-176b');
  const gpt2 = { activation_function: 'gelu_new', architectures: ['GPT2LMHeadModel'], n_ctx: 1024, n_embd: 768, n_head: 12, n_inner: null, n_layer: 12, n_positions: 1024, vocab_size: 50257 };
  const g = modelFromHfConfig(gpt2, 'gpt2/config.json');
  assert.equal(g.params, 124_439_808); // the published count, from the class name alone (no model_type)
  assert.equal(g.contextLength, 1024);
});

test('Qwen2 (qkv bias), Qwen-MoE (shared expert) and DeepSeek-MoE (dense first layer, shared experts) match their published counts', () => {
  const qwen25 = { architectures: ['Qwen2ForCausalLM'], hidden_act: 'silu', hidden_size: 3584, intermediate_size: 18944, max_position_embeddings: 131072, model_type: 'qwen2', num_attention_heads: 28, num_hidden_layers: 28, num_key_value_heads: 4, tie_word_embeddings: false, torch_dtype: 'bfloat16', vocab_size: 152064 };
  assert.equal(modelFromHfConfig(qwen25, 'c').params, 7_615_616_512); // Qwen2.5-7B
  const qwenMoe = { architectures: ['Qwen2MoeForCausalLM'], decoder_sparse_step: 1, hidden_size: 2048, intermediate_size: 5632, max_position_embeddings: 8192, model_type: 'qwen2_moe', moe_intermediate_size: 1408, mlp_only_layers: [], num_attention_heads: 16, num_experts: 60, num_experts_per_tok: 4, num_hidden_layers: 24, num_key_value_heads: 16, shared_expert_intermediate_size: 5632, tie_word_embeddings: false, torch_dtype: 'bfloat16', vocab_size: 151936 };
  const q = modelFromHfConfig(qwenMoe, 'c'); // Qwen1.5-MoE-A2.7B: 14.3B, 2.7B active
  near(q.params, 14.3e9, 3e-3, 'qwen-moe params');
  near(q.activeParams, 2.7e9, 5e-3, 'qwen-moe activeParams');
  const dsMoe = { architectures: ['DeepseekForCausalLM'], model_type: 'deepseek', hidden_size: 2048, intermediate_size: 10944, moe_intermediate_size: 1408, n_routed_experts: 64, n_shared_experts: 2, num_experts_per_tok: 6, first_k_dense_replace: 1, moe_layer_freq: 1, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 16, vocab_size: 102400, max_position_embeddings: 4096, tie_word_embeddings: false, torch_dtype: 'bfloat16' };
  const d = modelFromHfConfig(dsMoe, 'c'); // deepseek-moe-16b: 16.4B, 2.8B active
  near(d.params, 16.4e9, 3e-3, 'deepseek-moe params');
  near(d.activeParams, 2.8e9, 1.5e-2, 'deepseek-moe activeParams');
});

test('text_config of a multimodal config, dtype and quantisation, and refused architectures', () => {
  const mm = { architectures: ['LlavaForConditionalGeneration'], model_type: 'llava', torch_dtype: 'float32', text_config: { ...MISTRAL_7B, torch_dtype: undefined }, vision_config: { hidden_size: 1024 } };
  const m = modelFromHfConfig(mm, 'llava/config.json');
  assert.equal(m.params, modelFromHfConfig(MISTRAL_7B, 'c').params);
  assert.equal(m.bytesPerParam, 4); // the top level's dtype where text_config has none
  assert.match(m.source!, /text_config/);
  assert.throws(() => modelFromHfConfig({ ...mm, text_config: { model_type: 'llama', vocab_size: 32064 } }, 'llava/config.json'),
    /llava\/config\.json text_config\.num_hidden_layers: expected a positive integer \(the number of decoder layers\) \(the key is missing/);

  const awq = modelFromHfConfig({ ...LLAMA31_8B, torch_dtype: 'float16', quantization_config: { bits: 4, quant_method: 'awq' } }, 'c');
  assert.equal(awq.bytesPerParam, 2);
  assert.equal(awq.weightBytesPerParam, 0.5);
  assert.equal(modelFromHfConfig({ ...LLAMA31_8B, torch_dtype: undefined }, 'c').bytesPerParam, 2);
  assert.throws(() => modelFromHfConfig({ ...LLAMA31_8B, torch_dtype: 'int3' }, 'c.json'), /c\.json torch_dtype: expected one of bfloat16, .*got "int3"/);

  assert.throws(() => modelFromHfConfig({ ...LLAMA31_8B, kv_lora_rank: 512 }, 'ds/config.json'), /ds\/config\.json kv_lora_rank: expected no multi-head latent attention/);
  assert.throws(() => modelFromHfConfig({ ...LLAMA31_8B, is_encoder_decoder: true }, 't5.json'), /t5\.json is_encoder_decoder: expected a decoder-only model/);
  assert.throws(() => modelFromHfConfig([1], 'x.json'), /x\.json: expected a JSON object/);
});

test('a missing, non-positive or non-integer key: a ConfigError naming the file, the line and the key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-hf-'));
  const write = (name: string, cfg: object): string => {
    const p = join(dir, name);
    writeFileSync(p, JSON.stringify(cfg, null, 2));
    return p;
  };
  const { num_hidden_layers: _, ...noLayers } = LLAMA31_8B;
  const missing = write('missing.json', noLayers);
  assert.throws(() => loadHfConfig(missing), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.equal(e.message, `${missing} num_hidden_layers: expected a positive integer (the number of decoder layers) (the key is missing; also read as n_layer, n_layers)`);
    return true;
  });
  const zero = write('zero.json', { ...LLAMA31_8B, num_key_value_heads: 0 });
  assert.throws(() => loadHfConfig(zero), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /zero\.json:\d+ num_key_value_heads: expected a positive integer \(the number of key\/value heads\), got 0$/);
    return true;
  });
  assert.throws(() => loadHfConfig(write('neg.json', { ...LLAMA31_8B, hidden_size: -4096 })), /neg\.json:\d+ hidden_size: expected a positive integer .*got -4096/);
  assert.throws(() => loadHfConfig(write('frac.json', { ...LLAMA31_8B, vocab_size: 1.5 })), /frac\.json:\d+ vocab_size: expected a positive integer .*got 1\.5/);
  assert.throws(() => loadHfConfig(write('str.json', { ...LLAMA31_8B, intermediate_size: '14336' })), /str\.json:\d+ intermediate_size: expected a positive integer .*got "14336"/);
  assert.throws(() => loadHfConfig(write('noctx.json', BLOOM)), /noctx\.json max_position_embeddings: expected .*set contextLength in the catalog entry/);
  assert.throws(() => loadHfConfig(write('moe.json', { ...MIXTRAL_8X7B, num_experts_per_tok: undefined })), /moe\.json num_experts_per_tok: expected a positive integer \(the experts each token is routed to\)/);

  const badJson = join(dir, 'bad.json');
  writeFileSync(badJson, '{\n  "hidden_size": 4096,\n}\n');
  assert.throws(() => loadHfConfig(badJson), (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${badJson}:3: expected valid JSON`));
  assert.throws(() => loadHfConfig(join(dir, 'nope.json')), /nope\.json: expected a readable Hugging Face config\.json \(ENOENT\)/);
});

test('a catalog entry with hfConfig: derived fields as the base, the entry overrides them, unknown keys still refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-hfcat-'));
  mkdirSync(join(dir, 'llama'));
  writeFileSync(join(dir, 'llama', 'config.json'), JSON.stringify(LLAMA31_8B, null, 2));
  writeFileSync(join(dir, 'mixtral.json'), JSON.stringify(MIXTRAL_8X7B));
  const catPath = join(dir, 'catalog.yaml');
  writeFileSync(catPath, [
    'models:',
    '  my-llama:',
    '    hfConfig: ./llama/config.json',
    '    contextLength: 8192',
    '    weightBytesPerParam: 0.5',
    '  mixtral-8x7b: { hfConfig: mixtral.json, source: my mixtral }', // replaces the built-in of that id
  ].join('\n'));
  const cat = loadCatalogFile(catPath);
  const m = getModel('my-llama', cat);
  assert.equal(m.name, 'my-llama');
  assert.equal(m.params, 8_030_261_248);
  assert.equal(m.kvHeads, 8);
  assert.equal(m.contextLength, 8192); // overridden
  assert.equal(m.weightBytesPerParam, 0.5);
  assert.equal(m.source, `${join(dir, 'llama', 'config.json')} (Hugging Face config.json)`); // the default source: the config's path
  const mix = getModel('mixtral-8x7b', cat);
  assert.equal(mix.activeParams, 12_879_925_248);
  assert.equal(mix.source, 'my mixtral');
  assert.equal(getModel('mixtral-8x7b').source, MODELS['mixtral-8x7b'].source); // the built-ins untouched

  // parseCatalogYaml reads hfConfig relative to the folder of `source`; a dense model's params set both counts.
  const c2 = parseCatalogYaml('models:\n  x: { hfConfig: llama/config.json, params: 8e9 }\n', join(dir, 'inline.yaml'));
  assert.equal(c2.models.x!.activeParams, 8e9);

  // An unknown key beside hfConfig is still an error at its line.
  assert.throws(() => parseCatalogYaml('models:\n  x:\n    hfConfig: llama/config.json\n    ctx: 4096\n', join(dir, 'c.yaml')),
    /c\.yaml:4 models\.x\.ctx: expected no unknown key here/);
  // A missing config file: named at the catalog's line, with the path it looked for.
  assert.throws(() => parseCatalogYaml('models:\n  x:\n    hfConfig: gone/config.json\n', join(dir, 'c.yaml')), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.equal(e.message, `${join(dir, 'c.yaml')}:3 models.x.hfConfig: expected a readable Hugging Face config.json (${join(dir, 'gone', 'config.json')}: ENOENT)`);
    return true;
  });
  // A bad config: named by the config file and key.
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...LLAMA31_8B, num_attention_heads: 0 }, null, 2));
  assert.throws(() => parseCatalogYaml('models:\n  x: { hfConfig: bad.json }\n', join(dir, 'c.yaml')), /bad\.json:\d+ num_attention_heads: expected a positive integer \(the number of attention heads\), got 0/);
  writeFileSync(join(dir, 'broken.json'), '{ "hidden_size": 4096');
  assert.throws(() => parseCatalogYaml('models:\n  x: { hfConfig: broken.json }\n', join(dir, 'c.yaml')), /broken\.json:\d+: expected valid JSON/);
  // A derived value the catalog refuses: the hint names the config and how to override it.
  writeFileSync(join(dir, 'odd.json'), JSON.stringify({ ...LLAMA31_8B, num_key_value_heads: 5 }));
  assert.throws(() => parseCatalogYaml('models:\n  x: { hfConfig: odd.json }\n', join(dir, 'c.yaml')),
    /c\.yaml:2 models\.x\.kvHeads: expected a divisor of heads .*\(derived from .*odd\.json; set kvHeads in the entry to override it\), got 5/);
  // The override fixes it; a context length in the entry stands in for one the config lacks.
  assert.equal(parseCatalogYaml('models:\n  x: { hfConfig: odd.json, kvHeads: 8 }\n', join(dir, 'c.yaml')).models.x!.kvHeads, 8);
  writeFileSync(join(dir, 'bloom.json'), JSON.stringify(BLOOM));
  assert.equal(parseCatalogYaml('models:\n  b: { hfConfig: bloom.json, contextLength: 2048 }\n', join(dir, 'c.yaml')).models.b!.contextLength, 2048);
});
