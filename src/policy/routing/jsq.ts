import { leastBy } from './pick.ts';

/** Join the shortest queue, measured in tokens still to compute (prefill left + predicted decode left). */
export const jsq = leastBy('jsq', 'fewest-tokens', (i) => i.outstandingTokens);
