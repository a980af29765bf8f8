import { z } from 'zod';
import { defineScaler, type ScaleAction } from './types.ts';

/**
 * Threshold scaling on memory pressure, per pool: one more instance when the mean KV utilisation of its ready
 * instances exceeds `scaleUpAbove` (or requests wait), one fewer when it is below `scaleDownBelow` and nobody
 * waits. SageServe's reactive baseline uses 70 % / 30 % (seed 000 §3.9); cooldowns and bounds are enforced
 * outside the policy by the governor.
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
        for (const p of s.pools) {
          if (p.ready === 0) continue; // nothing to measure yet; provisioning instances will report next ticks
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
