import { z } from 'zod';
import { defineScaler, type ScaleAction } from './types.ts';

/**
 * A fixed instance count per pool: `count` instances (default: whatever the pool starts with), restored if the
 * fleet drifts from it. PreServe's resource reference is "static 8" (seed 001 §6.2); `none` with 8 instances
 * at start is the same fleet, this policy only adds the knob `scaling.options.count`.
 */
export const staticCount = defineScaler({
  options: z.object({ count: z.number().int().min(0).optional() }).strict(),
  make(opts) {
    const wanted = new Map<string, number>();
    return {
      name: 'static',
      decide(s) {
        const out: ScaleAction[] = [];
        for (const p of s.pools) {
          const current = p.provisioning + p.ready;
          if (!wanted.has(p.name)) wanted.set(p.name, opts.count ?? current);
          const delta = wanted.get(p.name)! - current;
          if (delta > 0) out.push({ kind: 'add', pool: p.name, count: delta, reason: 'static-count' });
          else if (delta < 0) out.push({ kind: 'remove', pool: p.name, count: -delta, reason: 'static-count' });
        }
        return out.length > 0 ? out : [{ kind: 'hold', reason: 'static fleet' }];
      },
    };
  },
});
