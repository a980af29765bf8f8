import { z } from 'zod';
import { positiveSeconds } from '../options.ts';
import { defineScaler, type ScaleAction } from './types.ts';

/**
 * Threshold scaling on memory pressure, per pool: one more instance when the mean KV utilisation of its ready
 * instances exceeds `scaleUpAbove` (or requests wait), one fewer when it is below `scaleDownBelow` and nobody
 * waits. SageServe's reactive baseline uses 70 % / 30 % (seed 000 §3.9); cooldowns and bounds are enforced
 * outside the policy by the governor.
 *
 * Scale from zero: when no pool of a model has a ready or starting instance and the model saw arrivals in the
 * last interval, the first such pool (scenario order) starts `step` instances — otherwise a pool configured with
 * `count: 0, minCount: 0` could never serve.
 *
 * Scale to zero (opt-in, `idleToZeroS`; Knative's scale-to-zero): a model idle for `idleToZeroS` seconds — no
 * arrivals and, at every tick since, nothing running or waiting on its instances nor deferred or held at the
 * gateway (`queued`) — asks for all of its pools' ready and provisioning instances to go (the governor still keeps
 * `minCount`, `maxStep` and `downCooldownS`). Idleness is seen at ticks: arrivals over an interval count as at its
 * end, a model first seen idle counts from the start of that interval. With it set, requests waiting for a model
 * with no capacity (`waiting`, `queued`) ask for a scale-from-zero as arrivals do, at every tick until one starts.
 * Unset (default): the last ready instance is never removed.
 */
export const reactive = defineScaler({
  options: z
    .object({
      scaleUpAbove: z.number().min(0).max(1).default(0.7),
      scaleDownBelow: z.number().min(0).max(1).default(0.3),
      /** Also scale up when this many requests wait per ready instance. */
      waitingPerInstance: z.number().min(0).default(4),
      step: z.number().int().positive().default(1),
      /** Seconds a model must be idle before its pools may go to zero instances; absent: never. */
      idleToZeroS: positiveSeconds.optional(),
    })
    .strict()
    .refine((o) => o.scaleDownBelow < o.scaleUpAbove, { message: 'scaleDownBelow must be < scaleUpAbove', path: ['scaleDownBelow'] }),
  make(opts) {
    /** Scale to zero: per model, the last tick it was seen busy (or the start of the interval it was first seen idle). */
    const lastBusy = new Map<string, number>();
    /** Pools whose `minCount` keeps them above zero (a note: `idleToZeroS` cannot take them there). */
    const floored = new Map<string, number>();
    return {
      name: 'reactive',
      decide(s) {
        const out: ScaleAction[] = [];
        const demanded = new Set(s.arrivals.filter((a) => a.requests > 0).map((a) => a.model));
        const idle = new Set<string>();
        if (opts.idleToZeroS !== undefined) {
          // Requests waiting for an instance ask for capacity too (a request may wait out several ticks at zero).
          for (const p of s.pools) if (p.waiting > 0 || (p.queued ?? 0) > 0) demanded.add(p.model);
          const busy = new Set(demanded);
          for (const p of s.pools) if (p.outstandingRequests > 0) busy.add(p.model);
          for (const p of s.pools) {
            if (busy.has(p.model)) lastBusy.set(p.model, s.now);
            else if (!lastBusy.has(p.model)) lastBusy.set(p.model, s.now - s.intervalS);
            if (p.minCount > 0) floored.set(p.name, p.minCount);
          }
          for (const [model, t] of lastBusy) if (!busy.has(model) && s.now - t >= opts.idleToZeroS) idle.add(model);
        }
        const live = new Set(s.pools.filter((p) => p.ready + p.provisioning > 0).map((p) => p.model));
        for (const p of s.pools) {
          if (idle.has(p.model)) {
            if (p.ready + p.provisioning > 0) out.push({ kind: 'remove', pool: p.name, count: p.ready + p.provisioning, reason: 'idle-to-zero' });
            continue;
          }
          if (p.ready === 0) {
            // Nothing to measure yet (provisioning instances report next ticks), unless the model has no capacity at all.
            if (demanded.has(p.model) && !live.has(p.model)) {
              out.push({ kind: 'add', pool: p.name, count: opts.step, reason: 'scale-from-zero' });
              live.add(p.model);
            }
            continue;
          }
          const pressure = p.kvUtilization > opts.scaleUpAbove || p.waiting > opts.waitingPerInstance * p.ready;
          if (pressure && p.provisioning === 0) out.push({ kind: 'add', pool: p.name, count: opts.step, reason: 'kv-above-threshold' });
          else if (!pressure && p.kvUtilization < opts.scaleDownBelow && p.waiting === 0 && p.ready > 1) {
            out.push({ kind: 'remove', pool: p.name, count: opts.step, reason: 'kv-below-threshold' });
          }
        }
        return out.length > 0 ? out : [{ kind: 'hold', reason: 'within-thresholds' }];
      },
      notes() {
        return [...floored].map(([pool, min]) => `reactive: idleToZeroS is set, but pool ${pool} has minCount ${min}: an idle pool keeps ${min} (set minCount: 0 to let it reach zero)`);
      },
    };
  },
});
