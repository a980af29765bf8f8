import { z } from 'zod';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/** Two distinct ready instances drawn at random; the one with fewer outstanding requests wins (the first on a tie). */
export const powerOfTwo = {
  options: z.object({}).strict(),
  make(_opts, ctx) {
    return {
      name: 'power-of-two',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        if (c.length === 1) return { kind: 'send', to: c[0]!.id, reason: 'only-one' };
        const i = ctx.rng.int(c.length);
        let j = ctx.rng.int(c.length - 1);
        if (j >= i) j++;
        const a = c[i]!;
        const b = c[j]!;
        return { kind: 'send', to: b.outstandingRequests < a.outstandingRequests ? b.id : a.id, reason: 'better-of-two' };
      },
    };
  },
} satisfies RouterEntry;
