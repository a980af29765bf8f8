import { leastBy } from './pick.ts';

/** Fewest outstanding (running + waiting) requests. */
export const leastRequests = leastBy('least-requests', 'fewest-requests', (i) => i.outstandingRequests);
