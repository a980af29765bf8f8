/** A device: a GPU or a CPU socket. Units in names: bytes, FLOP/s, bytes/s, USD/h. */
export interface HardwareSpec {
  name: string;
  kind: 'gpu' | 'cpu';
  memoryBytes: number;
  /** Dense bf16/fp16 FLOP/s (no sparsity). For a CPU: AMX bf16 peak of the socket. */
  bf16Flops: number;
  memBandwidthBytesPerS: number;
  /** Per-device bandwidth to its tensor-parallel peers (NVLink/xGMI/PCIe), bytes/s, one direction. */
  interconnectBytesPerS: number;
  /** List price of one device per hour (on-demand cloud), USD. */
  priceUsdPerHour: number;
  /** Devices per server/VM (8 for a DGX/HGX node). */
  devicesPerNode: number;
  source?: string;
}

/** A transformer LLM architecture. */
export interface ModelSpec {
  name: string;
  layers: number;
  hiddenSize: number;
  heads: number;
  /** Key/value heads (GQA); equal to heads for multi-head attention. */
  kvHeads: number;
  headDim: number;
  /** The MLP width, for reference only: the performance model reads `params` and `activeParams`, not this. */
  intermediateSize?: number;
  vocabSize: number;
  /**
   * Whether the LM head reuses the token-embedding matrix (Hugging Face `tie_word_embeddings`): one
   * vocabSize × hiddenSize matrix in `params` instead of two. Default false.
   */
  tiedEmbeddings?: boolean;
  /** Total parameters. */
  params: number;
  /** Parameters touched per token (differs from params for mixture-of-experts). */
  activeParams: number;
  contextLength: number;
  bytesPerParam: number;
  /**
   * Bytes per weight of the transformer body when it is quantised (AWQ/GPTQ int4 ≈ 0.5, int8 = 1); default
   * bytesPerParam. Only the body's weight memory and weight reads shrink: the embedding and LM head (16-bit in such
   * checkpoints), the KV cache, activations and matmul FLOPs stay at bytesPerParam / BF16.
   */
  weightBytesPerParam?: number;
  source?: string;
}
