import type { QueueOrderContext, WaitingQueue } from './types.ts';
import { TierQueue, byKey, orderContext } from './tier-queue.ts';

/**
 * Priority first (SageServe §6.5, digest §3.6): every request of the most important tier (FCFS among them),
 * then the next tier, in `tierPriority` order (default iw-f, iw-n, niw; unknown tiers last). Ties: lower id.
 */
export function pf(ctx?: QueueOrderContext): WaitingQueue {
  const { opts, now } = orderContext(ctx);
  return new TierQueue(
    opts,
    (r) => r.arrivalS,
    (q) => {
      for (let b = 0; b < q.buckets.length; b++) if (q.len(b) > 0) return { b, i: 0 };
      return null;
    },
    (q, a, b) => q.rank(a.tier) - q.rank(b.tier) || byKey(q, a, b),
    now,
  );
}
