import { z } from 'zod';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/** Cycles through the model's ready instances in id order. */
export const roundRobin = {
  options: z.object({}).strict(),
  make() {
    let cursor = 0;
    return {
      name: 'round-robin',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        const to = c[cursor++ % c.length]!.id;
        return { kind: 'send', to, reason: 'next-in-turn' };
      },
    };
  },
} satisfies RouterEntry;
