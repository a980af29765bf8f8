import type { InstanceView } from '../types.ts';

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
