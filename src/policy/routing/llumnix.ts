import { z } from 'zod';
import type { InstanceView } from '../types.ts';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

export const llumnixOptions = z
  .object({
    /**
     * `kv-blocks-ratio`: Llumnix's `KvBlocksRatioLoad`, (KV in use + KV wanted by every waiting request) / capacity.
     * `remaining-steps`: Llumnix's `RemainingStepsLoad` (its paper's "freeness"), (free KV − waiting demand) per
     * request on the instance; the most free instance wins.
     */
    metric: z.enum(['kv-blocks-ratio', 'remaining-steps']).default('kv-blocks-ratio'),
  })
  .strict();

/** KV tokens the instance's waiting requests will want when admitted (their prompt, or prompt + output after a preemption). */
function waitingDemandTokens(inst: InstanceView): number {
  let s = 0;
  for (const r of inst.requests()) if (r.status !== 'running') s += r.kvTokens + r.prefillTarget - r.prefilled;
  return s;
}

/**
 * A Llumnix-like dispatcher (anchors doc §2.11, Llumnix `load` dispatch policy): the instance with the lowest
 * KV-demand load, counting queued requests' demand as if already admitted (Llumnix's "virtual usage"). Llumnix's
 * live migration between instances is not modelled (the simulator has no migration), so this is its dispatch
 * half only; ties go to the lowest id.
 */
export const llumnix = {
  options: llumnixOptions,
  make(opts) {
    return {
      name: 'llumnix',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        if (opts.metric === 'kv-blocks-ratio') {
          const load = (i: InstanceView) => i.kvUsedFraction + waitingDemandTokens(i) / Math.max(1, i.kvCapacityTokens);
          return { kind: 'send', to: pickMin(c, load).id, reason: 'lowest-kv-demand' };
        }
        const negFreeness = (i: InstanceView) => {
          const m = Math.max(1, i.kvCapacityTokens);
          const free = (1 - i.kvUsedFraction) * m - waitingDemandTokens(i);
          return -free / Math.max(1, i.outstandingRequests);
        };
        return { kind: 'send', to: pickMin(c, negFreeness).id, reason: 'most-freeness' };
      },
    };
  },
} satisfies RouterEntry<typeof llumnixOptions>;
