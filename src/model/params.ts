import type { ModelSpec } from './types.ts';

/** Parameters of the LM head: one vocabSize × hiddenSize matrix. */
export const headParams = (m: ModelSpec): number => m.vocabSize * m.hiddenSize;

/** Parameters of the token embedding and the LM head together: one matrix when they are tied, two if not. */
export const vocabParams = (m: ModelSpec): number => (m.tiedEmbeddings === true ? 1 : 2) * headParams(m);
