import { leastBy } from './pick.ts';

/**
 * SplitwiseSim's baseline router: the instance with the fewest pending tokens, where every unfinished request
 * counts prompt + 1 until its prefill ends and 1 afterwards (the +1 spreads load between instances with no
 * queued prefill); ties go to the lowest index.
 */
export const pendingTokens = leastBy('pending-tokens', 'fewest-pending-tokens', (i) => i.pendingTokens);
