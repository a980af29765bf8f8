/**
 * vLLM's automatic prefix caching, at the granularity a trace gives: a request carries the hashes of its prompt's
 * blocks (`hash_ids` of Mooncake, 512 tokens a block, and Qwen-Bailian, 16), each hash standing for the whole
 * prompt up to the end of its block, so two prompts share a cached prefix exactly as far as their hashes agree.
 *
 * What is modelled (engine.prefixCache, off by default): a request admitted to an instance skips the prefill of
 * its longest cached prefix of full blocks, as vLLM V1 does, but never all of it (at least the last prompt token
 * is computed, as vLLM recomputes it); a request's full prompt blocks enter the cache when its prefill ends; the
 * cache holds up to the instance's KV capacity in tokens and evicts the least recently used block.
 * What is not: the cache is not drawn from the free KV blocks (a cached prefix costs no KV block and a running
 * request's shared prefix blocks count once per request, so KV pressure is overstated when many running requests
 * share a prefix, and the cache can outlast a KV-full instance's real one); a hit is found only at admission (a
 * request waiting in the queue does not keep its blocks warm); blocks are cached when the prefill ends, not
 * block by block as it runs.
 */
export class PrefixCache {
  /** Hash → its block's tokens; the Map's insertion order is the recency order (first = least recently used). */
  private readonly blocks = new Map<number, number>();
  private tokens = 0;

  constructor(readonly capacityTokens: number) {}

  /** Tokens held (for tests and reports). */
  get size(): number {
    return this.tokens;
  }

  /** Tokens of the longest cached prefix of the first `fullBlocks` of `hashes`, each `blockTokens` long. */
  match(hashes: readonly number[], blockTokens: number, fullBlocks: number): number {
    const n = Math.min(fullBlocks, hashes.length);
    let hit = 0;
    while (hit < n && this.blocks.has(hashes[hit]!)) hit++;
    return hit * blockTokens;
  }

  /**
   * Caches (or refreshes as most recent) the first `fullBlocks` of `hashes`, evicting the least recently used. The
   * blocks go in from the last to the first, so a prompt's tail is evicted before its head (vLLM frees a request's
   * blocks in that order for the same reason: a head block without its tail still serves, a tail without its head
   * never does).
   */
  insert(hashes: readonly number[], blockTokens: number, fullBlocks: number): void {
    const n = Math.min(fullBlocks, hashes.length);
    for (let i = n - 1; i >= 0; i--) {
      const h = hashes[i]!;
      const had = this.blocks.get(h);
      if (had !== undefined) {
        this.blocks.delete(h);
        this.tokens -= had;
      }
      this.blocks.set(h, blockTokens);
      this.tokens += blockTokens;
    }
    while (this.tokens > this.capacityTokens) {
      const [oldest, t] = this.blocks.entries().next().value!;
      this.blocks.delete(oldest);
      this.tokens -= t;
    }
  }
}
