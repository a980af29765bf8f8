import { parsePolicyOptions } from '../options.ts';
import type { PolicyContext } from '../types.ts';
import { none } from './none.ts';
import { reactive } from './reactive.ts';
import type { Scaler, ScalerEntry } from './types.ts';

/** Scaling policies by registered name (`scaling.policy`). `scheduled` (fixed actions at fixed times) is handled by the simulator itself. */
export const scalers = { none, reactive } satisfies Record<string, ScalerEntry>;
export type ScalerName = keyof typeof scalers;
export const SCALER_NAMES = Object.keys(scalers) as [ScalerName, ...ScalerName[]];

export function createScaler(name: ScalerName, options: unknown, ctx: PolicyContext): Scaler {
  const entry: ScalerEntry = scalers[name];
  return entry.make(parsePolicyOptions(entry.options, options, ['scaling', 'options']), ctx);
}
