import { keyQuantilesLength } from './key-quantiles.ts';
import { noisyOracleLength } from './noisy-oracle.ts';
import { onlineRegressorLength } from './online-regressor.ts';
import { oracleLength } from './oracle.ts';
import type { LengthPredictor } from './types.ts';

/** Output-length predictors by name; `seed` only matters for the noisy oracle. */
export const lengthPredictors = {
  oracle: (_seed: number) => oracleLength(),
  'noisy-oracle': (seed: number) => noisyOracleLength({ seed }),
  'key-quantiles': (_seed: number) => keyQuantilesLength(),
  'online-regressor': (_seed: number) => onlineRegressorLength(),
} satisfies Record<string, (seed: number) => LengthPredictor>;

export type LengthPredictorName = keyof typeof lengthPredictors;
