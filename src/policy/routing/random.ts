import { z } from 'zod';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/** Uniformly random ready instance (seeded). */
export const random = {
  options: z.object({}).strict(),
  make(_opts, ctx) {
    return {
      name: 'random',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        return { kind: 'send', to: c[ctx.rng.int(c.length)]!.id, reason: 'random' };
      },
    };
  },
} satisfies RouterEntry;
