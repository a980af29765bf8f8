import { parseConfigText } from '../util/config-file.ts';
import { ConfigError } from '../util/errors.ts';
import { readTextFile } from '../util/read-file.ts';
import type { ModelSpec } from './types.ts';

/**
 * A model's architecture from its Hugging Face `config.json`, so a catalog entry need not spell out `params`,
 * `kvHeads` and the rest (`models: { my-model: { hfConfig: ./config.json } }`, see README.md).
 *
 * Keys read (the first present and non-null of each list; nested under `text_config` when the top level has no
 * layer count, as multimodal configs do: their vision tower is not counted):
 * - layers: num_hidden_layers | n_layer | n_layers; hiddenSize: hidden_size | n_embd | n_embed | d_model;
 *   heads: num_attention_heads | n_head | n_heads; kvHeads: num_key_value_heads | num_kv_heads (1 when
 *   `multi_query: true`, else heads); headDim: head_dim (else hiddenSize / heads);
 *   intermediateSize: intermediate_size | ffn_dim | n_inner (4 × hidden for the non-gated families when absent);
 *   vocabSize: vocab_size; contextLength: max_position_embeddings | n_positions | max_sequence_length | seq_length |
 *   max_seq_len | n_ctx; bytesPerParam: torch_dtype | dtype (bfloat16 / float16 2, float32 4, float8 1; default 2);
 *   weightBytesPerParam: quantization_config.bits / 8 (GPTQ, AWQ), 1 for quant_method fp8.
 * - tiedEmbeddings: tie_word_embeddings; when absent, the default of the transformers class: true for the
 *   `TIED_BY_DEFAULT` families (GPT-2, OPT, BLOOM, Falcon, Gemma), false otherwise (Llama, Mistral, Qwen2, …).
 *
 * Parameters, for a decoder-only transformer: embedding vocab × hidden, LM head the same unless tied, and per layer
 * attention q + o (2 × hidden × heads × headDim) and k, v (2 × hidden × kvHeads × headDim), the MLP, and norms.
 * - The MLP is gated (gate, up, down: 3 × hidden × intermediate) unless `model_type` (else the class name in
 *   `architectures`) is one of `NON_GATED` (GPT-2, OPT, BLOOM, GPT-NeoX, GPT-J, Falcon, Phi-1/2, …: 2 ×);
 *   an unknown family counts as gated, as every recent one is (Llama, Mistral, Qwen, Gemma, Phi-3, …).
 * - Gated families: RMSNorm, 2 × hidden per layer + hidden at the end; biases only where the config says
 *   (`attention_bias`: q, k, v, o; `mlp_bias`) and on q, k, v for Qwen2 (`QKV_BIAS`). Non-gated families:
 *   LayerNorm with bias (4 × hidden per layer + 2 × hidden) and a bias on every linear layer unless `bias: false`,
 *   `use_bias: false` or `no_bias: true`; learned position
 *   embeddings for GPT-2 / StarCoder (n_positions × hidden) and OPT (max_position_embeddings + 2).
 * - Mixture of experts: `num_local_experts` (Mixtral) | `num_experts` (Qwen-MoE) | `n_routed_experts` (DeepSeek-MoE)
 *   experts of width `moe_intermediate_size` (else intermediate_size), `num_experts_per_tok` of them per token, a
 *   router (experts × hidden), and shared experts always on: `shared_expert_intermediate_size` (Qwen-MoE, with its
 *   hidden × 1 gate) or `n_shared_experts` × the expert width (DeepSeek). Dense layers between them (Qwen's
 *   `decoder_sparse_step` / `mlp_only_layers`, DeepSeek's `first_k_dense_replace` / `moe_layer_freq`) have an MLP of
 *   intermediate_size. `params` counts every expert, `activeParams` those one token uses.
 * Left out (each < 0.01 %): Qwen3's q/k norms, Gemma 2's extra norms, BLOOM's embedding LayerNorm, OPT-350m's
 * projections. Refused: encoder-decoder models and multi-head latent attention (DeepSeek-V2/V3), whose KV cache is
 * not kvHeads × headDim per token.
 */

