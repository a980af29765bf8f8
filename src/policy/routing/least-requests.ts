import { z } from 'zod';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/** Fewest outstanding (running + waiting) requests. */
export const leastRequests = {
  options: z.object({}).strict(),
  make() {
    return {
      name: 'least-requests',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        return { kind: 'send', to: pickMin(c, (i) => i.outstandingRequests).id, reason: 'fewest-requests' };
      },
    };
  },
} satisfies RouterEntry;
