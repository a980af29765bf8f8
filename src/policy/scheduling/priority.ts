import { fcfs } from './fcfs.ts';
import { orderContext } from './tier-queue.ts';
import type { QueueOrderContext, WaitingQueue } from './types.ts';

/**
 * SageServe's default instance scheduler (§6.1, digest §3.5): priority 0 (the interactive tiers, and batch
 * requests promoted by age, promotion.ts) before priority 1 (the batch tier, `scheduling.options.promoteTier`,
 * default niw), first come first served within a priority, so a batch request is taken only when no interactive
 * one waits. A preempted request goes back to the head of its own priority.
 */
export function priority(ctx?: QueueOrderContext): WaitingQueue {
  const batchTier = orderContext(ctx).opts.promoteTier;
  const interactive = fcfs();
  const batch = fcfs();
  const classOf = (tier: string | undefined) => (tier === batchTier ? batch : interactive);
  return {
    get size() {
      return interactive.size + batch.size;
    },
    push(r) {
      classOf(r.tier).push(r);
    },
    pushFront(r) {
      classOf(r.tier).pushFront(r);
    },
    peek() {
      return interactive.peek() ?? batch.peek();
    },
    shift() {
      return interactive.size > 0 ? interactive.shift() : batch.shift();
    },
    forEach(fn) {
      interactive.forEach(fn);
      batch.forEach(fn);
    },
  };
}
