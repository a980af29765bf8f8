import type { QueueOrderContext, WaitingQueue } from './types.ts';
import { TierQueue, byKey, orderContext } from './tier-queue.ts';

/**
 * Earliest deadline first (SageServe §6.5, digest §3.6): ascending time left before the TTFT deadline, so
 * an expired request (most negative) goes first and cannot starve; an IW-F request goes ahead of an IW-N one
 * that arrived at the same time because its deadline is sooner. Ties: lower request id.
 */
export function edf(ctx?: QueueOrderContext): WaitingQueue {
  const { opts, now } = orderContext(ctx);
  let q: TierQueue;
  const key = (r: Parameters<TierQueue['deadline']>[0]) => q.deadline(r);
  q = new TierQueue(opts, key, (qq) => qq.minOf(qq.heads()), (qq, a, b) => byKey(qq, a, b), now);
  return q;
}
