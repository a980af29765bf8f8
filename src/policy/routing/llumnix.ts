import { z } from 'zod';
import type { InstanceView } from '../types.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

export const llumnixOptions = z
  .object({
    /**
     * `remaining-steps` (default, as Llumnix's `--dispatch-load-metric` default): Llumnix's `RemainingStepsLoad`
     * (its paper's "freeness"), (free KV − KV wanted by every waiting request) per running or waiting request; the
     * most free instance wins, an empty one first. `kv-blocks-ratio`: Llumnix's `KvBlocksRatioLoad`,
     * (KV in use + waiting demand) / capacity.
     */
    metric: z.enum(['kv-blocks-ratio', 'remaining-steps']).default('remaining-steps'),
    /**
     * Seconds between reads of the instances' loads (Llumnix's `--polling-interval`, 0.05 s there). 0 (default):
     * every decision reads fresh loads. Between reads the dispatcher reuses the last values, so requests that
     * arrive within one interval do not see each other.
     */
    refreshS: z.number().min(0).max(3600).default(0),
  })
  .strict();

/** KV tokens the instance's waiting requests will want when admitted (their prompt, or prompt + output after a preemption). */
function waitingDemandTokens(inst: InstanceView): number {
  let s = 0;
  for (const r of inst.requests()) if (r.status !== 'running') s += r.kvTokens + r.prefillTarget - r.prefilled;
  return s;
}

/** Llumnix's `KvBlocksRatioLoad`: lower is lighter. */
function kvBlocksRatio(i: InstanceView): number {
  return i.kvUsedFraction + waitingDemandTokens(i) / Math.max(1, i.kvCapacityTokens);
}

/** Llumnix's `RemainingStepsLoad`, negated so that lower is lighter; an instance with no request is +∞ free. */
function negRemainingSteps(i: InstanceView): number {
  if (i.outstandingRequests === 0) return -Infinity;
  const m = Math.max(1, i.kvCapacityTokens);
  return -((1 - i.kvUsedFraction) * m - waitingDemandTokens(i)) / i.outstandingRequests;
}

/**
 * A Llumnix-like dispatcher (anchors doc §2.11, Llumnix `load` dispatch policy, top-1): the instance with the lowest
 * KV-demand load, counting queued requests' demand as if already admitted (Llumnix's "virtual usage"). Llumnix's
 * live migration between instances is not modelled (the simulator has no migration), so this is its dispatch
 * half only; ties go to the lowest id. Worked number (M = 10,000): one request holding 3,000 tokens → 7,000 free
 * per request; ten requests holding 200 each → 800 per request: remaining-steps picks the first.
 */
export const llumnix = {
  options: llumnixOptions,
  make(opts) {
    const load = opts.metric === 'kv-blocks-ratio' ? kvBlocksRatio : negRemainingSteps;
    const reason = opts.metric === 'kv-blocks-ratio' ? 'lowest-kv-demand' : 'most-freeness';
    const cache = new Map<number, number>();
    let readAt = -Infinity;
    return {
      name: 'llumnix',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        const fresh = view.now - readAt >= opts.refreshS;
        if (fresh) {
          cache.clear();
          readAt = view.now;
        }
        let best = c[0]!;
        let bestLoad = Infinity;
        for (let k = 0; k < c.length; k++) {
          const inst = c[k]!;
          let v = cache.get(inst.id);
          if (v === undefined) {
            v = load(inst);
            cache.set(inst.id, v);
          }
          if (v < bestLoad || k === 0) {
            best = inst;
            bestLoad = v;
          }
        }
        return { kind: 'send', to: best.id, reason };
      },
    };
  },
} satisfies RouterEntry<typeof llumnixOptions>;
