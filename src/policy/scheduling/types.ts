import type { SimRequest } from '../../engine/request.ts';

/**
 * The order of an instance's waiting queue. `pushFront` is for preempted requests, which vLLM puts back at
 * the head; an order that ranks by a key (EDF, priority) may treat it like `push`.
 */
export interface WaitingQueue {
  readonly size: number;
  /**
   * True when the order can change with the clock alone (DPA: a request turns urgent or expired as time
   * passes). The engine then never fast-forwards a decode run while requests wait, since a new head might fit.
   */
  readonly timeDependent?: boolean;
  push(r: SimRequest): void;
  pushFront(r: SimRequest): void;
  peek(): SimRequest | undefined;
  shift(): SimRequest | undefined;
  /** Visits queued requests in order without removing them (for views and metrics). */
  forEach(fn: (r: SimRequest) => void): void;
}

/**
 * What an order may read besides the requests: the simulated clock (deadline-aware orders such as DPA rank by
 * time left, which changes as time passes) and the scenario's `scheduling.options` (validated by the order).
 * FCFS needs neither, so the argument is optional.
 */
export interface QueueOrderContext {
  now(): number;
  options?: unknown;
}

export type QueueOrderFactory = (ctx?: QueueOrderContext) => WaitingQueue;
