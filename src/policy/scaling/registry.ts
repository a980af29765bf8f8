import { parsePolicyOptions } from '../options.ts';
import type { PolicyContext } from '../types.ts';
import { none } from './none.ts';
import { reactive } from './reactive.ts';
import { sageserveChiron } from './sageserve-chiron.ts';
import { sageserveLtI } from './sageserve-lt-i.ts';
import { sageserveLtU } from './sageserve-lt-u.ts';
import { sageserveLtUa } from './sageserve-lt-ua.ts';
import { sageserveReactive } from './sageserve-reactive.ts';
import { sageserveSiloed } from './sageserve-siloed.ts';
import { preserve } from './preserve.ts';
import { staticCount } from './static.ts';
import type { Scaler, ScalerEntry } from './types.ts';

/** Scaling policies by registered name (`scaling.policy`). `scheduled` (fixed actions at fixed times) is handled by the simulator itself. */
export const scalers = { none, reactive, preserve, static: staticCount,
  'sageserve-reactive': sageserveReactive, 'lt-i': sageserveLtI, 'lt-u': sageserveLtU, 'lt-ua': sageserveLtUa, siloed: sageserveSiloed, chiron: sageserveChiron } satisfies Record<string, ScalerEntry>;
export type ScalerName = keyof typeof scalers;
export const SCALER_NAMES = Object.keys(scalers) as [ScalerName, ...ScalerName[]];

export function createScaler(name: ScalerName, options: unknown, ctx: PolicyContext): Scaler {
  const entry: ScalerEntry = scalers[name];
  return entry.make(parsePolicyOptions(entry.options, options, ['scaling', 'options']), ctx);
}
