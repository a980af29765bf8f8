import type { ModelSpec } from './types.ts';

/** Parameters of the LM head: one vocabSize × hiddenSize matrix. */
export const headParams = (m: ModelSpec): number => m.vocabSize * m.hiddenSize;

/** Parameters of the token embedding and the LM head together: one matrix when they are tied, two if not. */
export const vocabParams = (m: ModelSpec): number => (m.tiedEmbeddings === true ? 1 : 2) * headParams(m);

/**
 * Bytes of a model's weights: the body at `weightBytesPerParam` (quantised checkpoints), the embedding and LM head at
 * `bytesPerParam` (AWQ / GPTQ checkpoints keep them 16-bit; vLLM quantises the head only when asked to).
 */
export const weightsBytes = (m: ModelSpec): number =>
  (m.params - vocabParams(m)) * (m.weightBytesPerParam ?? m.bytesPerParam) + vocabParams(m) * m.bytesPerParam;