/** Families with a two-matrix (up, down) MLP; names compared without '_' / '-', lower case. */
export const NON_GATED = ['gpt2', 'gpt_bigcode', 'opt', 'bloom', 'gpt_neox', 'gptj', 'gpt_neo', 'falcon', 'phi', 'codegen', 'mpt', 'starcoder2'] as const;
/** Families whose transformers config class defaults `tie_word_embeddings` to true. */
export const TIED_BY_DEFAULT = ['gpt2', 'gpt_bigcode', 'opt', 'bloom', 'falcon', 'gemma', 'gemma2', 'gemma3_text'] as const;
/** Families whose q, k and v projections have a bias without a config key saying so. */
export const QKV_BIAS = ['qwen2', 'qwen2_moe', 'qwen2_vl'] as const;
/** Families with learned absolute position embeddings, and how many rows beyond the context (OPT's offset of 2). */
const LEARNED_POSITIONS: Readonly<Record<string, number>> = { gpt2: 0, gptbigcode: 0, opt: 2 };

const norm = (s: string): string => s.toLowerCase().replace(/[_-]/g, '');
const inFamily = (family: string, list: readonly string[]): boolean => list.some((f) => norm(f) === family);

/** Where the config came from, for errors: its path and, when it was read from text, the line of a key. */
export interface HfConfigOptions {
  lineOf?: (path: readonly PropertyKey[]) => number | undefined;
  /** The catalog entry's own values: the config's keys for them are then not read (nor required). */
  contextLength?: number;
  bytesPerParam?: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads keys of one config object, throwing ConfigErrors that name the file, line and key. */
class Keys {
  constructor(
    readonly cfg: Obj,
    private readonly top: Obj,
    private readonly source: string,
    private readonly prefix: readonly string[],
    private readonly lineOf?: (path: readonly PropertyKey[]) => number | undefined,
  ) {}

  fail(key: string, expected: string, got?: unknown, atTop = false): never {
    const path = atTop ? [key] : [...this.prefix, key];
    const line = this.lineOf?.(path);
    throw new ConfigError({ source: this.source, ...(line !== undefined ? { line } : {}), path: path.join('.'), expected, ...(got !== undefined ? { got } : {}) });
  }

  /** The first of `keys` present with a non-null value (in the nested config, then at the top level). */
  find(keys: readonly string[], alsoTop = false): { key: string; value: unknown; atTop: boolean } | undefined {
    for (const k of keys) if (Object.hasOwn(this.cfg, k) && this.cfg[k] != null) return { key: k, value: this.cfg[k], atTop: false };
    if (alsoTop && this.top !== this.cfg) for (const k of keys) if (Object.hasOwn(this.top, k) && this.top[k] != null) return { key: k, value: this.top[k], atTop: true };
    return undefined;
  }

  int(keys: readonly string[], what: string): number;
  int(keys: readonly string[], what: string, optional: true): number | undefined;
  int(keys: readonly string[], what: string, optional = false): number | undefined {
    const hit = this.find(keys);
    const expected = `a positive integer (${what})`;
    if (hit === undefined) {
      if (optional) return undefined;
      const alt = keys.length > 1 ? `; also read as ${keys.slice(1).join(', ')}` : '';
      return this.fail(keys[0]!, `${expected} (the key is missing${alt})`);
    }
    if (typeof hit.value !== 'number' || !Number.isInteger(hit.value) || hit.value <= 0) this.fail(hit.key, expected, hit.value);
    return hit.value;
  }

  /** A non-negative integer with a default (a layer step, a count of dense layers). */
  count(key: string, what: string, dflt: number, min = 0): number {
    const hit = this.find([key]);
    if (hit === undefined) return dflt;
    if (typeof hit.value !== 'number' || !Number.isInteger(hit.value) || hit.value < min) this.fail(key, `an integer ≥ ${min} (${what})`, hit.value);
    return hit.value;
  }

