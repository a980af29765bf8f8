import type { FleetView, InstanceView } from '../types.ts';
import type { PoolStatus, ScaleAction, Scaler, ScalingSignals } from '../scaling/types.ts';
import { thetaOf, type SageServeScalingOptions } from './options.ts';
import { HourlyPlanner } from './planner.ts';
import { effectiveUtil } from './util.ts';

/**
 * The SageServe scaling strategies (§6.4, §7.1; digest §3.9–3.10) over one pool per endpoint (model × region).
 * Each tick (`scaling.intervalS`, 15 s in the scenarios) stands for the paper's per-request check; a
 * per-endpoint cooldown separates two events. Scale-out asks the simulator for an instance, which serves after
 * its source's lead time (with `fleet.spot`: a same-model or other-model spot reclaim, else a new VM; see
 * spot.ts); scale-in drains one, donated to the spot pool once it stops.
 */

/** Effective memory utilisation of a pool's ready instances (§3.1). */
export function poolUtil(view: FleetView, pool: string): number {
  const ready: InstanceView[] = [];
  for (const i of view.instances) if (i.pool === pool && i.state === 'ready') ready.push(i);
  return ready.length === 0 ? 0 : effectiveUtil(ready);
}

class Cooldown {
  private readonly last = new Map<string, number>();
  constructor(private readonly s: number) {}
  ok(pool: string, now: number): boolean {
    return now - (this.last.get(pool) ?? -Infinity) >= this.s;
  }
  mark(pool: string, now: number): void {
    this.last.set(pool, now);
  }
}

const add = (pool: string, reason: string, count = 1): ScaleAction => ({ kind: 'add', pool, count, reason });
const remove = (pool: string, reason: string, count = 1): ScaleAction => ({ kind: 'remove', pool, count, reason });
const orHold = (out: ScaleAction[], reason: string): ScaleAction[] => (out.length > 0 ? out : [{ kind: 'hold', reason }]);
const size = (p: PoolStatus) => p.ready + p.provisioning;

/** One reactive step for a pool: > up ⇒ +1, < down ⇒ −1 (to its minimum), with a cooldown. */
function reactiveStep(o: SageServeScalingOptions, p: PoolStatus, u: number, now: number, cd: Cooldown, min: number): ScaleAction | null {
  if (!cd.ok(p.name, now) || p.ready === 0) return null;
  if (u > o.scaleUpAbove && size(p) < p.maxCount && (!o.waitForProvisioning || p.provisioning === 0)) {
    cd.mark(p.name, now);
    return add(p.name, 'util-above-threshold');
  }
  if (u < o.scaleDownBelow && size(p) > Math.max(min, p.minCount, 1)) {
    cd.mark(p.name, now);
    return remove(p.name, 'util-below-threshold');
  }
  return null;
}

/** Unified Reactive (the paper's main baseline): memory thresholds per endpoint, 15 s cooldown. */
export function reactiveScaler(o: SageServeScalingOptions): Scaler {
  const cd = new Cooldown(o.cooldownS);
  return {
    name: 'sageserve-reactive',
    decide(s) {
      const out: ScaleAction[] = [];
      for (const p of s.pools) {
        if (p.name.endsWith(o.niwPoolSuffix)) continue;
        const a = reactiveStep(o, p, poolUtil(s.view, p.name), s.now, cd, 0);
        if (a) out.push(a);
      }
      return orHold(out, 'within-thresholds');
    },
  };
}

/** Siloed pools (current production, §4): IW and NIW pools per endpoint, each reactive; NIW pools ≥ `niwPoolMin`. */
export function siloedScaler(o: SageServeScalingOptions): Scaler {
  const cd = new Cooldown(o.cooldownS);
  return {
    name: 'siloed',
    decide(s) {
      const out: ScaleAction[] = [];
      for (const p of s.pools) {
        const niw = p.name.endsWith(o.niwPoolSuffix);
        if (niw && size(p) < o.niwPoolMin) {
          out.push(add(p.name, 'silo-minimum', o.niwPoolMin - size(p)));
          continue;
        }
        const a = reactiveStep(o, p, poolUtil(s.view, p.name), s.now, cd, niw ? o.niwPoolMin : 0);
        if (a) out.push(a);
      }
      return orHold(out, 'within-thresholds');
    },
  };
}

export type LongTermMode = 'lt-i' | 'lt-u' | 'lt-ua';

/**
 * LT-I / LT-U / LT-UA (§6.4): every hour the planner's target sets `remaining[pool] = target − current`.
 * - LT-I applies it at once.
 * - LT-U moves one instance per cooldown toward it, out only while util > 70 %, in only while util < 30 %.
 * - LT-UA is LT-U plus, in the last 20 min of the hour once the target is reached, an override on the ratio
 *   of observed IW tokens/s (last `observeS`) to the forecast peak: ≥ 5 ⇒ +1, ≤ 0.5 ⇒ −1 (memory thresholds not
 *   required unless `overrideNeedsMemory`; by default only while capacity at θ disagrees too, see options.ts).
 * Before the first forecast (less than `minHistoryMin` of history) every mode scales reactively.
 */
