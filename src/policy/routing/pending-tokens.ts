import { z } from 'zod';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/**
 * SplitwiseSim's baseline router: the instance with the fewest pending tokens, where every unfinished request
 * counts prompt + 1 until its prefill ends and 1 afterwards (the +1 spreads load between instances with no
 * queued prefill); ties go to the lowest index.
 */
export const pendingTokens = {
  options: z.object({}).strict(),
  make() {
    return {
      name: 'pending-tokens',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        return { kind: 'send', to: pickMin(c, (i) => i.pendingTokens).id, reason: 'fewest-pending-tokens' };
      },
    };
  },
} satisfies RouterEntry;
