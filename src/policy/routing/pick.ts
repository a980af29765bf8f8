import { z } from 'zod';
import type { InstanceView } from '../types.ts';
import { NO_INSTANCE, type RouterEntry } from './types.ts';

/**
 * The candidate with the smallest score; ties go to the earliest in the list (lowest id), which keeps
 * decisions deterministic and matches SplitwiseSim's "lowest instance index" rule.
 */
export function pickMin(cands: readonly InstanceView[], score: (i: InstanceView) => number): InstanceView {
  let best = cands[0]!;
  let bestScore = score(best);
  for (let i = 1; i < cands.length; i++) {
    const s = score(cands[i]!);
    if (s < bestScore) {
      best = cands[i]!;
      bestScore = s;
    }
  }
  return best;
}

/** A router with no options that sends each request to the ready instance with the lowest `score`. */
export function leastBy(name: string, reason: string, score: (i: InstanceView) => number): RouterEntry {
  return {
    options: z.object({}).strict(),
    make() {
      return {
        name,
        route(req, view) {
          const c = view.routable(req.model);
          if (c.length === 0) return NO_INSTANCE;
          return { kind: 'send', to: pickMin(c, score).id, reason };
        },
      };
    },
  };
}
