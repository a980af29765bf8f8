/**
 * vLLM's automatic prefix caching, at the granularity a trace gives: a request carries the hashes of its prompt's
 * blocks (`hash_ids` of Mooncake, 512 tokens a block, and Qwen-Bailian, 16), each hash standing for the whole
 * prompt up to the end of its block, so two prompts share a cached prefix exactly as far as their hashes agree.
 *
 * What is modelled (engine.prefixCache, off by default), as vLLM V1's block pool does it: a request admitted to an
 * instance skips the prefill of its longest cached prefix of full blocks, but never all of it (when every block
 * hits, the last engine block is recomputed, as vLLM does to get the last token's logits); it then holds those
 * blocks, and a block held by several running requests is stored once (and counted once in the engine's used
 * blocks). When its prefill ends, a request's full prompt blocks that no one holds or caches become shared the same
 * way (one that is already there stays the request's own copy, as vLLM keeps duplicate blocks). A block no running
 * request holds stays cached in the free KV blocks (the free list, least recently used first) until an allocation needs
 * the room: the engine calls `evictTo` with its free tokens whenever it allocates. Released blocks go back tail
 * first, so a prompt's tail is evicted before its head (a head block without its tail still serves; a tail without
 * its head never does). A request's own blocks (past its cached trace blocks: its own prompt text, its output) are
 * cached too when it finishes or is preempted, as one run under a key no trace hash can be (`putRun`), evicted block
 * by block from its tail: only its own resume after a preemption can hit it, but it takes LRU room like any block.
 * A hit is looked up when the scheduler tries to admit a request, as vLLM's does. What is not modelled: blocks are
 * cached when the prefill ends, not block by block as it runs; a conversation's next turn finds its earlier turns'
 * prompt blocks but not their output blocks (those are cached as the request's own run, and the trace's hashes for
 * them first appear in the next turn); when the trace's blocks are not a multiple of the engine's, a shared block's
 * tokens are rounded up to engine blocks once for all shared blocks.
 *
 * The prefix-aware router uses the same class, with `insert` only, as its own LRU index of the blocks it sent to an
 * instance (nothing held there; `capacityTokens` bounds it).
 */
export class PrefixCache {
  /** Every cached block, held or free, by hash (a request's own run by `putRun`'s key). */
  private readonly blocks = new Map<number, Entry>();
  /**
   * The free ones in recency order (`oldest` is evicted first). A linked list, not the Map's insertion order: taking a
   * Map's first entry after many deletions at its front walks over their holes, which took 69 % of a 72k-request
   * prefix-cache run (measured with --cpu-prof, session 26).
   */
  private oldest: Entry | null = null;
  private newest: Entry | null = null;
  private freeTokens = 0;
  private heldTokensSum = 0;

  /** `blockTokens`: the engine's block, the unit in which a request's own run (below) is evicted. */
  constructor(
    readonly capacityTokens: number,
    private readonly blockTokens = 1,
  ) {}

  /** Tokens cached, held or free (for tests and reports). */
  get size(): number {
    return this.freeTokens + this.heldTokensSum;
  }

  /** Tokens of the blocks running requests hold, each counted once. */
  get heldTokens(): number {
    return this.heldTokensSum;
  }

  /** Tokens of the longest cached prefix of the first `fullBlocks` of `hashes`, each `blockTokens` long. */
  match(hashes: readonly number[], blockTokens: number, fullBlocks: number): number {
    const n = Math.min(fullBlocks, hashes.length);
    let hit = 0;
    while (hit < n && this.blocks.has(hashes[hit]!)) hit++;
    return hit * blockTokens;
  }

  /** Whether a running request holds the block, or it is cached free. */
  has(hash: number): boolean {
    return this.blocks.has(hash);
  }

  /** How many running requests hold the block (0: cached free, or not cached). */
  holders(hash: number): number {
    return this.blocks.get(hash)?.refs ?? 0;
  }

  /** Tokens that holding the first `n` of `hashes` would add to `heldTokens` (those no one holds yet). */
  newlyHeldTokens(hashes: readonly number[], n: number, blockTokens: number): number {
    let t = 0;
    for (let i = 0; i < n; i++) if (this.holders(hashes[i]!) === 0) t += blockTokens;
    return t;
  }

