import { z } from 'zod';
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
 */
export const reactive = defineScaler({
  options: z
    .object({
      scaleUpAbove: z.number().min(0).max(1).default(0.7),
      scaleDownBelow: z.number().min(0).max(1).default(0.3),
      /** Also scale up when this many requests wait per ready instance. */
      waitingPerInstance: z.number().min(0).default(4),
      step: z.number().int().positive().default(1),
    })
    .strict()
    .refine((o) => o.scaleDownBelow < o.scaleUpAbove, { message: 'scaleDownBelow must be < scaleUpAbove', path: ['scaleDownBelow'] }),
  make(opts) {
    return {
      name: 'reactive',
      decide(s) {
        const out: ScaleAction[] = [];
        const demanded = new Set(s.arrivals.filter((a) => a.requests > 0).map((a) => a.model));
        const live = new Set(s.pools.filter((p) => p.ready + p.provisioning > 0).map((p) => p.model));
        for (const p of s.pools) {
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
    };
  },
});
