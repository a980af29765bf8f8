import type { InstanceView } from '../types.ts';

/**
 * Effective memory utilisation of a set of instances (SageServe §3.1, digest §3.1): KV bytes in use over KV
 * bytes available once the weights are loaded, summed over the set before dividing, so a big instance weighs
 * more. Our `kvCapacityTokens` is already "memory minus weights" (the KV budget), so
 *   util = Σ kvUsedFraction·kvCapacityTokens / Σ kvCapacityTokens.
 * Worked number: two instances of 200k tokens at 0.9 and 0.3 ⇒ (180k + 60k) / 400k = 0.6. Empty set ⇒ 1
 * (no capacity counts as full, so a router never prefers a region with nothing ready).
 */
export function effectiveUtil(instances: readonly InstanceView[]): number {
  let used = 0;
  let cap = 0;
  for (const i of instances) {
    const c = i.kvCapacityTokens;
    used += i.kvUsedFraction * c;
    cap += c;
  }
  return cap > 0 ? used / cap : 1;
}

/**
 * The region candidates of a request in preference order: its own region first, then `order`, then any other
 * region seen, alphabetically. Worked example: region 'west', order [east, central, west] ⇒ west, east, central.
 */
export function regionPreference(own: string, order: readonly string[], present: Iterable<string>): readonly string[] {
  // Called per routed request: the own-then-`order` prefix is built once per (order, own), and when every
  // present region is in it (the usual case) that shared, frozen list is the answer.
  let byOwn = prefixes.get(order);
  if (!byOwn) prefixes.set(order, (byOwn = new Map()));
  let prefix = byOwn.get(own);
  if (!prefix) {
    const p = [own];
    for (const r of order) if (!p.includes(r)) p.push(r);
    byOwn.set(own, (prefix = Object.freeze(p)));
  }
  let extra: string[] | null = null;
  for (const r of present) if (!prefix.includes(r)) (extra ??= []).push(r);
  if (!extra) return prefix;
  const out = [...prefix];
  for (const r of extra.sort()) if (!out.includes(r)) out.push(r);
  return out;
}
const prefixes = new WeakMap<readonly string[], Map<string, readonly string[]>>();

/** Splits an endpoint's instances (id order) into deployments of `size` (the last may be smaller). */
export function deployments<T>(instances: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < instances.length; i += size) out.push(instances.slice(i, i + size));
  return out;
}