  /** One more holder of the block (taken out of the free blocks if it was cached there). */
  hold(hash: number, tokens: number): void {
    let e = this.blocks.get(hash);
    if (e === undefined) {
      e = { key: hash, tokens, refs: 0, prev: null, next: null };
      this.blocks.set(hash, e);
    } else if (e.refs === 0) {
      this.unlink(e);
      this.freeTokens -= e.tokens;
    }
    if (e.refs++ === 0) this.heldTokensSum += e.tokens;
  }

  /** One holder less; the last one's release leaves the block cached free, as the most recently used. */
  release(hash: number): void {
    const e = this.blocks.get(hash)!;
    if (--e.refs > 0) return;
    this.heldTokensSum -= e.tokens;
    this.append(e);
    this.freeTokens += e.tokens;
  }

  /**
   * Evicts the least recently used free blocks until they take at most `tokens` (the engine's free KV room). A
   * request's own run loses only the blocks needed, from its tail.
   */
  evictTo(tokens: number): void {
    while (this.freeTokens > tokens) {
      const e = this.oldest!;
      const cut = Number.isInteger(e.key) ? e.tokens : Math.min(e.tokens, Math.ceil((this.freeTokens - tokens) / this.blockTokens) * this.blockTokens);
      this.freeTokens -= cut;
      if (cut < e.tokens) e.tokens -= cut;
      else this.drop(e);
    }
  }

  /**
   * Caches a request's own blocks (those past its trace blocks: its own prompt text and its output) as one free
   * run of `tokens`, the most recently used, under a key that is not an integer (no trace hash can equal it).
   */
  putRun(key: number, tokens: number): void {
    this.takeRun(key);
    const e: Entry = { key, tokens, refs: 0, prev: null, next: null };
    this.blocks.set(key, e);
    this.append(e);
    this.freeTokens += tokens;
  }

  /** Tokens of a request's own run still cached (0 when none or evicted). */
  runTokens(key: number): number {
    return this.blocks.get(key)?.tokens ?? 0;
  }

  /** Removes a request's own run (it is in use again, or of no more use). */
  takeRun(key: number): void {
    const e = this.blocks.get(key);
    if (e === undefined) return;
    this.freeTokens -= e.tokens;
    this.drop(e);
  }

  /**
   * Caches (or refreshes as most recent) the first `fullBlocks` of `hashes` as free blocks, from the last to the
   * first (so the tail goes first), and evicts down to `capacityTokens`. The router's index; the engine holds and
   * releases instead.
   */
  insert(hashes: readonly number[], blockTokens: number, fullBlocks: number): void {
    const n = Math.min(fullBlocks, hashes.length);
    for (let i = n - 1; i >= 0; i--) {
      const h = hashes[i]!;
      let e = this.blocks.get(h);
      if (e !== undefined && e.refs > 0) continue; // held: not in the free list (the router's index holds nothing)
      if (e !== undefined) {
        this.unlink(e);
        this.freeTokens -= e.tokens;
        e.tokens = blockTokens;
      } else {
        e = { key: h, tokens: blockTokens, refs: 0, prev: null, next: null };
        this.blocks.set(h, e);
      }
      this.append(e);
      this.freeTokens += blockTokens;
    }
    this.evictTo(this.capacityTokens);
  }

  /** Forgets a free entry. */
  private drop(e: Entry): void {
    this.unlink(e);
    this.blocks.delete(e.key);
  }

  private append(e: Entry): void {
    e.prev = this.newest;
    e.next = null;
    if (this.newest) this.newest.next = e;
    else this.oldest = e;
    this.newest = e;
  }

  private unlink(e: Entry): void {
    if (e.prev) e.prev.next = e.next;
    else this.oldest = e.next;
    if (e.next) e.next.prev = e.prev;
    else this.newest = e.prev;
    e.prev = e.next = null;
  }
}

/** A cached block (or a request's own run): held while `refs` > 0, else in the free list, oldest first. */
interface Entry {
  readonly key: number;
  tokens: number;
  refs: number;
  prev: Entry | null;
  next: Entry | null;
}
