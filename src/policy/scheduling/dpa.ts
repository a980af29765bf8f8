import type { SimRequest } from '../../engine/request.ts';
import type { QueueOrderContext, WaitingQueue } from './types.ts';
import { TierQueue, byKey, orderContext } from './tier-queue.ts';

/**
 * Deadline & priority aware (SageServe §6.5, digest §3.6). With d_r = deadline − now:
 *   severely expired  d_r < −τ_n          (any tier)  → first, against starvation
 *   urgent            0 ≤ d_r ≤ τ_p       by tier priority
 *   non-urgent        d_r > τ_p           by tier priority
 *   recently expired  −τ_n ≤ d_r < 0      (any tier)  → last: they already missed, the others still can
 * The paper leaves the order inside a class open; we use EDF (then lower id). τ defaults: see tier-queue.ts.
 * Worked example (τ_n = 60, τ_p = 5, now = 100): IW-N due at 102 (urgent) goes before IW-F due at 110
 * (non-urgent); IW-F due at 30 (70 s late, severely expired) goes before both; IW-F due at 99 goes last.
 */
export function dpa(ctx?: QueueOrderContext): WaitingQueue {
  const { opts, now } = orderContext(ctx);
  const { tauNS, tauPS } = opts;
  let q: TierQueue;
  const key = (r: SimRequest) => q.deadline(r);
  /** Class rank of one request at `t` (smaller first), consistent with `pick`. */
  const classRank = (qq: TierQueue, r: SimRequest, t: number): number => {
    const d = qq.deadline(r) - t;
    const tiers = qq.buckets.length;
    if (d < -tauNS) return 0;
    if (d < 0) return 1 + 2 * tiers;
    return d <= tauPS ? 1 + qq.rank(r.tier) : 1 + tiers + qq.rank(r.tier);
  };
  q = new TierQueue(
    opts,
    key,
    (qq, t) => {
      // 1. Severely expired: the earliest deadline among the bucket heads, if it is below now − τ_n.
      const first = qq.minOf(qq.heads());
      if (first && qq.key(qq.at(first.b, first.i)) < t - tauNS) return first;
      // 2./3. The first not-yet-expired request of each tier, urgent ones by tier, then non-urgent ones by tier.
      const live = qq.buckets.map((_, b) => qq.lowerBound(b, t));
      for (let b = 0; b < qq.buckets.length; b++) {
        const i = live[b]!;
        if (i < qq.len(b) && qq.key(qq.at(b, i)) <= t + tauPS) return { b, i };
      }
      for (let b = 0; b < qq.buckets.length; b++) if (live[b]! < qq.len(b)) return { b, i: live[b]! };
      // 4. Recently expired: only expired requests are left; EDF among them.
      return first;
    },
    (qq, a, b, t) => classRank(qq, a, t) - classRank(qq, b, t) || byKey(qq, a, b),
    now,
  );
  q.timeDependent = true;
  return q;
}
