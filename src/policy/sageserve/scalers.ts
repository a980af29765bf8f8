import type { FleetView, InstanceView } from '../types.ts';
import { heldInstances, type PoolStatus, type ScaleAction, type Scaler, type ScalingSignals } from '../scaling/types.ts';
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
/** Room for a scale-out under the pool's maxCount, which counts draining instances too. */
const hasRoom = (p: PoolStatus) => heldInstances(p) < p.maxCount;

/** One reactive step for a pool: > up ⇒ +1, < down ⇒ −1 (to its minimum), with a cooldown. */
function reactiveStep(o: SageServeScalingOptions, p: PoolStatus, u: number, now: number, cd: Cooldown, min: number): ScaleAction | null {
  if (!cd.ok(p.name, now) || p.ready === 0) return null;
  if (u > o.scaleUpAbove && hasRoom(p) && (!o.waitForProvisioning || p.provisioning === 0)) {
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
        if (p.name.endsWith(o.niwPoolSuffix) || p.name.endsWith(o.mixedPoolSuffix)) continue;
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
        if (p.name.endsWith(o.mixedPoolSuffix)) continue;
        const niw = p.name.endsWith(o.niwPoolSuffix);
        // The silo minimum, within the pool's own maximum (the governor's bound).
        const siloMin = Math.min(o.niwPoolMin, p.maxCount);
        if (niw && size(p) < siloMin) {
          out.push(add(p.name, 'silo-minimum', siloMin - size(p)));
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

/** LT-U's emergency rule (released code only; `ltuEmergencyAbove` null = off, the paper's LT-U). */
const isEmergency = (o: SageServeScalingOptions, u: number): boolean => o.ltuEmergencyAbove !== null && u > o.ltuEmergencyAbove;

/**
 * LT-I / LT-U / LT-UA (§6.4): every hour the planner's target sets `remaining[pool] = target − current`.
 * - LT-I applies it at once.
 * - LT-U moves one instance per cooldown toward it, out only while util > 70 %, in only while util < 30 %;
 *   with `ltuEmergencyAbove` (the code preset's 90 %), at the target it adds one more while util is above that,
 *   to be given back by the next scale-in below 30 % (the released code's counter goes to −1).
 * - LT-UA is LT-U plus, in the last 20 min of the hour once the target is reached, an override on the ratio
 *   of observed IW tokens/s (last `observeS`) to the forecast peak: ≥ 5 ⇒ +1, ≤ 0.5 ⇒ −1 (memory thresholds not
 *   required unless `overrideNeedsMemory`; by default only while capacity at θ disagrees too, see options.ts).
 * Before the first forecast (less than `minHistoryMin` of history) every mode scales reactively.
 */
export function longTermScaler(mode: LongTermMode, o: SageServeScalingOptions): Scaler {
  const planner = new HourlyPlanner(o, o.niwTier);
  const cd = new Cooldown(o.cooldownS);
  const remaining = new Map<string, number>();
  const forecast = new Map<string, number>();
  let planned = false;
  return {
    name: mode,
    notes: () => planner.notes(),
    decide(s: ScalingSignals) {
      planner.observe(s);
      const pools = s.pools.filter((p) => !p.name.endsWith(o.niwPoolSuffix) && !p.name.endsWith(o.mixedPoolSuffix));
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
        if (rem > 0 && u > o.scaleUpAbove && hasRoom(p)) {
          out.push(add(p.name, 'toward-target'));
          remaining.set(p.name, rem - 1);
          cd.mark(p.name, s.now);
        } else if (rem < 0 && u < o.scaleDownBelow && size(p) > Math.max(1, p.minCount)) {
          out.push(remove(p.name, 'toward-target'));
          remaining.set(p.name, rem + 1);
          cd.mark(p.name, s.now);
        } else if (mode === 'lt-u' && rem === 0 && isEmergency(o, u) && hasRoom(p)) {
          out.push(add(p.name, 'emergency-past-target'));
          remaining.set(p.name, -1);
          cd.mark(p.name, s.now);
        } else if (mode === 'lt-ua' && rem === 0 && inHourS >= 3600 - o.overrideWindowS) {
          const f = forecast.get(p.name) ?? NaN;
          if (!(f > 0)) continue;
          const observed = planner.observedTps(p.model, p.region, s.now, o.observeS);
          const ratio = observed / f;
          const theta = thetaOf(o, p.model);
          const memUp = (!o.overrideNeedsMemory || u > o.scaleUpAbove) && (!o.overrideCapacityGuard || observed > size(p) * theta);
          const memDown = (!o.overrideNeedsMemory || u < o.scaleDownBelow) && (!o.overrideCapacityGuard || observed <= (size(p) - 1) * theta);
          if (ratio >= o.overrideUpRatio && memUp && hasRoom(p)) {
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

/** Chiron's three pools of one endpoint (model × region), told apart by name suffix; absent ones are null. */
export interface ChironEndpoint {
  readonly model: string;
  readonly region: string;
  readonly interactive: PoolStatus | null;
  readonly mixed: PoolStatus | null;
  readonly batch: PoolStatus | null;
}

/** Groups pools into Chiron endpoints (sorted by model, region): no suffix = interactive, `-mixed`, `-niw` = batch. */
export function chironEndpoints(o: SageServeScalingOptions, pools: readonly PoolStatus[]): ChironEndpoint[] {
  const by = new Map<string, { model: string; region: string; interactive: PoolStatus | null; mixed: PoolStatus | null; batch: PoolStatus | null }>();
  for (const p of pools) {
    const key = `${p.model}\u0000${p.region}`;
    let e = by.get(key);
    if (!e) by.set(key, (e = { model: p.model, region: p.region, interactive: null, mixed: null, batch: null }));
    if (p.name.endsWith(o.niwPoolSuffix)) e.batch ??= p;
    else if (p.name.endsWith(o.mixedPoolSuffix)) e.mixed ??= p;
    else e.interactive ??= p;
  }
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
}

/** True when the instance has at least one running request of a tier other than `niwTier` (an IW request). */
function runsIw(i: InstanceView, niwTier: string): boolean {
  if (i.numRunning === 0) return false;
  // No order is assumed: the simulator lists running requests first, the live fleet view in arrival order.
  for (const r of i.requests()) if (r.status === 'running' && r.tier !== niwTier) return true;
  return false;
}

/**
 * Chiron's interactive backpressure (the released code's `ibp`): the share of the ready instances of `pools`
 * (an endpoint's interactive and mixed pools) running at least one IW request; NaN when none is ready.
 * Worked number: 4 interactive instances of which 3 run IW, 2 mixed of which 1 runs only NIW and 1 runs IW
 * ⇒ (3 + 1) / 6 = 0.667 > Θ = 0.6 ⇒ scale out.
 */
export function interactiveBackpressure(view: FleetView, pools: readonly string[], niwTier: string): number {
  let ready = 0;
  let busy = 0;
  for (const i of view.instances) {
    if (i.state !== 'ready' || !pools.includes(i.pool)) continue;
    ready++;
    if (runsIw(i, niwTier)) busy++;
  }
  return ready === 0 ? NaN : busy / ready;
}

/**
 * Chiron's batch-pool drain-time estimate (the released code): pending requests × prompt time + pending tokens
 * ÷ (decode tokens/s × instances), instances counted as at least 1. Worked number: 100 pending requests holding
 * 2,000,000 tokens on 2 instances at 10 s and 100 tokens/s ⇒ 1,000 + 10,000 = 11,000 s.
 */
export function chironDrainS(pending: number, tokens: number, instances: number, promptTimeS: number, decodeTps: number): number {
  return pending * promptTimeS + tokens / (decodeTps * Math.max(1, instances));
}

/**
 * Chiron (Patke et al., arXiv 2501.08090, as SageServe's released code runs it; digest §3.10) with its three
 * pools per endpoint (model × region): interactive (the endpoint's plain pool), mixed (`-mixed`) and batch
 * (`-niw`). The router (`../routing/sageserve.ts`) sends IW to the interactive pool, to the mixed one while the
 * interactive pool's memory utilisation is above 70 %; NIW to the batch pool, to the mixed one while the batch
 * pool is empty or above 70 %.
 * - Start: at the first tick each pool is topped up to `chironStart` (paper 10 / 5 / 5; code 20 / 10 / 10).
 * - Interactive backpressure IBP = share of the interactive + mixed ready instances running ≥ 1 IW request;
 *   IBP > Θ (0.6) ⇒ +1, else −1 (not below `chironFloor` = 2 nor the pool's minimum), for each pool in
 *   `chironScaledPools` (both by default: the code scales whichever of the two endpoints a request reached, with
 *   the same IBP), one step per pool per cooldown, and (`chironWaitForProvisioning`) no scale-out while the
 *   pool's previous one is still provisioning.
 * - Batch: drain time (`chironDrainS`) above the 24 h deadline ⇒ +1; nothing pending and no NIW arriving ⇒
 *   scale to zero; NIW arriving to an empty batch pool ⇒ +1.
 * Profiles and counts instead of memory signals, as the paper says.
 */
export function chironScaler(o: SageServeScalingOptions): Scaler {
  const cd = new Cooldown(o.cooldownS);
  const started = new Set<string>();
  const start = (out: ScaleAction[], p: PoolStatus | null, n: number) => {
    if (!p) return;
    const count = Math.min(n - size(p), p.maxCount - heldInstances(p));
    if (count > 0) out.push(add(p.name, 'chiron-start', count));
  };
  return {
    name: 'chiron',
    decide(s) {
      const out: ScaleAction[] = [];
      for (const e of chironEndpoints(o, s.pools)) {
        const key = `${e.model}\u0000${e.region}`;
        if (!started.has(key)) {
          started.add(key);
          start(out, e.interactive, o.chironStart.interactive);
          start(out, e.mixed, o.chironStart.mixed);
          start(out, e.batch, o.chironStart.batch);
          continue;
        }
        const b = e.batch;
        if (b && cd.ok(b.name, s.now)) {
          let niwArrivals = 0;
          for (const a of s.arrivals) if (a.model === e.model && a.region === e.region && a.tier === o.niwTier) niwArrivals += a.requests;
          let pending = 0;
          let tokens = 0;
          let n = 0;
          for (const i of s.view.instances) {
            if (i.pool !== b.name || i.state !== 'ready') continue;
            n++;
            pending += i.outstandingRequests;
            tokens += i.outstandingTokens;
          }
          const drainS = chironDrainS(pending, tokens, n, o.chironPromptTimeS, o.chironDecodeTps);
          const waiting = o.chironWaitForProvisioning && b.provisioning > 0;
          if ((drainS > o.chironDeadlineS || (size(b) === 0 && niwArrivals > 0)) && hasRoom(b) && !waiting) {
            out.push(add(b.name, 'batch-drain-time'));
            cd.mark(b.name, s.now);
          } else if (pending === 0 && niwArrivals === 0 && b.provisioning === 0 && size(b) > b.minCount) {
            out.push(remove(b.name, 'batch-empty', size(b) - b.minCount));
            cd.mark(b.name, s.now);
          }
        }
        const iwPools = [e.interactive, e.mixed].filter((p): p is PoolStatus => p !== null);
        const ibp = interactiveBackpressure(s.view, iwPools.map((p) => p.name), o.niwTier);
        if (Number.isNaN(ibp)) continue;
        for (const which of o.chironScaledPools) {
          const p = which === 'interactive' ? e.interactive : e.mixed;
          if (!p || !cd.ok(p.name, s.now)) continue;
          if (ibp > o.chironIbp) {
            if (!hasRoom(p) || (o.chironWaitForProvisioning && p.provisioning > 0)) continue;
            out.push(add(p.name, 'ibp-above'));
            cd.mark(p.name, s.now);
          } else if (size(p) > Math.max(o.chironFloor, p.minCount)) {
            out.push(remove(p.name, 'ibp-below'));
            cd.mark(p.name, s.now);
          }
        }
      }
      return orHold(out, 'chiron-steady');
    },
  };
}