export function longTermScaler(mode: LongTermMode, o: SageServeScalingOptions): Scaler {
  const planner = new HourlyPlanner(o);
  const cd = new Cooldown(o.cooldownS);
  const remaining = new Map<string, number>();
  const forecast = new Map<string, number>();
  let planned = false;
  return {
    name: mode,
    decide(s: ScalingSignals) {
      planner.observe(s);
      const pools = s.pools.filter((p) => !p.name.endsWith(o.niwPoolSuffix));
      const out: ScaleAction[] = [];
      if (planner.due(s.now)) {
        const plans = planner.plan(s.now, pools);
        if (plans) {
          planned = true;
          for (const pl of plans) {
            remaining.set(pl.pool, pl.target - pl.current);
            forecast.set(pl.pool, pl.forecastPeakTps);
            if (mode === 'lt-i' && pl.target !== pl.current) {
              out.push(pl.target > pl.current ? add(pl.pool, 'ilp-target', pl.target - pl.current) : remove(pl.pool, 'ilp-target', pl.current - pl.target));
              remaining.set(pl.pool, 0);
              cd.mark(pl.pool, s.now);
            }
          }
        }
      }
      if (!planned) {
        for (const p of pools) {
          const a = reactiveStep(o, p, poolUtil(s.view, p.name), s.now, cd, 0);
          if (a) out.push(a);
        }
        return orHold(out, 'no-forecast-yet');
      }
      if (mode === 'lt-i') return orHold(out, 'at-target');
      const inHourS = s.now - 3600 * Math.floor(s.now / 3600);
      for (const p of pools) {
        if (!cd.ok(p.name, s.now) || p.ready === 0) continue;
        const u = poolUtil(s.view, p.name);
        const rem = remaining.get(p.name) ?? 0;
        if (rem > 0 && u > o.scaleUpAbove) {
          out.push(add(p.name, 'toward-target'));
          remaining.set(p.name, rem - 1);
          cd.mark(p.name, s.now);
        } else if (rem < 0 && u < o.scaleDownBelow && size(p) > Math.max(1, p.minCount)) {
          out.push(remove(p.name, 'toward-target'));
          remaining.set(p.name, rem + 1);
          cd.mark(p.name, s.now);
        } else if (mode === 'lt-ua' && rem === 0 && inHourS >= 3600 - o.overrideWindowS) {
          const f = forecast.get(p.name) ?? NaN;
          if (!(f > 0)) continue;
          const observed = planner.observedTps(p.model, p.region, s.now, o.observeS);
          const ratio = observed / f;
          const theta = thetaOf(o, p.model);
          const memUp = (!o.overrideNeedsMemory || u > o.scaleUpAbove) && (!o.overrideCapacityGuard || observed > size(p) * theta);
          const memDown = (!o.overrideNeedsMemory || u < o.scaleDownBelow) && (!o.overrideCapacityGuard || observed <= (size(p) - 1) * theta);
          if (ratio >= o.overrideUpRatio && memUp && size(p) < p.maxCount) {
            out.push(add(p.name, 'forecast-gap-up'));
            cd.mark(p.name, s.now);
          } else if (ratio <= o.overrideDownRatio && memDown && size(p) > Math.max(1, p.minCount)) {
            out.push(remove(p.name, 'forecast-gap-down'));
            cd.mark(p.name, s.now);
          }
        }
      }
      return orHold(out, 'toward-target');
    },
  };
}

/**
 * Chiron (Patke et al., as SageServe's code runs it; digest §3.10) over the siloed layout: the IW pool plays
 * the interactive + mixed pools, the `-niw` pool the batch pool.
 * - Interactive backpressure IBP = share of the IW pool's ready instances with at least one request running;
 *   IBP > Θ (0.6) ⇒ +1, else −1 (to the pool minimum).
 * - Batch: estimated drain time = pending · promptTime + pendingTokens / (decodeTps · instances); above the
 *   24 h deadline ⇒ +1; nothing pending ⇒ scale to zero; NIW arriving to an empty batch pool ⇒ +1.
 * Profiles instead of memory signals, as the paper says; no separate mixed pool (a deviation).
 */
export function chironScaler(o: SageServeScalingOptions): Scaler {
  const cd = new Cooldown(o.cooldownS);
  const started = new Set<string>();
  return {
    name: 'chiron',
    decide(s) {
      const out: ScaleAction[] = [];
      for (const p of s.pools) {
        if (!cd.ok(p.name, s.now)) continue;
        const inst = s.view.instances.filter((i) => i.pool === p.name && i.state === 'ready');
        if (p.name.endsWith(o.niwPoolSuffix)) {
          const niwArrivals = s.arrivals.filter((a) => a.model === p.model && a.region === p.region && a.tier === 'niw').reduce((x, a) => x + a.requests, 0);
          if (!started.has(p.name)) {
            started.add(p.name);
            if (o.niwPoolMin > size(p)) out.push(add(p.name, 'chiron-batch-start', o.niwPoolMin - size(p)));
            continue;
          }
          let pending = 0;
          let tokens = 0;
          for (const i of inst) {
            pending += i.outstandingRequests;
            tokens += i.outstandingTokens;
          }
          const drainS = pending * o.chironPromptTimeS + tokens / (o.chironDecodeTps * Math.max(1, inst.length));
          if ((drainS > o.chironDeadlineS || (size(p) === 0 && niwArrivals > 0)) && size(p) < p.maxCount) {
            out.push(add(p.name, 'batch-drain-time'));
            cd.mark(p.name, s.now);
          } else if (pending === 0 && niwArrivals === 0 && size(p) > p.minCount) {
            out.push(remove(p.name, 'batch-empty', size(p) - p.minCount));
            cd.mark(p.name, s.now);
          }
          continue;
        }
        if (inst.length === 0) continue;
        const busy = inst.filter((i) => i.numRunning > 0).length;
        const ibp = busy / inst.length;
        if (ibp > o.chironIbp && size(p) < p.maxCount) {
          out.push(add(p.name, 'ibp-above'));
          cd.mark(p.name, s.now);
        } else if (ibp <= o.chironIbp && size(p) > Math.max(1, p.minCount)) {
          out.push(remove(p.name, 'ibp-below'));
          cd.mark(p.name, s.now);
        }
      }
      return orHold(out, 'chiron-steady');
    },
  };
}
