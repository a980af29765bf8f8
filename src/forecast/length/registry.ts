import { keyQuantilesLength } from './key-quantiles.ts';
import { noisyOracleLength } from './noisy-oracle.ts';
import { onlineRegressorLength } from './online-regressor.ts';
import { oracleLength } from './oracle.ts';
import type { LengthPredictor } from './types.ts';

/** The noisy oracle's knobs a scenario may set (`prediction.noisy`); the other predictors take none. */
export interface NoisyKnobs {
  biasTokens?: number;
  relativeErrors?: readonly number[];
}

/** Output-length predictors by name; `seed` and `noisy` only matter for the noisy oracle. */
export const lengthPredictors = {
  oracle: (_seed: number) => oracleLength(),
  'noisy-oracle': (seed: number, noisy: NoisyKnobs = {}) => noisyOracleLength({ seed, ...noisy }),
  'key-quantiles': (_seed: number) => keyQuantilesLength(),
  'online-regressor': (_seed: number) => onlineRegressorLength(),
} satisfies Record<string, (seed: number, noisy?: NoisyKnobs) => LengthPredictor>;

export type LengthPredictorName = keyof typeof lengthPredictors;
