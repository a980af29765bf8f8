import { z } from 'zod';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/** Lowest KV-cache utilisation; ties to the fewest waiting requests, then the lowest id. */
export const leastKv = {
  options: z.object({}).strict(),
  make() {
    return {
      name: 'least-kv',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        // Waiting requests break ties between idle-looking instances (1e-9 is below one KV block's share).
        return { kind: 'send', to: pickMin(c, (i) => i.kvUsedFraction + 1e-9 * i.numWaiting).id, reason: 'lowest-kv' };
      },
    };
  },
} satisfies RouterEntry;
