import { fcfs } from './fcfs.ts';
import type { QueueOrderFactory } from './types.ts';

/** Waiting-queue orders by registered name; the scenario's `engine.queueOrder` picks one. */
export const queueOrders = { fcfs } satisfies Record<string, QueueOrderFactory>;
export type QueueOrderName = keyof typeof queueOrders;
