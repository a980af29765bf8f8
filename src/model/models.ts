import type { ModelSpec } from './types.ts';

/**
 * Built-in architectures, from each model's published Hugging Face `config.json` (layers = num_hidden_layers,
 * kvHeads = num_key_value_heads, contextLength = max_position_embeddings) and the parameter counts of their
 * model cards / safetensors index. All weights in bf16/fp16 (2 bytes per parameter).
 */
export const MODELS = {
  'llama2-7b': {
    name: 'llama2-7b', layers: 32, hiddenSize: 4096, heads: 32, kvHeads: 32, headDim: 128, intermediateSize: 11008,
    vocabSize: 32000, params: 6.738e9, activeParams: 6.738e9, contextLength: 4096, bytesPerParam: 2,
    source: 'meta-llama/Llama-2-7b-hf config.json',
  },
  'llama2-13b': {
    name: 'llama2-13b', layers: 40, hiddenSize: 5120, heads: 40, kvHeads: 40, headDim: 128, intermediateSize: 13824,
    vocabSize: 32000, params: 13.016e9, activeParams: 13.016e9, contextLength: 4096, bytesPerParam: 2,
    source: 'meta-llama/Llama-2-13b-hf config.json',
  },
  'llama2-70b': {
    name: 'llama2-70b', layers: 80, hiddenSize: 8192, heads: 64, kvHeads: 8, headDim: 128, intermediateSize: 28672,
    vocabSize: 32000, params: 68.977e9, activeParams: 68.977e9, contextLength: 4096, bytesPerParam: 2,
    source: 'meta-llama/Llama-2-70b-hf config.json (GQA, 8 KV heads)',
  },
  'llama3.1-8b': {
    name: 'llama3.1-8b', layers: 32, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, intermediateSize: 14336,
    vocabSize: 128256, params: 8.03e9, activeParams: 8.03e9, contextLength: 131072, bytesPerParam: 2,
    source: 'meta-llama/Llama-3.1-8B config.json',
  },
  'llama3.1-70b': {
    name: 'llama3.1-70b', layers: 80, hiddenSize: 8192, heads: 64, kvHeads: 8, headDim: 128, intermediateSize: 28672,
    vocabSize: 128256, params: 70.554e9, activeParams: 70.554e9, contextLength: 131072, bytesPerParam: 2,
    source: 'meta-llama/Llama-3.1-70B config.json',
  },
  'llama3.2-1b': {
    name: 'llama3.2-1b', layers: 16, hiddenSize: 2048, heads: 32, kvHeads: 8, headDim: 64, intermediateSize: 8192,
    vocabSize: 128256, tiedEmbeddings: true, params: 1.236e9, activeParams: 1.236e9, contextLength: 131072, bytesPerParam: 2,
    source: 'meta-llama/Llama-3.2-1B config.json (tied embeddings)',
  },
  'llama3.2-3b': {
    name: 'llama3.2-3b', layers: 28, hiddenSize: 3072, heads: 24, kvHeads: 8, headDim: 128, intermediateSize: 8192,
    vocabSize: 128256, tiedEmbeddings: true, params: 3.213e9, activeParams: 3.213e9, contextLength: 131072, bytesPerParam: 2,
    source: 'meta-llama/Llama-3.2-3B config.json (tied embeddings)',
  },
  'llama3.2-11b-vision': {
    name: 'llama3.2-11b-vision', layers: 40, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, intermediateSize: 14336,
    vocabSize: 128256, params: 10.67e9, activeParams: 10.67e9, contextLength: 131072, bytesPerParam: 2,
    source: 'meta-llama/Llama-3.2-11B-Vision config.json text_config (32 self- + 8 cross-attention layers); params include the vision encoder; images not modelled',
  },
  'codellama-34b': {
    name: 'codellama-34b', layers: 48, hiddenSize: 8192, heads: 64, kvHeads: 8, headDim: 128, intermediateSize: 22016,
    vocabSize: 32000, params: 33.744e9, activeParams: 33.744e9, contextLength: 16384, bytesPerParam: 2,
    source: 'codellama/CodeLlama-34b-hf config.json (GQA, 8 KV heads)',
  },
  'mistral-7b': {
    name: 'mistral-7b', layers: 32, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, intermediateSize: 14336,
    vocabSize: 32000, params: 7.242e9, activeParams: 7.242e9, contextLength: 32768, bytesPerParam: 2,
    source: 'mistralai/Mistral-7B-v0.1 config.json (sliding window 4096 not modelled)',
  },
  'mixtral-8x7b': {
    name: 'mixtral-8x7b', layers: 32, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, intermediateSize: 14336,
    vocabSize: 32000, params: 46.703e9, activeParams: 12.88e9, contextLength: 32768, bytesPerParam: 2,
    source: 'mistralai/Mixtral-8x7B-v0.1 config.json (8 experts, top-2: 46.7B total, 12.9B active per token)',
  },
  'opt-30b': {
    name: 'opt-30b', layers: 48, hiddenSize: 7168, heads: 56, kvHeads: 56, headDim: 128, intermediateSize: 28672,
    vocabSize: 50272, tiedEmbeddings: true, params: 29.957e9, activeParams: 29.957e9, contextLength: 2048, bytesPerParam: 2,
    source: 'facebook/opt-30b config.json (ffn_dim 28672)',
  },
  'opt-66b': {
    name: 'opt-66b', layers: 64, hiddenSize: 9216, heads: 72, kvHeads: 72, headDim: 128, intermediateSize: 36864,
    vocabSize: 50272, tiedEmbeddings: true, params: 65.695e9, activeParams: 65.695e9, contextLength: 2048, bytesPerParam: 2,
    source: 'facebook/opt-66b config.json (ffn_dim 36864)',
  },
  'bloom-176b': {
    name: 'bloom-176b', layers: 70, hiddenSize: 14336, heads: 112, kvHeads: 112, headDim: 128, intermediateSize: 57344,
    vocabSize: 250880, tiedEmbeddings: true, params: 176.247e9, activeParams: 176.247e9, contextLength: 2048, bytesPerParam: 2,
    source: 'bigscience/bloom config.json (n_layer 70, n_head 112, 4h MLP; ALiBi, seq_length 2048)',
  },
} as const satisfies Record<string, ModelSpec>;
