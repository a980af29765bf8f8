import { MOONCAKE_KEYS, lengthJsonlReader } from './length-jsonl.ts';

/**
 * Mooncake JSONL: one object per line, `{"timestamp": ms, "input_length": n, "output_length": n,
 * "hash_ids": [...]}`. Arrival = (timestamp − first timestamp) / 1000 s. `hash_ids` (prefix-cache block
 * hashes) and any other keys are ignored: TraceRequest has no field for them yet.
 */
export const readMooncake = lengthJsonlReader({ keys: MOONCAKE_KEYS, unitsPerSecond: 1000, timestampExpected: 'a number of milliseconds ≥ 0' });
