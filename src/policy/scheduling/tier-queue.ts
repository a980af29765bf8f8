import { z } from 'zod';
import type { SimRequest } from '../../engine/request.ts';
import { parsePolicyOptions, positiveSeconds, seconds } from '../options.ts';
import type { QueueOrderContext, WaitingQueue } from './types.ts';
import { own } from '../../util/own.ts';

/**
 * Options shared by the tier-aware queue orders (EDF, PF, DPA; SageServe §6.5, digest §3.6). FCFS accepts
 * and ignores them, so a scenario can switch `scheduling.policy` without touching `scheduling.options`.
 *
 * Defaults we picked (the paper gives no values for its tier experiment):
 * - `ttftS`: unset ⇒ each request's own `deadlineS` is its deadline (the O365 generator writes arrival +
 *   1 s for IW-F, + 60 s for IW-N, + 24 h for NIW, the digest's §2.2 SLAs).
 * - `tauNS` = 60 s: a request is "severely expired" (served first, against starvation) once it is one IW-N SLA
 *   past its deadline.
 * - `tauPS` = 5 s: a request is "urgent" in the last 5 s before its deadline, so every IW-F request is urgent
 *   from its arrival (its 1 s SLA is inside the window) and an IW-N request becomes urgent after 55 s.
 */
export const tierQueueOptions = z
  .object({
    /** Tiers from most to least important; tiers not listed rank after every listed one. */
    tierPriority: z.array(z.string().min(1)).min(1).default(['iw-f', 'iw-n', 'niw']),
    /** TTFT deadline per tier in seconds after arrival; a tier not listed uses the request's own deadlineS. */
    ttftS: z.record(z.string(), positiveSeconds).default({}),
    /** DPA expiry slack τ_n (s): d_r < −τ_n is severely expired. */
    tauNS: positiveSeconds.default(60),
    /** DPA urgency window τ_p (s): 0 ≤ d_r ≤ τ_p is urgent. */
    tauPS: positiveSeconds.default(5),
    /**
     * Every order (FCFS included): a request of `promoteTier` that enters an instance queue `promoteAfterS`
     * or more after its arrival is promoted to priority 0 and served before everything else (SageServe
     * §6.2: NIW older than 10 h joins IW's class; see promotion.ts). null: never. Defaults: niw, 10 h.
     */
    promoteTier: z.string().min(1).default('niw'),
    promoteAfterS: seconds.nullable().default(36_000),
  })
  .strict();

export type TierQueueOptions = z.output<typeof tierQueueOptions>;

/** Validates `scheduling.options` once per run (every order shares one schema today). */
export function parseQueueOrderOptions(_order: string, options: unknown): TierQueueOptions {
  return parsePolicyOptions(tierQueueOptions, options, ['scheduling', 'options']);
}

export const TIER_QUEUE_DEFAULTS: TierQueueOptions = tierQueueOptions.parse({});

/** Where a request sits: bucket (tier rank) and index in the bucket's sorted array. */
interface Loc {
  b: number;
  i: number;
}

/**
 * The shared structure behind EDF, PF and DPA: one array per tier rank, kept sorted by a static key (deadline
 * or arrival) with the request id as the tie-break, read from a moving start index so that taking the head
 * is O(1). `pick(now)` names the next request (a logical index from the bucket's start); every order is a
 * different `pick`. Insertion is a binary search plus, unless the new key is the largest (the usual case: keys
 * grow with arrival), a splice; `peek` and `shift` cost O(tiers · log n).
 */
export class TierQueue implements WaitingQueue {
  /** Set by orders whose ranking reads the clock (DPA). */
  timeDependent = false;
  readonly buckets: SimRequest[][];
  /** Index of each bucket's first live request (the ones before it were taken). */
  private readonly start: number[];
  private readonly rankOf: Map<string, number>;
  private n = 0;

  constructor(
    readonly opts: TierQueueOptions,
    /** The static sort key inside a bucket. */
    readonly key: (r: SimRequest) => number,
    private readonly pick: (q: TierQueue, now: number) => Loc | null,
    /** The full order at `now` (for `forEach`): smaller first. */
    private readonly compare: (q: TierQueue, a: SimRequest, b: SimRequest, now: number) => number,
    private readonly clock: () => number,
  ) {
    this.rankOf = new Map(opts.tierPriority.map((t, i) => [t, i]));
    this.buckets = Array.from({ length: opts.tierPriority.length + 1 }, () => []);
    this.start = this.buckets.map(() => 0);
  }

