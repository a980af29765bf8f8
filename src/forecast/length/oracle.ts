import type { LengthPredictor } from './types.ts';

/** The true output length: the upper bound every other predictor is compared against. */
export function oracleLength(): LengthPredictor {
  return {
    name: 'oracle',
    predict: (r) => ({ point: r.outputTokens, p10: r.outputTokens, p50: r.outputTokens, p90: r.outputTokens }),
    observe: () => {},
  };
}
