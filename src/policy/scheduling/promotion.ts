import type { SimRequest } from '../../engine/request.ts';
import { orderContext } from './tier-queue.ts';
import type { QueueOrderFactory, WaitingQueue } from './types.ts';

/**
 * SageServe's NIW promotion inside the instance queue (§6.2, digest §3.4–3.5): a NIW request older than 10 h
 * gets priority 0, the class of IW, and priority 0 goes before priority 1 in the local scheduler. Every
 * registered order is wrapped in this: a request of `promoteTier` that is pushed `promoteAfterS` or more
 * after its arrival (the same test as the router's release, `niwPromoteAfterS`) is marked `promoted` and goes
 * to an express lane served (FCFS, by push) before whatever the wrapped order would pick. Since such a request arrived hours before anything else in the queue, this is
 * the paper's "priority 0, FCFS within a priority" for it, under any order.
 *
 * The age is checked once, when the request enters the queue (the NIW queue manager releases a request at
 * once when it turns 10 h old, so that is when it is promoted); a preempted promoted request goes back to the
 * front of the lane. With no request that old, the wrapped order is unchanged (the lane stays empty).
 */
export function withPromotion(order: QueueOrderFactory): QueueOrderFactory {
  return (ctx) => {
    const inner = order(ctx);
    const { opts, now } = orderContext(ctx);
    const after = opts.promoteAfterS;
    if (after === null) return inner;
    return new PromotingQueue(inner, opts.promoteTier, after, now);
  };
}

class PromotingQueue implements WaitingQueue {
  private lane: SimRequest[] = [];
  private head = 0;

  constructor(
    private readonly inner: WaitingQueue,
    private readonly tier: string,
    private readonly afterS: number,
    private readonly clock: () => number,
  ) {}

  get size(): number {
    return this.lane.length - this.head + this.inner.size;
  }

  get timeDependent(): boolean | undefined {
    return this.inner.timeDependent;
  }

  private promotes(r: SimRequest): boolean {
    if (r.promoted) return true;
    if (r.tier !== this.tier || this.clock() - r.arrivalS < this.afterS) return false;
    r.promoted = true;
    return true;
  }

  push(r: SimRequest): void {
    if (this.promotes(r)) this.lane.push(r);
    else this.inner.push(r);
  }

  pushFront(r: SimRequest): void {
    if (!r.promoted) {
      this.inner.pushFront(r);
      return;
    }
    if (this.head > 0) this.lane[--this.head] = r;
    else this.lane.unshift(r);
  }

  peek(): SimRequest | undefined {
    return this.head < this.lane.length ? this.lane[this.head] : this.inner.peek();
  }

  shift(): SimRequest | undefined {
    if (this.head >= this.lane.length) return this.inner.shift();
    const r = this.lane[this.head]!;
    this.lane[this.head++] = undefined as unknown as SimRequest;
    if (this.head === this.lane.length) {
      this.lane.length = 0;
      this.head = 0;
    }
    return r;
  }

  forEach(fn: (r: SimRequest) => void): void {
    for (let i = this.head; i < this.lane.length; i++) fn(this.lane[i]!);
    this.inner.forEach(fn);
  }
}
