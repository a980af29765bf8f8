import { UserError } from '../../util/errors.ts';
import type { Rng } from '../../util/rng.ts';
import type { TraceRequest } from '../types.ts';

/**
 * Shared prompt prefixes for a synthetic workload (`workload.synthetic.sharedPrefix`), as SGLang's
 * generated-shared-prefix benchmark has them: `groups` prefixes (system prompts, few-shot examples, documents) of
 * `tokens` tokens each; every request draws one, with popularity ∝ 1 / (rank + 1)^zipf, and its sampled prompt
 * follows it (inputTokens = tokens + the sampled length). The request carries block hashes for the prefix cache: the
 * blocks wholly inside the prefix hash by (group, block), the same for every request of the group; the rest
 * (the block straddling prefix and suffix, and the suffix) get hashes no other request has.
 */
export interface SharedPrefixSpec {
  groups: number;
  tokens: number;
  /** Tokens a block (vLLM's block size, 16). */
  blockTokens: number;
  /** 0: every group equally likely. */
  zipf: number;
}

/** Block hashes a request carries at most (1M tokens at 16 a block): the rest of a longer prompt is not hashed. */
export const MAX_PREFIX_HASHES = 65_536;
/** Shared blocks per group stay below this, so (group, block) hashes never meet: group × 2^21 + block. */
const BLOCKS_PER_GROUP = 2 ** 21;

/** Draws a group per request and writes the request's tokens and hashes; one instance per pass over the workload. */
export function prefixGroups(spec: SharedPrefixSpec): (rng: Rng, req: TraceRequest) => void {
  const { groups, tokens, blockTokens, zipf } = spec;
  const sharedBlocks = Math.floor(tokens / blockTokens);
  const ok = Number.isInteger(groups) && groups >= 1 && groups * BLOCKS_PER_GROUP <= Number.MAX_SAFE_INTEGER &&
    Number.isInteger(tokens) && tokens >= 1 && Number.isInteger(blockTokens) && blockTokens >= 1 && sharedBlocks < BLOCKS_PER_GROUP &&
    Number.isFinite(zipf) && zipf >= 0;
  if (!ok) throw new UserError(`synthetic sharedPrefix: expected integer groups ≥ 1, tokens ≥ 1, blockTokens ≥ 1 and zipf ≥ 0, got ${JSON.stringify(spec)}`);
  // Cumulative popularity; one uniform draw and a binary search per request.
  const cdf = new Float64Array(groups);
  let sum = 0;
  for (let g = 0; g < groups; g++) cdf[g] = sum += (g + 1) ** -zipf;
  let unique = 0;
  return (rng, req) => {
    const u = rng.next() * sum;
    let lo = 0;
    let hi = groups - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    req.inputTokens += tokens;
    const n = Math.min(Math.ceil(req.inputTokens / blockTokens), MAX_PREFIX_HASHES);
    const hashes = new Array<number>(n);
    for (let k = 0; k < n; k++) hashes[k] = k < sharedBlocks ? lo * BLOCKS_PER_GROUP + k : -++unique;
    req.prefixHashes = hashes;
    req.prefixBlockTokens = blockTokens;
  };
}
