import type { SimRequest } from '../engine/request.ts';

/**
 * Events are plain data, ordered by (t, rank, sequence number). Ranks decide simultaneous events:
 * an arrival at time t joins the batch built at a boundary at the same t (arrival before boundary);
 * provisioning completes before anyone routes at t; samples see the state after every boundary at t;
 * scheduled fleet actions (control) act on the sampled state, and a scaling tick last, after them.
 */
export type SimEvent =
  | { kind: 'ready'; t: number; seq: number; instance: number }
  | { kind: 'arrival'; t: number; seq: number }
  | { kind: 'deliver'; t: number; seq: number; instance: number; req: SimRequest }
  | { kind: 'boundary'; t: number; seq: number; instance: number; gen: number }
  | { kind: 'sample'; t: number; seq: number }
  | { kind: 'control'; t: number; seq: number }
  | { kind: 'scale'; t: number; seq: number }
  | { kind: 'migration'; t: number; seq: number; req: number }
  | { kind: 'rebalance'; t: number; seq: number }
  | { kind: 'signal'; t: number; seq: number };

export const KIND_RANK: Record<SimEvent['kind'], number> = {
  ready: 0, // a new instance is routable from its ready time on
  arrival: 1, // arrivals at t join a boundary at t
  deliver: 1, // a request reaching its instance over the network at t joins a boundary at t, like an arrival
  boundary: 2, // iteration boundaries at t before anyone samples t
  sample: 3, // the timeline sees all state changes at t
  control: 4, // scheduled fleet actions act on the state the timeline recorded
  scale: 5, // a scaling policy sees the scheduled actions of the same instant
  migration: 2, // a copy stage ends or a migrated request lands like an iteration boundary
  rebalance: 3, // a migrating router sees all state changes at t, like a sample
  signal: 2.5, // a periodic signal to held requests sees every boundary at t, and the sample at t sees what it released
};

/** Binary min-heap of events; `seq` makes order total and deterministic. */
export class EventQueue {
  private heap: SimEvent[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** Time of the next event (Infinity when empty). */
  peekTime(): number {
    return this.heap.length > 0 ? this.heap[0]!.t : Infinity;
  }

  /** Pass the event without `seq`; it is stamped here. */
  push(ev: DistributiveOmit<SimEvent, 'seq'>): void {
    const e = ev as SimEvent;
    e.seq = this.nextSeq++;
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(e, h[p]!)) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
  }

  pop(): SimEvent | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      const n = h.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(h[r]!, h[l]!) ? r : l;
        if (!before(h[c]!, last)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  if (a.t !== b.t) return a.t < b.t;
  const ra = KIND_RANK[a.kind];
  const rb = KIND_RANK[b.kind];
  if (ra !== rb) return ra < rb;
  return a.seq < b.seq;
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