  bool(key: string, dflt: boolean, alsoTop = false): boolean {
    const hit = this.find([key], alsoTop);
    if (hit === undefined) return dflt;
    if (typeof hit.value !== 'boolean') this.fail(key, 'true or false', hit.value, hit.atTop);
    return hit.value;
  }
}

const DTYPE_BYTES: Readonly<Record<string, number>> = {
  bfloat16: 2, float16: 2, half: 2, bf16: 2, fp16: 2,
  float32: 4, float: 4, fp32: 4,
  float8_e4m3fn: 1, float8_e5m2: 1, fp8: 1,
};

/**
 * A ModelSpec (less its name) from a parsed Hugging Face `config.json`; `source` names the file in errors. A missing
 * or non-positive required key throws a ConfigError naming the file, the key and what was expected.
 */
export function modelFromHfConfig(json: unknown, source: string, opts: HfConfigOptions = {}): Omit<ModelSpec, 'name'> {
  if (!isObj(json)) throw new ConfigError({ source, expected: 'a JSON object (a Hugging Face config.json)', got: Array.isArray(json) ? 'a list' : json });
  const topKeys: Keys = new Keys(json, json, source, [], opts.lineOf);
  // Multimodal configs (Llava, Mllama, Gemma 3, Qwen2-VL's newer layout) keep the language model under text_config.
  const nested = topKeys.find(['num_hidden_layers', 'n_layer', 'n_layers']) === undefined && isObj(json.text_config);
  const k: Keys = nested ? new Keys(json.text_config as Obj, json, source, ['text_config'], opts.lineOf) : topKeys;

  if (topKeys.bool('is_encoder_decoder', false)) topKeys.fail('is_encoder_decoder', 'a decoder-only model (encoder-decoder models are not supported)', true);
  if (k.find(['kv_lora_rank']) !== undefined) {
    k.fail('kv_lora_rank', 'no multi-head latent attention (DeepSeek-V2/V3 MLA is not supported: its KV cache is not kvHeads × headDim per token; write the model entry by hand)', k.find(['kv_lora_rank'])!.value);
  }

  const typeHit = k.find(['model_type'], true);
  const archs = k.find(['architectures'], true)?.value;
  const cls = Array.isArray(archs) && typeof archs[0] === 'string' ? archs[0].replace(/(ForCausalLM|LMHeadModel|ForConditionalGeneration|Model)$/, '') : '';
  const family = norm(typeof typeHit?.value === 'string' ? typeHit.value : cls);
  const gated = !inFamily(family, NON_GATED);

  const layers = k.int(['num_hidden_layers', 'n_layer', 'n_layers'], 'the number of decoder layers');
  const hidden = k.int(['hidden_size', 'n_embd', 'n_embed', 'd_model'], 'the model width');
  const heads = k.int(['num_attention_heads', 'n_head', 'n_heads'], 'the number of attention heads');
  const kvDefault = k.find(['multi_query'])?.value === true ? 1 : heads;
  const kvHeads = k.int(['num_key_value_heads', 'num_kv_heads'], 'the number of key/value heads', true) ?? kvDefault;
  let headDim = k.int(['head_dim'], 'the width of one attention head', true);
  if (headDim === undefined) {
    if (hidden % heads !== 0) k.fail('head_dim', `a positive integer (the width of one attention head): ${hidden} (hidden_size) is not a multiple of ${heads} (num_attention_heads)`);
    headDim = hidden / heads;
  }
  const vocab = k.int(['vocab_size'], 'the vocabulary size');

  // MoE: how many experts, how many per token, how wide.
  const expertsHit = k.find(['num_local_experts', 'num_experts', 'n_routed_experts']);
  const experts = expertsHit === undefined ? 0 : k.int([expertsHit.key], 'the number of experts');
  const moe = experts > 1;
  const perTok = moe ? k.int(['num_experts_per_tok', 'num_experts_per_token', 'moe_topk'], 'the experts each token is routed to') : 0;
  if (moe && perTok > experts) k.fail('num_experts_per_tok', `at most the ${experts} experts`, perTok);
  const moeWidth = moe ? k.int(['moe_intermediate_size'], 'the width of one expert', true) : undefined;
  const sharedWidth = moe ? k.int(['shared_expert_intermediate_size'], 'the width of the shared expert', true) : undefined;
  const nShared = moe ? k.count('n_shared_experts', 'the number of shared experts', 0) : 0;
  const sparseStep = moe ? k.count('decoder_sparse_step', 'every how many layers an MoE layer comes', 1, 1) : 1;
  const firstDense = moe ? k.count('first_k_dense_replace', 'the number of dense layers before the MoE ones', 0) : 0;
  const layerFreq = moe ? k.count('moe_layer_freq', 'every how many layers an MoE layer comes', 1, 1) : 1;
  const mlpOnly = moe ? k.find(['mlp_only_layers'])?.value ?? [] : [];
  if (!Array.isArray(mlpOnly) || !mlpOnly.every((i) => Number.isInteger(i))) k.fail('mlp_only_layers', 'a list of layer indexes', mlpOnly);
  const isSparse = (i: number): boolean =>
    moe && !(mlpOnly as number[]).includes(i) && (i + 1) % sparseStep === 0 && i >= firstDense && i % layerFreq === 0;
  const sparseLayers = Array.from({ length: layers }, (_, i) => i).filter(isSparse).length;
  const denseLayers = layers - sparseLayers;

  // The dense MLP width: needed by every dense layer, and by MoE experts without moe_intermediate_size.
  const ffnKeys = ['intermediate_size', 'ffn_dim', 'n_inner', 'ffn_hidden_size'];
  const needsDense = denseLayers > 0 || (moe && moeWidth === undefined);
  const intermediate = needsDense
    ? gated ? k.int(ffnKeys, 'the MLP width') : k.int(ffnKeys, 'the MLP width', true) ?? 4 * hidden
    : k.int(ffnKeys, 'the MLP width', true);
  const expertWidth = moeWidth ?? intermediate ?? 0;

  const tied = k.bool('tie_word_embeddings', inFamily(family, TIED_BY_DEFAULT), true);
  // Non-gated families have a bias on every linear layer unless the config turns them off (Falcon `bias: false`,
  // StarCoder2 `use_bias: false`, MPT `no_bias: true`); gated ones only where it turns them on.
  const linearBias = !gated && k.bool('bias', true) && k.bool('use_bias', true) && !k.bool('no_bias', false);
  const attnBias = linearBias || (gated && k.bool('attention_bias', false));
  const mlpBias = linearBias || (gated && k.bool('mlp_bias', false));

  // Per layer.
  const qDim = heads * headDim;
  const kvDim = kvHeads * headDim;
  let attn = 2 * hidden * qDim + 2 * hidden * kvDim;
  let normsPerLayer = 2 * hidden;
  let finalNorm = hidden;
  const mats = gated ? 3 : 2;
  const mlp = (width: number): number => mats * hidden * width + (mlpBias ? (mats - 1) * width + hidden : 0);
  if (attnBias) attn += qDim + 2 * kvDim + hidden; // biases on q, k, v, o
  else if (inFamily(family, QKV_BIAS)) attn += qDim + 2 * kvDim;
  if (!gated) {
    normsPerLayer *= 2; // LayerNorm weight and bias
    finalNorm *= 2;
  }

  const denseMlp = intermediate === undefined ? 0 : mlp(intermediate);
  const shared = sharedWidth !== undefined ? mlp(sharedWidth) + hidden : nShared * (expertWidth > 0 ? mlp(expertWidth) : 0);
  const router = experts * hidden;
  const allExperts = experts * mlp(expertWidth);
  const usedExperts = perTok * mlp(expertWidth);

  let ctx = opts.contextLength;
  if (ctx === undefined) {
    const ctxKeys = ['max_position_embeddings', 'n_positions', 'max_sequence_length', 'seq_length', 'max_seq_len', 'n_ctx'];
    const hit = k.find(ctxKeys);
    ctx = hit === undefined
      ? k.fail(ctxKeys[0]!, `a positive integer (the context length; also read as ${ctxKeys.slice(1).join(', ')}) (the key is missing: set contextLength in the catalog entry)`)
      : k.int([hit.key], 'the context length');
  }
  const learned = Object.hasOwn(LEARNED_POSITIONS, family) ? (k.int(['max_position_embeddings', 'n_positions'], 'the number of learned positions', true) ?? ctx) + LEARNED_POSITIONS[family]! : 0;

  const vocabMats = (tied ? 1 : 2) * vocab * hidden;
  const outside = vocabMats + learned * hidden + finalNorm;
  const common = layers * (attn + normsPerLayer) + denseLayers * denseMlp + sparseLayers * (router + shared);
  const params = outside + common + sparseLayers * allExperts;
  const activeParams = outside + common + sparseLayers * usedExperts;

  let bytesPerParam = opts.bytesPerParam;
  if (bytesPerParam === undefined) {
    const dt = k.find(['torch_dtype', 'dtype'], true);
    if (dt === undefined) bytesPerParam = 2;
    else {
      const b = typeof dt.value === 'string' ? DTYPE_BYTES[dt.value.replace(/^torch\./, '').toLowerCase()] : undefined;
      if (b === undefined) k.fail(dt.key, `one of bfloat16, float16, float32, float8_e4m3fn (or set bytesPerParam in the catalog entry)`, dt.value, dt.atTop);
      bytesPerParam = b;
    }
  }
  const quant = k.find(['quantization_config'], true)?.value;
  let weightBytesPerParam: number | undefined;
  if (isObj(quant)) {
    if (typeof quant.bits === 'number' && quant.bits > 0 && quant.bits <= 32) weightBytesPerParam = quant.bits / 8;
    else if (quant.quant_method === 'fp8') weightBytesPerParam = 1;
  }

  return {
    layers,
    hiddenSize: hidden,
    heads,
    kvHeads,
    headDim,
    ...(intermediate !== undefined || moe ? { intermediateSize: intermediate ?? expertWidth } : {}),
    vocabSize: vocab,
    tiedEmbeddings: tied,
    params,
    activeParams,
    contextLength: ctx,
    bytesPerParam,
    ...(weightBytesPerParam !== undefined ? { weightBytesPerParam } : {}),
    source: `${source} (Hugging Face config.json${nested ? ', text_config' : ''})`,
  };
}

/** Parses a `config.json`'s text (JSON held to JSON; errors name `path` and the line), then {@link modelFromHfConfig}. */
export function parseHfConfig(text: string, path: string, opts: Omit<HfConfigOptions, 'lineOf'> = {}): Omit<ModelSpec, 'name'> {
  // parseConfigText holds a .json file to JSON; another name would be read as YAML, so check it here.
  if (!/\.json$/i.test(path)) {
    try {
      JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (e) {
      throw new ConfigError({ source: path, expected: 'valid JSON (a Hugging Face config.json)', got: (e as Error).message.split('\n')[0] });
    }
  }
  const doc = parseConfigText(text, path);
  return modelFromHfConfig(doc.raw, path, { ...opts, lineOf: doc.lineOf });
}

/** Reads a `config.json` and derives the model from it ({@link parseHfConfig}). */
export function loadHfConfig(path: string, opts: Omit<HfConfigOptions, 'lineOf'> = {}): Omit<ModelSpec, 'name'> {
  let text: string;
  try {
    text = readTextFile(path);
  } catch (e) {
    throw new ConfigError({ source: path, expected: `a readable Hugging Face config.json (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` });
  }
  return parseHfConfig(text, path, opts);
}
