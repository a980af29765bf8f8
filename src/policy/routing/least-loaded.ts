import { z } from 'zod';
import type { InstanceView } from '../types.ts';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

export const leastLoadedOptions = z
  .object({
    /** Weight of KV memory use; compute use gets 1 − this (PreServe's MU baseline; weights not given, digest §9: 0.5). */
    memoryWeight: z.number().min(0).max(1).default(0.5),
    /** Batch size counted as full compute use (vLLM's max_num_seqs). */
    fullBatch: z.number().int().positive().default(256),
  })
  .strict();

/**
 * PreServe's "MU" (minimum use) baseline (seed 001 §6.3): the lowest weighted mean of compute use and memory use.
 * The simulator has no GPU-utilisation counter, so compute use is the running batch over a full batch
 * (min(1, numRunning / fullBatch)) and memory use is the KV fraction; defaults weigh both 0.5. It reacts to the
 * present only (no predicted lengths), which is the weakness the paper's pilot study shows. Ties to the lowest id.
 */
export const leastLoaded = {
  options: leastLoadedOptions,
  make(opts) {
    const use = (i: InstanceView) =>
      opts.memoryWeight * i.kvUsedFraction + (1 - opts.memoryWeight) * Math.min(1, i.numRunning / opts.fullBatch) + 1e-9 * i.numWaiting;
    return {
      name: 'least-loaded',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        return { kind: 'send', to: pickMin(c, use).id, reason: 'minimum-use' };
      },
    };
  },
} satisfies RouterEntry<typeof leastLoadedOptions>;
