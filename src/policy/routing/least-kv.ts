import { leastBy } from './pick.ts';

/** Lowest KV-cache utilisation; ties to the fewest waiting requests (1e-9 is below one block's share), then the lowest id. */
export const leastKv = leastBy('least-kv', 'lowest-kv', (i) => i.kvUsedFraction + 1e-9 * i.numWaiting);
