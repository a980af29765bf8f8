import { heldInstances, type PoolStatus, type ScaleAction } from './types.ts';

export interface GovernorLimits {
  /** Seconds after a scale-up of a pool before it may scale up again. */
  upCooldownS: number;
  /** Seconds after any change of a pool before it may scale down (Knative's scale-down delay). */
  downCooldownS: number;
  /** Most instances added or removed per pool per tick. */
  maxStep: number;
  /**
   * Scale-in stabilization window, s (Kubernetes HPA's `behavior.scaleDown.stabilizationWindowSeconds`): a
   * scale-in goes down only to the highest count recommended for the pool within the last this many seconds.
   * 0 or absent: off.
   */
  downStabilizationS?: number;
}

/**
 * Enforces bounds, cooldowns and rate limits outside every scaler, so a policy can be written as a pure
 * "what would I like" and the same limits hold in simulation and live. State: last change times per pool.
 */
export class Governor {
  private readonly lastUp = new Map<string, number>();
  private readonly lastChange = new Map<string, number>();
  /** Per pool, the counts recommended at the ticks within the stabilization window (oldest first). */
  private readonly recommended = new Map<string, { t: number; count: number }[]>();

  constructor(readonly limits: GovernorLimits) {}

  /** Returns the actions to apply (add/remove only), clamped; `hold`s and vetoed requests are dropped. */
  apply(actions: readonly ScaleAction[], pools: readonly PoolStatus[], now: number): ScaleAction[] {
    const byName = new Map(pools.map((p) => [p.name, p]));
    const net = new Map<string, number>();
    for (const a of actions) {
      if (a.kind === 'hold') continue;
      net.set(a.pool, (net.get(a.pool) ?? 0) + (a.kind === 'add' ? a.count : -a.count));
    }
    const floor = this.stabilize(pools, net, now);
    const out: ScaleAction[] = [];
    for (const [pool, delta0] of [...net.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const p = byName.get(pool);
      if (!p || delta0 === 0) continue;
      const current = p.provisioning + p.ready;
      // A scale-in only down to the highest count recommended within the stabilization window (none above it).
      const stable = floor.get(pool);
      const wanted = delta0 < 0 && stable !== undefined ? Math.max(delta0, Math.min(0, stable - current)) : delta0;
      if (wanted === 0) continue;
      let delta = Math.max(-this.limits.maxStep, Math.min(this.limits.maxStep, wanted));
      delta = Math.max(p.minCount - current, Math.min(p.maxCount - current, delta));
      // maxCount also counts the draining instances: a scale-out only fills the room they leave (the cap wins over
      // minCount; the pool gets there as they stop).
      if (delta > 0) delta = Math.min(delta, Math.max(0, p.maxCount - heldInstances(p)));
      if (delta > 0 && now - (this.lastUp.get(pool) ?? -Infinity) < this.limits.upCooldownS) continue;
      if (delta < 0 && now - (this.lastChange.get(pool) ?? -Infinity) < this.limits.downCooldownS) continue;
      if (delta === 0) continue;
      if (delta > 0) this.lastUp.set(pool, now);
      this.lastChange.set(pool, now);
      out.push(delta > 0 ? { kind: 'add', pool, count: delta, reason: 'governed' } : { kind: 'remove', pool, count: -delta, reason: 'governed' });
    }
    // Pools below their minimum are topped up even without a request, within maxCount.
    for (const p of pools) {
      const count = Math.min(p.minCount - (p.provisioning + p.ready), p.maxCount - heldInstances(p));
      if (count > 0 && !out.some((a) => a.kind !== 'hold' && a.pool === p.name)) {
        out.push({ kind: 'add', pool: p.name, count, reason: 'below-min' });
        this.lastUp.set(p.name, now);
        this.lastChange.set(p.name, now);
      }
    }
    return out;
  }

  /**
   * With a stabilization window: records every pool's recommended count at this tick (provisioning + ready plus
   * the net of the actions asked for it, a pool not named recommending its current count; within its
   * minCount..maxCount) and returns, per pool, the highest count recommended within the last
   * `downStabilizationS` seconds, this tick included (a tick exactly `downStabilizationS` ago has left the
   * window, as in Kubernetes). Empty when the window is off.
   */
  private stabilize(pools: readonly PoolStatus[], net: ReadonlyMap<string, number>, now: number): Map<string, number> {
    const floor = new Map<string, number>();
    const windowS = this.limits.downStabilizationS ?? 0;
    if (!(windowS > 0)) return floor;
    for (const p of pools) {
      const count = Math.max(p.minCount, Math.min(p.maxCount, p.provisioning + p.ready + (net.get(p.name) ?? 0)));
      let hist = this.recommended.get(p.name);
      if (!hist) this.recommended.set(p.name, (hist = []));
      hist.push({ t: now, count });
      let k = 0;
      while (k < hist.length && hist[k]!.t <= now - windowS) k++;
      if (k > 0) hist.splice(0, k);
      let max = -Infinity;
      for (const h of hist) max = Math.max(max, h.count);
      floor.set(p.name, max);
    }
    return floor;
  }
}
