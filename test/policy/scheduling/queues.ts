// Shared fixtures for the queue-order tests: tiered requests with SageServe-like SLAs, a queue on a hand clock.
import { SimRequest } from '../../../src/engine/request.ts';
import { queueOrders, type QueueOrderName } from '../../../src/policy/scheduling/registry.ts';
import { parseQueueOrderOptions, type TierQueueOptions } from '../../../src/policy/scheduling/tier-queue.ts';
import type { WaitingQueue } from '../../../src/policy/scheduling/types.ts';

export const SLA: Record<string, number> = { 'iw-f': 1, 'iw-n': 60, niw: 86400 };

export const req = (id: number, arrivalS: number, tier: string) =>
  new SimRequest({ id, arrivalS, inputTokens: 100, outputTokens: 10, tier, deadlineS: arrivalS + (SLA[tier] ?? Infinity) }, 'm');

export function make(name: QueueOrderName, now: { t: number }, options: Partial<TierQueueOptions> = {}): WaitingQueue {
  return queueOrders[name]({ now: () => now.t, options: parseQueueOrderOptions(name, options) });
}

/** Empties the queue in its order; the request ids. */
export const drain = (q: WaitingQueue) => {
  const out: number[] = [];
  while (q.size > 0) out.push(q.shift()!.id);
  return out;
};
