import { fcfs } from './fcfs.ts';
import { dpa } from './dpa.ts';
import { edf } from './edf.ts';
import { pf } from './pf.ts';
import type { QueueOrderFactory } from './types.ts';

/** Waiting-queue orders by registered name; the scenario's `engine.queueOrder` picks one. */
export const queueOrders = { fcfs, edf, pf, dpa } satisfies Record<string, QueueOrderFactory>;
export type QueueOrderName = keyof typeof queueOrders;
