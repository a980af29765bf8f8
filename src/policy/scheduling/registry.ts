import { fcfs } from './fcfs.ts';
import { dpa } from './dpa.ts';
import { edf } from './edf.ts';
import { pf } from './pf.ts';
import { priority } from './priority.ts';
import { withPromotion } from './promotion.ts';
import type { QueueOrderFactory } from './types.ts';

/**
 * Waiting-queue orders by registered name; the scenario's `engine.queueOrder` picks one. Each is wrapped in
 * the NIW promotion lane (promotion.ts: a NIW request older than 10 h at enqueue goes first).
 */
export const queueOrders = {
  fcfs: withPromotion(fcfs),
  priority: withPromotion(priority),
  edf: withPromotion(edf),
  pf: withPromotion(pf),
  dpa: withPromotion(dpa),
} satisfies Record<string, QueueOrderFactory>;
export type QueueOrderName = keyof typeof queueOrders;
