import { MOONCAKE_KEYS, lengthJsonlReader } from './length-jsonl.ts';

/**
 * Mooncake JSONL: one object per line, `{"timestamp": ms, "input_length": n, "output_length": n,
 * "hash_ids": [...]}`. Arrival = (timestamp − first timestamp) / 1000 s. `hash_ids`: the prompt's block hashes,
 * 512 tokens a block (Mooncake's FAST '25 trace README), for the prefix cache (`engine.prefixCache`); other keys
 * are ignored.
 */
export const MOONCAKE_HASH_BLOCK_TOKENS = 512;
export const readMooncake = lengthJsonlReader({ keys: MOONCAKE_KEYS, unitsPerSecond: 1000, timestampExpected: 'a number of milliseconds ≥ 0', hashBlockTokens: MOONCAKE_HASH_BLOCK_TOKENS });
