import { z } from 'zod';
import { PrefixCache } from '../../engine/prefix-cache.ts';
import type { InstanceView } from '../types.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

const options = z
  .object({
    /**
     * Weight of the prompt tokens an instance would have to prefill (those it is not believed to hold cached)
     * against the tokens it already carries; Dynamo's `--kv-overlap-score-weight` (default 1). 0 ignores the
     * cache (least loaded in tokens); large values send every request after its prefix whatever the load.
     */
    overlapWeight: z.number().min(0).max(1e6).default(1),
  })
  .strict();

/**
 * KV-cache-aware routing in the manner of NVIDIA Dynamo's KV router, in its approximation mode (no KV events from the
 * engines): the router remembers the prompt blocks it sent to each instance, in an LRU as large as the instance's KV
 * cache, and sends a request to the instance of least
 *
 *   cost = overlapWeight × (prompt tokens − tokens of its longest remembered prefix there) + load tokens,
 *
 * load tokens = KV in use (kvUsedFraction × kvCapacityTokens) + the prompts still queued or prefilling there
 * (`pendingTokens`). Dynamo counts blocks, with its active blocks tracked by the router itself; the argmin is the
 * same in tokens up to rounding. Ties go to the lowest id. A request without block hashes (a trace without
 * `hash_ids`) is routed on load alone. The same code runs in the live gateway, which hashes each prompt's text.
 */
export const prefixAware: RouterEntry<typeof options> = {
  options,
  make(opts) {
    const remembered = new Map<number, PrefixCache>();
    const indexOf = (inst: InstanceView): PrefixCache => {
      let c = remembered.get(inst.id);
      if (!c || c.capacityTokens !== inst.kvCapacityTokens) remembered.set(inst.id, (c = new PrefixCache(inst.kvCapacityTokens)));
      return c;
    };
    return {
      name: 'prefix-aware',
      readsPrefixHashes: true,
      route(req, view) {
        const cands = view.routable(req.model);
        if (cands.length === 0) return NO_INSTANCE;
        const hashes = req.prefixHashes;
        const bt = req.prefixBlockTokens ?? 0;
        const full = hashes && bt > 0 ? Math.floor(req.inputTokens / bt) : 0;
        // pickMin's rule (the first of the lowest cost), keeping the winner's hit: a match walks the prompt's blocks.
        let best = cands[0]!;
        let bestCost = Infinity;
        let hit = 0;
        for (const i of cands) {
          const cached = full > 0 ? indexOf(i).match(hashes!, bt, full) : 0;
          const cost = opts.overlapWeight * (req.inputTokens - cached) + i.kvUsedFraction * i.kvCapacityTokens + i.pendingTokens;
          if (cost < bestCost) {
            best = i;
            bestCost = cost;
            hit = cached;
          }
        }
        if (full > 0) indexOf(best).insert(hashes!, bt, full);
        return { kind: 'send', to: best.id, reason: hit > 0 ? 'prefix-hit' : 'least-load' };
      },
    };
  },
};
