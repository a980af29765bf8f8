import { MOONCAKE_KEYS, lengthJsonlReader } from './length-jsonl.ts';

/**
 * Alibaba's Qwen-Bailian usage traces (KVCache in the wild, ATC '25), JSONL:
 * `{"chat_id", "parent_chat_id", "timestamp": s, "input_length", "output_length", "type", "turn", "hash_ids"}`.
 * The same keys as Mooncake but the timestamp is in SECONDS (61.114), so `detectFormat` tells them apart by
 * the chat keys. Arrival = timestamp − first timestamp; `type` (text, search, image, file) → `app`; `hash_ids`,
 * the prompt's block hashes, 16 tokens a block (the files are named `*_blksz_16.jsonl`), for the prefix cache
 * (`engine.prefixCache`). The chat structure (parent, turn) is not used. A row with `output_length` 0 produced no output
 * and is skipped and counted, as Azure's are, whatever its `input_length` (0 included).
 */
export const BAILIAN_SKIP_NO_OUTPUT = 'output_length 0';

export const BAILIAN_HASH_BLOCK_TOKENS = 16;
export const readBailian = lengthJsonlReader({ keys: MOONCAKE_KEYS, unitsPerSecond: 1, timestampExpected: 'a number of seconds ≥ 0', skipZeroOutput: BAILIAN_SKIP_NO_OUTPUT, app: 'type', hashBlockTokens: BAILIAN_HASH_BLOCK_TOKENS });
