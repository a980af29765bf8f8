import { z } from 'zod';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/** Join the shortest queue, measured in tokens still to compute (prefill left + predicted decode left). */
export const jsq = {
  options: z.object({}).strict(),
  make() {
    return {
      name: 'jsq',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        return { kind: 'send', to: pickMin(c, (i) => i.outstandingTokens).id, reason: 'fewest-tokens' };
      },
    };
  },
} satisfies RouterEntry;