  /** Live requests in bucket `b`. */
  len(b: number): number {
    return this.buckets[b]!.length - this.start[b]!;
  }

  /** The `i`-th live request of bucket `b`. */
  at(b: number, i: number): SimRequest {
    return this.buckets[b]![this.start[b]! + i]!;
  }

  /** Rank of a tier: its index in `tierPriority`; unknown tiers share the last rank. */
  rank(tier: string): number {
    return this.rankOf.get(tier) ?? this.buckets.length - 1;
  }

  /** Absolute TTFT deadline: arrival + the tier's `ttftS`, else the request's own deadline (Infinity if none). */
  deadline(r: SimRequest): number {
    const s = own(this.opts.ttftS, r.tier);
    return s === undefined ? r.deadlineS : r.arrivalS + s;
  }

  get size(): number {
    return this.n;
  }

  push(r: SimRequest): void {
    const b = this.rank(r.tier);
    const arr = this.buckets[b]!;
    const k = this.key(r);
    let lo = this.start[b]!;
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = arr[mid]!;
      const km = this.key(m);
      if (km < k || (km === k && m.id < r.id)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === arr.length) arr.push(r);
    else arr.splice(lo, 0, r);
    this.n++;
  }

  /** Preempted requests re-enter by their key: a ranked order has no "front" to put them at. */
  pushFront(r: SimRequest): void {
    this.push(r);
  }

  peek(): SimRequest | undefined {
    const loc = this.n === 0 ? null : this.pick(this, this.clock());
    return loc ? this.at(loc.b, loc.i) : undefined;
  }

  shift(): SimRequest | undefined {
    const loc = this.n === 0 ? null : this.pick(this, this.clock());
    if (!loc) return undefined;
    this.n--;
    const arr = this.buckets[loc.b]!;
    const st = this.start[loc.b]!;
    if (loc.i > 0) return arr.splice(st + loc.i, 1)[0];
    const r = arr[st]!;
    arr[st] = undefined as unknown as SimRequest;
    this.start[loc.b] = st + 1;
    // Drop the taken prefix now and then (amortised O(1) per request).
    if (st + 1 > 1024 && 2 * (st + 1) > arr.length) {
      arr.splice(0, st + 1);
      this.start[loc.b] = 0;
    }
    return r;
  }

  forEach(fn: (r: SimRequest) => void): void {
    const now = this.clock();
    const all = this.buckets.flatMap((arr, b) => arr.slice(this.start[b]!));
    all.sort((a, b) => this.compare(this, a, b, now));
    all.forEach(fn);
  }

  /** Index of the first request in bucket `b` whose key is ≥ `k` (binary search). */
  lowerBound(b: number, k: number): number {
    let lo = 0;
    let hi = this.len(b);
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.key(this.at(b, mid)) < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Among the bucket heads (or the given locations), the one with the smallest (key, id). */
  minOf(locs: readonly Loc[]): Loc | null {
    let best: Loc | null = null;
    let bk = Infinity;
    let bid = Infinity;
    for (const l of locs) {
      const r = this.at(l.b, l.i);
      const k = this.key(r);
      if (best === null || k < bk || (k === bk && r.id < bid)) {
        best = l;
        bk = k;
        bid = r.id;
      }
    }
    return best;
  }

  heads(): Loc[] {
    const out: Loc[] = [];
    for (let b = 0; b < this.buckets.length; b++) if (this.len(b) > 0) out.push({ b, i: 0 });
    return out;
  }
}

/** Resolves the options and clock an order was built with (a bare `factory()` gets the defaults at t = 0). */
export function orderContext(ctx: QueueOrderContext | undefined): { opts: TierQueueOptions; now: () => number } {
  const opts = (ctx?.options as TierQueueOptions | undefined) ?? TIER_QUEUE_DEFAULTS;
  return { opts: { ...TIER_QUEUE_DEFAULTS, ...opts }, now: ctx?.now ?? (() => 0) };
}

/** (key, id) comparison for requests in the same class. */
export function byKey(q: TierQueue, a: SimRequest, b: SimRequest): number {
  const ka = q.key(a);
  const kb = q.key(b);
  return ka < kb ? -1 : ka > kb ? 1 : a.id - b.id;
}
