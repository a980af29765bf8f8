import { jsq } from './jsq.ts';
import { leastKv } from './least-kv.ts';
import { leastLoaded } from './least-loaded.ts';
import { llumnix } from './llumnix.ts';
import { preserve } from './preserve.ts';
import { prefixAware } from './prefix-aware.ts';
import { leastRequests } from './least-requests.ts';
import { pendingTokens } from './pending-tokens.ts';
import { powerOfTwo } from './power-of-two.ts';
import { random } from './random.ts';
import { roundRobin } from './round-robin.ts';
import { sageserve } from './sageserve.ts';
import type { PolicyContext } from '../types.ts';
import type { Router, RouterEntry } from './types.ts';
import { parsePolicyOptions } from '../options.ts';

/** Routers by registered name: the scenario's `routing.policy` picks one, and its error lists these keys. */
export const routers = {
  'round-robin': roundRobin,
  random,
  'least-requests': leastRequests,
  jsq,
  'power-of-two': powerOfTwo,
  'least-kv': leastKv,
  'pending-tokens': pendingTokens,
  sageserve,
  preserve,
  llumnix,
  'least-loaded': leastLoaded,
  'prefix-aware': prefixAware,
} satisfies Record<string, RouterEntry>;

export type RouterName = keyof typeof routers;
export const ROUTER_NAMES = Object.keys(routers) as [RouterName, ...RouterName[]];

/** Builds a router by name, validating its options; a bad option is a ConfigError naming `routing.options.<key>`. */
export function createRouter(name: RouterName, options: unknown, ctx: PolicyContext): Router {
  const entry: RouterEntry = routers[name];
  return entry.make(parsePolicyOptions(entry.options, options, ['routing', 'options']), ctx);
}
