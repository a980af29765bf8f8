import type { BatchShape, DecodeCoeffs, PerfModel } from '../perf/types.ts';
import type { WaitingQueue } from '../policy/scheduling/types.ts';
import { invariant } from '../util/errors.ts';
import type { SimRequest } from './request.ts';
import { SplitwiseBuilder } from './scheduler-splitwise.ts';
import { PrefixCache } from './prefix-cache.ts';

export interface EngineConfig {
  /**
   * Batch builder: vLLM V1 (on-demand KV blocks, recompute preemption, prefill chunks mixed with decodes), vLLM V0's
   * default (the same KV rules, but a step runs either whole prompts or decodes, never both: arrivals stall decodes),
   * or SplitwiseSim's (KV reservation, paused decodes).
   */
  scheduler: 'vllm' | 'vllm-v0' | 'splitwise';
  maxNumSeqs: number;
  /** Token budget of one iteration (a prefill chunk counts its tokens, a decode 1). */
  maxBatchedTokens: number;
  /** Split prompts across iterations (vLLM V1); off = a prompt runs whole (Orca/SplitwiseSim). */
  chunkedPrefill: boolean;
  blockTokens: number;
  kvBlocks: number;
  /** `fast` jumps over runs of identical decode steps in closed form; `step` takes one event per iteration. */
  mode: 'fast' | 'step';
  /** vLLM's automatic prefix caching for requests that carry block hashes (prefix-cache.ts; vllm and vllm-v0 only). */
  prefixCache?: boolean;
}

export interface EngineListener {
  onFinish(r: SimRequest, t: number): void;
}

/**
 * A run of decode-only iterations over one unchanged set of sequences. Iteration m (0-based) of the run
 * costs A + B·(c0 + k·m), with (A, B) the perf model's decode coefficients and c0 the summed context at the
 * run's start, so the run's j-th boundary is at T0 + F(j) with F(j) = j·A + B·(j·c0 + k·j(j−1)/2).
 * Both engine modes compute boundary times with this one formula, which is what makes them agree to the bit.
 */
interface DecodeRun {
  t0: number;
  k: number;
  c0: number;
  a: number;
  b: number;
  /** Iterations already applied to the requests' counters. */
  jDone: number;
  /** The boundary (iteration count) at which the engine's next event fires. */
  jEnd: number;
}

/**
 * One serving instance: a waiting queue, the running set, KV blocks, and iteration-level batching.
 * The simulator calls `enqueue` on arrival and `onBoundary` at the event time it was given; between events a
 * fast-mode engine is advanced lazily by `sync` when someone reads its state.
 */
export class Engine {
  readonly running: SimRequest[] = [];
  /** The batch of the iteration in progress: requests and their prefill chunk (0 = one decode token). */
  batch: SimRequest[] = [];
  chunks: number[] = [];
  private prevBatch: SimRequest[] = [];
  private prevChunks: number[] = [];
  usedBlocks = 0;
  /** With a prefix cache: the blocks running requests share (part of `usedBlocks`, each stored once). */
  sharedBlocks = 0;
  reservedTokens = 0;
  /**
   * SplitwiseSim's pending tokens of the unfinished requests here: prompt + 1 until a request's prefill ends, 1
   * after. Kept incrementally (the pending-tokens router reads it for every instance at every arrival); prefill
   * never advances inside a fast-forwarded decode run, so it is exact without a sync.
   */
  pendingTokens = 0;
  /** Bumped whenever the pending boundary event is replaced; stale events carry an older value. */
  gen = 0;
  /** Iterations executed (a fast-forwarded run counts all its iterations). */
  iterations = 0;
  preemptions = 0;
  /** With a prefix cache: the prompt tokens of every prefill started here (a resumed one's whole context too), and those the cache spared. */
  prefixQueryTokens = 0;
  prefixHitTokens = 0;
  readonly prefixCache: PrefixCache | null;
  private busy = false;
  private run: DecodeRun | null = null;
  private runMembers: SimRequest[] = [];
  private preemptedThisBuild = false;
  /** Items of `batch` with a prefill chunk (kept by `schedule`; 0 = a decode-only batch). */
  private prefillItems = 0;
  /** Items scheduled so far in the rebuild in progress (`batch` is cut to this length when it ends). */
  private nb = 0;
  /** Some request in `running` stopped running (finished, aborted, detached) since the last compaction. */
  private runningDirty = false;
  private shape: BatchShape = { prefillTokens: 0, prefillSeqs: 0, prefillAttendTokens: 0, decodeSeqs: 0, decodeContextTokens: 0 };
  private readonly splitwise: SplitwiseBuilder | null;
  /** Something arrived or was aborted since the last rebuild (SplitwiseSim's rebuild trigger, with completions). */
  private rebuildDue = false;
  /** Requests `abort` asked to remove at the next boundary. */
  private readonly aborting = new Set<SimRequest>();
  /** Requests `detach` asked to hand over at the next boundary, and those handed over since `takeDetached`. */
  private readonly detaching = new Set<SimRequest>();
  private detached: SimRequest[] = [];
  /**
   * Blocks held for requests migrating in (part of `usedBlocks`). While any are held the engine may idle with a
   * queue that does not fit; the hand-over or the release wakes it.
   */
  migrationBlocks = 0;

  constructor(
    readonly id: number,
    readonly cfg: EngineConfig,
    readonly perf: PerfModel,
    readonly waiting: WaitingQueue,
    private readonly listener: EngineListener,
  ) {
    this.splitwise = cfg.scheduler === 'splitwise' ? new SplitwiseBuilder(this) : null;
    invariant(!(cfg.prefixCache && this.splitwise), 'the splitwise builder has no prefix cache');
    this.prefixCache = cfg.prefixCache ? new PrefixCache(cfg.kvBlocks * cfg.blockTokens, cfg.blockTokens) : null;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /**
   * Whether the request's KV can ever fit this instance, counting the prompt plus every output token (one more than
   * its true peak, since the last output token never enters KV: conservative by one token).
   */
  canEverFit(r: SimRequest): boolean {
    const peak = r.inputTokens + r.outputTokens;
    return Math.ceil(peak / this.cfg.blockTokens) <= this.cfg.kvBlocks;
  }

  /**
   * Adds an arrived request to the waiting queue. Returns the time of a boundary event the simulator must
   * schedule (with the current `gen`), or NaN when the already pending event stays valid.
   */
  enqueue(r: SimRequest, now: number): number {
    r.status = 'waiting';
    r.instance = this.id;
    this.waiting.push(r);
    this.pendingTokens += pendingOf(r);
    this.splitwise?.arrival(r);
    this.rebuildDue = true;
    return this.wake(now); // the request is looked at by the next rebuild
  }

  /**
   * Cancels a request whose client went away, as vLLM does: an iteration in flight completes, then at the next
   * boundary the request leaves the instance and its KV blocks and reservation are freed. Returns a boundary
   * time to schedule (with the current `gen`) or NaN, like `enqueue`.
   */
  abort(r: SimRequest, now: number): number {
    if (r.instance !== this.id || (r.status !== 'waiting' && r.status !== 'running') || !this.busy) return NaN;
    this.aborting.add(r);
    this.rebuildDue = true;
    return this.cutRun(now);
  }

  // ---- live migration (sim/migration.ts drives these) ------------------------------------------------

  /**
   * Holds `blocks` KV blocks for a request being copied here (Llumnix pre-allocates on the destination). They
   * count as used until `release`; a decode run planned with them free is cut short. Returns a boundary time
   * to schedule, or NaN, like `enqueue`.
   */
  reserve(blocks: number, now: number): number {
    this.usedBlocks += blocks;
    this.migrationBlocks += blocks;
    this.evictCached();
    return this.cutRun(now);
  }

  /** Gives back blocks `reserve` held; a waiting request may now fit, so an idle engine with a queue wakes up. */
  release(blocks: number, now: number): number {
    this.usedBlocks -= blocks;
    this.migrationBlocks -= blocks;
    return this.wake(now);
  }

  /**
   * Asks for a running request to leave with its KV at the next boundary (the last stage of a live migration:
   * the iteration in flight completes first). `takeDetached` returns it afterwards with status `migrating`,
   * unless it finished or was preempted meanwhile. Returns a boundary time to schedule, or NaN.
   */
  detach(r: SimRequest, now: number): number {
    if (r.instance !== this.id || r.status !== 'running' || !this.busy) return NaN;
    this.detaching.add(r);
    this.rebuildDue = true;
    return this.cutRun(now);
  }

  /** Requests `detach` asked for that left at a boundary since the last call (status `migrating`, KV kept). */
  takeDetached(): SimRequest[] {
    const out = this.detached;
    this.detached = [];
    return out;
  }

  /**
   * Takes over a migrated request with its KV (no recompute) into the running set, converting `reservedBlocks`
   * of an earlier `reserve`. If its KV grew past the reservation and blocks are short, the next rebuild
   * preempts as for any running request (the newest first, which is this one).
   */
  attach(r: SimRequest, reservedBlocks: number, now: number): number {
    this.usedBlocks -= reservedBlocks;
    this.migrationBlocks -= reservedBlocks;
    r.blocks = Math.ceil(r.kvTokens / this.cfg.blockTokens);
    this.usedBlocks += r.blocks;
    this.evictCached();
    r.status = 'running';
    r.instance = this.id;
    this.running.push(r);
    this.pendingTokens += pendingOf(r);
    this.rebuildDue = true;
    return this.wake(now);
  }

  /** Starts an idle engine with work, or cuts a busy one's run so the next rebuild sees a change. */
  private wake(now: number): number {
    if (this.busy) return this.cutRun(now);
    if (this.running.length + this.waiting.size === 0) return NaN;
    this.busy = true;
    this.gen++;
    return now;
  }

  private removeDetached(): void {
    for (const r of this.detaching) {
      if (r.status !== 'running' || r.instance !== this.id) continue; // finished or preempted meanwhile
      this.pendingTokens -= pendingOf(r);
      this.freeBlocksOf(r, false);
      r.status = 'migrating';
      this.runningDirty = true;
      this.detached.push(r);
    }
    this.detaching.clear();
  }

  /** In fast mode, ends the decode run in progress at its first boundary ≥ now; the new boundary time or NaN. */
  private cutRun(now: number): number {
    const run = this.run;
    if (this.cfg.mode === 'fast' && run !== null) {
      const jb = Math.max(run.jDone + 1, this.stepsEnded(run, now, true) + 1);
      if (jb < run.jEnd) {
        run.jEnd = jb;
        this.gen++;
        return run.t0 + runTime(run, jb);
      }
    }
    return NaN;
  }

  /** Removes the requests `abort` marked (unless they finished meanwhile), freeing what they held. */
  private removeAborted(): void {
    let waitingHit = false;
    for (const r of this.aborting) {
      if (r.status === 'running' || r.status === 'waiting') this.pendingTokens -= pendingOf(r);
      if (r.status === 'running') {
        this.freeBlocksOf(r, true);
        this.reservedTokens -= r.reservedTokens;
        r.reservedTokens = 0;
        r.status = 'aborted';
        this.runningDirty = true;
      } else if (r.status === 'waiting') {
        r.status = 'aborted';
        waitingHit = true;
      }
    }
    this.aborting.clear();
    if (waitingHit) {
      // Queues have no removal; aborts are rare (live clients only), so rebuild the queue in its own order.
      const keep: SimRequest[] = [];
      for (let r = this.waiting.shift(); r !== undefined; r = this.waiting.shift()) if (r.status !== 'aborted') keep.push(r);
      for (const r of keep) this.waiting.push(r);
    }
  }

  /**
   * Brings a fast-forwarding engine's counters up to time `now`: iterations that ended before `now`
   * (or at `now` when `inclusive`) are applied. A no-op in step mode, where state is always current.
   */
  sync(now: number, inclusive: boolean): void {
    const run = this.run;
    if (run === null || this.cfg.mode === 'step') return;
    const j = Math.min(run.jEnd - 1, this.stepsEnded(run, now, !inclusive));
    if (j > run.jDone) this.applyRun(run, j, false, now);
  }

  /** The iteration boundary the simulator scheduled has come: finish the iteration, build the next. */
  onBoundary(now: number): number {
    if (this.run !== null) this.applyRun(this.run, this.run.jEnd, true, now);
    else if (this.batch.length > 0) this.completeStep(now);
    if (this.aborting.size > 0) this.removeAborted();
    if (this.detaching.size > 0) this.removeDetached();
    this.compactRunning();

    if (!this.keepsBatch()) this.buildBatch(now);
    this.rebuildDue = false;
    const n = this.batch.length;
    if (n === 0) {
      this.busy = false;
      this.run = null;
      return NaN;
    }
    if (this.prefillItems > 0) {
      this.run = null;
      return now + this.perf.stepTimeS(this.fillShape());
    }
    let run = this.run;
    if (run === null || !this.sameAsRun()) {
      let c0 = 0;
      const members = this.runMembers === this.batch ? [] : this.runMembers;
      members.length = n;
      for (let i = 0; i < n; i++) {
        const r = this.batch[i]!;
        members[i] = r;
        c0 += r.kvTokens + 1;
      }
      const co: DecodeCoeffs = this.perf.decodeStepCoeffs(n);
      run = { t0: now, k: n, c0, a: co.baseS, b: co.perContextTokenS, jDone: 0, jEnd: 0 };
      this.run = run;
      this.runMembers = members;
    }
    const len = this.cfg.mode === 'step' || this.preemptedThisBuild ? 1 : this.stableRunLength();
    run.jEnd = run.jDone + len;
    return run.t0 + runTime(run, run.jEnd);
  }

  /**
   * SplitwiseSim rebuilds its batch only when a task completes or a request arrives: a decode-only batch otherwise
   * runs on unchanged, even while decodes are paused. The other builders rebuild at every boundary.
   */
  private keepsBatch(): boolean {
    if (this.cfg.scheduler !== 'splitwise' || this.rebuildDue || this.batch.length === 0) return false;
    for (let i = 0; i < this.batch.length; i++) if (this.chunks[i] !== 0 || this.batch[i]!.status !== 'running') return false;
    return true;
  }

  // ---- state read by views -------------------------------------------------------------------------

  get numRunning(): number {
    return this.running.length;
  }

  get numWaiting(): number {
    return this.waiting.size;
  }

  /** Tokens still to compute for every request on this instance (prefill left + predicted decode left). */
  outstandingTokens(): number {
    let s = 0;
    for (const r of this.running) s += r.prefillTarget - r.prefilled + Math.max(0, r.predictedOutputTokens - r.generated);
    this.waiting.forEach((r) => {
      s += r.prefillTarget - r.prefilled + Math.max(0, r.predictedOutputTokens - r.generated);
    });
    return s;
  }

  // ---- iteration bookkeeping -----------------------------------------------------------------------

  /** Applies iterations jDone+1..j of a decode run. At a boundary, KV holds exactly the written tokens; mid-run, the in-progress iteration's slot is already allocated (as the builder does). */
  private applyRun(run: DecodeRun, j: number, atBoundary: boolean, now: number): void {
    const d = j - run.jDone;
    if (d <= 0) return;
    this.iterations += d;
    const bt = this.cfg.blockTokens;
    const blocksOnDemand = this.cfg.scheduler !== 'splitwise';
    const members = this.runMembers;
    // Cached free blocks give way to the run's growth at its peak, before any member finishes (as at step mode's rebuilds).
    if (this.prefixCache) {
      let grow = 0;
      for (const r of members) grow += this.ownBlocks(r, r.kvTokens + d + (atBoundary ? 0 : 1)) - r.blocks;
      this.prefixCache.evictTo((this.cfg.kvBlocks - this.usedBlocks - grow) * bt);
    }
    for (let i = 0; i < members.length; i++) {
      const r = members[i]!;
      r.generated += d;
      r.kvTokens += d;
      if (blocksOnDemand) {
        const blocks = Math.ceil(((atBoundary ? r.kvTokens : r.kvTokens + 1) - r.sharedTokens) / bt);
        this.usedBlocks += blocks - r.blocks;
        r.blocks = blocks;
      }
      if (r.generated > r.outputTokens) invariant(false, `request ${r.id} generated past its output length`);
      if (atBoundary && r.generated === r.outputTokens) this.finish(r, now);
    }
    run.jDone = j;
  }

  private completeStep(now: number): void {
    const n = this.batch.length;
    this.iterations++;
    for (let i = 0; i < n; i++) {
      const r = this.batch[i]!;
      const c = this.chunks[i]!;
      if (c > 0) {
        r.prefilled += c;
        r.kvTokens += c;
        if (r.prefilled === r.prefillTarget) {
          if (r.generated === 0) this.pendingTokens -= r.inputTokens;
          if (this.prefixCache && r.prefixHashes) this.shareFullBlocks(r);
          r.generated++;
          if (r.firstTokenS < 0) r.firstTokenS = now;
        }
      } else {
        r.kvTokens++;
        r.generated++;
      }
      if (r.generated === r.outputTokens) this.finish(r, now);
    }
  }

  private finish(r: SimRequest, now: number): void {
    this.pendingTokens -= 1;
    r.status = 'done';
    this.runningDirty = true;
    r.finishS = now;
    if (r.firstTokenS < 0) r.firstTokenS = now;
    this.freeBlocksOf(r, true);
    this.reservedTokens -= r.reservedTokens;
    r.reservedTokens = 0;
    this.listener.onFinish(r, now);
  }

  private compactRunning(): void {
    if (!this.runningDirty) return;
    this.runningDirty = false;
    const a = this.running;
    let w = 0;
    for (let i = 0; i < a.length; i++) if (a[i]!.status === 'running') a[w++] = a[i]!;
    a.length = w;
  }

  private sameAsRun(): boolean {
    const m = this.runMembers;
    const b = this.batch;
    if (m.length !== b.length) return false;
    for (let i = 0; i < b.length; i++) if (m[i] !== b[i]) return false;
    return true;
  }

  /** Number of whole iterations of `run` that ended before t (strict) or at/before t. */
  private stepsEnded(run: DecodeRun, t: number, strict: boolean): number {
    const dt = t - run.t0;
    if (dt <= 0) return 0;
    // Solve (B·k/2)·j² + (A + B·c0 − B·k/2)·j = dt for an estimate, then settle on the exact F.
    const qa = (run.b * run.k) / 2;
    const qb = run.a + run.b * run.c0 - qa;
    let j = qa > 0 ? Math.floor((-qb + Math.sqrt(qb * qb + 4 * qa * dt)) / (2 * qa)) : Math.floor(dt / qb);
    if (!Number.isFinite(j) || j < 0) j = 0;
    while (j > 0 && !endsBy(run, j, t, strict)) j--;
    while (endsBy(run, j + 1, t, strict)) j++;
    return j;
  }

  /**
   * How many iterations the current decode-only batch repeats unchanged: until the first request finishes,
   * or until the KV pool cannot hold the next token of every member (the rebuild then preempts). Nothing
   * else can change it: a waiting request that did not fit now fits no better while KV only fills.
   */
  private stableRunLength(): number {
    const members = this.batch;
    // A clock-driven queue order may bring a different, smaller request to the head mid-run; only a rebuild at
    // every boundary sees that (the seat and token limits still block everyone, so those runs stay safe).
    if (this.waiting.timeDependent && this.waiting.size > 0 && this.running.length < this.cfg.maxNumSeqs) return 1;
    let mRem = Infinity;
    let held = 0;
    let kv = 0;
    for (let i = 0; i < members.length; i++) {
      const r = members[i]!;
      const left = r.outputTokens - r.generated;
      if (left < mRem) mRem = left;
      held += r.blocks;
      kv += r.kvTokens - r.sharedTokens;
    }
    // Splitwise: reservations never grow, and the batch holds until a completion or an arrival (keepsBatch).
    if (this.cfg.scheduler === 'splitwise') return mRem;
    if (mRem <= 1) return mRem;
    const bt = this.cfg.blockTokens;
    const pool = this.cfg.kvBlocks - this.usedBlocks + held;
    // need(mRem − 1) = Σ ceil((kv + mRem)/bt) ≤ (Σ kv + n·(mRem + bt − 1)) / bt: integers, exact; most runs stop here.
    if (kv + members.length * (mRem + bt - 1) <= pool * bt) return mRem;
    // Blocks needed at the boundary d iterations from now (members' next token included).
    const need = (d: number) => {
      let s = 0;
      for (const r of members) s += this.ownBlocks(r, r.kvTokens + d + 1);
      return s;
    };
    if (need(mRem - 1) <= pool) return mRem;
    let lo = 1;
    let hi = mRem - 1; // need(hi) > pool
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (need(mid) > pool) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /**
   * The batch's shape, summed by `schedule` in batch order as the rebuild added its items (nothing an item's
   * shape reads changes between its scheduling and the end of the rebuild: preemption only takes unscheduled
   * requests), so it is the same sum, in the same order, as a pass over the batch would give.
   */
  private fillShape(): BatchShape {
    return this.shape;
  }

  /** Items scheduled so far in the current rebuild (for a builder; `batch.length` once the rebuild ends). */
  get scheduledCount(): number {
    return this.nb;
  }

  // ---- batch building ------------------------------------------------------------------------------

  private buildBatch(now: number): void {
    // Keep the finished iteration's batch: the Splitwise builder orders decodes by it.
    [this.prevBatch, this.batch] = [this.batch, this.prevBatch];
    [this.prevChunks, this.chunks] = [this.chunks, this.prevChunks];
    // Overwritten in place and cut to size at the end: `length = 0` would drop the backing store every rebuild.
    this.nb = 0;
    this.prefillItems = 0;
    const sh = this.shape;
    sh.prefillTokens = 0;
    sh.prefillSeqs = 0;
    sh.prefillAttendTokens = 0;
    sh.decodeSeqs = 0;
    sh.decodeContextTokens = 0;
    this.preemptedThisBuild = false;
    if (this.splitwise) this.splitwise.build(now, this.prevBatch, this.prevChunks);
    else if (this.cfg.scheduler === 'vllm-v0') this.buildVllmV0(now);
    else this.buildVllm(now);
    this.batch.length = this.nb;
    this.chunks.length = this.nb;
  }

  /** Adds a request to the iteration being built (used by both builders). */
  schedule(r: SimRequest, chunk: number, now: number): void {
    this.batch[this.nb] = r;
    this.chunks[this.nb] = chunk;
    this.nb++;
    const sh = this.shape;
    if (chunk > 0) {
      this.prefillItems++;
      sh.prefillTokens += chunk;
      sh.prefillSeqs++;
      sh.prefillAttendTokens += chunk * (r.kvTokens + (chunk + 1) / 2);
    } else {
      sh.decodeSeqs++;
      sh.decodeContextTokens += r.kvTokens + 1;
    }
    if (r.firstScheduledS < 0) r.firstScheduledS = now;
  }

  /**
   * vLLM V1's scheduler: running requests first, in admission order (a decode takes 1 token of the budget, a
   * prefill chunk up to the rest), allocating KV blocks on demand; when a block cannot be had, the newest
   * running request is preempted (its blocks freed; it will recompute prompt + output so far). Waiting
   * requests are admitted in queue order only when no one was preempted in this rebuild.
   */
  private buildVllm(now: number): void {
    const { maxNumSeqs, maxBatchedTokens, chunkedPrefill } = this.cfg;
    let budget = maxBatchedTokens;
    const running = this.running;
    for (let i = 0; i < running.length && budget > 0; i++) {
      const r = running[i]!;
      let chunk = 0;
      if (r.inPrefill) {
        const left = r.prefillTarget - r.prefilled;
        chunk = Math.min(left, budget);
        if (!chunkedPrefill && chunk < left) {
          if (this.nb > 0) continue;
          chunk = left; // the first item always fits: a long prompt runs alone
        }
      }
      if (!this.growOrPreempt(r, this.ownBlocks(r, r.kvTokens + (chunk > 0 ? chunk : 1)))) break;
      this.schedule(r, chunk, now);
      budget -= chunk > 0 ? chunk : 1;
    }
    if (this.preemptedThisBuild) return;
    const waiting = this.waiting;
    while (waiting.size > 0 && this.nb < maxNumSeqs && running.length < maxNumSeqs && budget > 0) {
      const r = waiting.peek()!;
      const cached = this.cachedPrefix(r);
      const left = r.prefillTarget - r.prefilled - cached;
      let chunk = Math.min(left, budget);
      if (!chunkedPrefill && chunk < left) {
        if (this.nb > 0) break;
        chunk = left;
      }
      if (!this.admitWaitingHead(r, chunk, now, cached)) break;
      budget -= chunk;
    }
  }

  /**
   * vLLM V0's default scheduler (no chunked prefill): waiting prompts first, whole, in queue order, while the
   * token budget, the sequence limit and free KV blocks allow (the first prompt always fits the budget); if any
   * was admitted the step is prefill-only. Otherwise every running request decodes one token, preempting the
   * newest (recompute) when a block cannot be had. vLLM's 1 % free-block admission watermark is not modelled.
   */
  private buildVllmV0(now: number): void {
    const { maxNumSeqs, maxBatchedTokens } = this.cfg;
    const running = this.running;
    const waiting = this.waiting;
    let budget = maxBatchedTokens;
    while (waiting.size > 0 && running.length < maxNumSeqs) {
      const r = waiting.peek()!;
      const cached = this.cachedPrefix(r);
      const prompt = r.prefillTarget - r.prefilled - cached;
      if (this.nb > 0 && prompt > budget) break;
      if (!this.admitWaitingHead(r, prompt, now, cached)) break;
      budget -= prompt;
    }
    if (this.nb > 0) return;
    for (let i = 0; i < running.length && budget > 0; i++) {
      const r = running[i]!;
      if (!this.growOrPreempt(r, this.ownBlocks(r, r.kvTokens + 1))) break;
      this.schedule(r, 0, now);
      budget--;
    }
  }

  /**
   * Prompt tokens of a waiting request that the prefix cache holds, to be skipped if it is admitted now: its longest
   * cached prefix of full blocks (its trace blocks, then, after a preemption, its own blocks if still cached), short
   * of its whole context and cut to whole engine blocks (when every block hits, vLLM recomputes the last engine
   * block for the last token's logits). 0 without a cache, and for a request with progress kept (a migrated one).
   */
  private cachedPrefix(r: SimRequest): number {
    const cache = this.prefixCache;
    if (!cache || r.prefilled > 0) return 0;
    let hit = r.prefixHashes ? cache.match(r.prefixHashes, r.prefixBlockTokens, Math.floor(r.inputTokens / r.prefixBlockTokens)) : 0;
    const own = cache.runTokens(ownRunKey(r));
    if (own > 0 && hit >= r.ownRunStart) hit = Math.max(hit, r.ownRunStart + own);
    const bt = this.cfg.blockTokens;
    return Math.floor(Math.min(hit, r.prefillTarget - 1) / bt) * bt;
  }

  /**
   * Moves the waiting queue's head `r` into the running set with `tokens` to prefill after the `cached` prompt
   * tokens the prefix cache spares it, if its KV blocks are free: its own blocks, plus the cached trace blocks it
   * now holds that no running request held before (they leave the free blocks).
   */
  private admitWaitingHead(r: SimRequest, tokens: number, now: number, cached: number): boolean {
    const bt = this.cfg.blockTokens;
    const cache = this.prefixCache;
    const pbt = r.prefixBlockTokens;
    let hold = 0;
    if (cache !== null && cached > 0 && r.prefixHashes) {
      const most = Math.min(Math.floor(cached / pbt), r.prefixHashes.length);
      while (hold < most && cache.has(r.prefixHashes[hold]!)) hold++;
    }
    const shared = hold * pbt;
    const sharedGrow = hold > 0 ? Math.ceil((cache!.heldTokens + cache!.newlyHeldTokens(r.prefixHashes!, hold, pbt)) / bt) - this.sharedBlocks : 0;
    const needBlocks = this.ownBlocks(r, r.kvTokens + cached + tokens - shared) - r.blocks;
    if (needBlocks + sharedGrow > this.cfg.kvBlocks - this.usedBlocks) return false;
    if (cache && r.prefilled === 0) {
      this.prefixQueryTokens += r.prefillTarget;
      this.prefixHitTokens += cached;
      r.prefilled = cached;
      r.kvTokens += cached;
      cache.takeRun(ownRunKey(r)); // its cached own blocks (a preemption's) are its own again, or no longer useful
      if (hold > 0) {
        const held = r.prefixHashes!.slice(0, hold);
        for (const h of held) cache.hold(h, pbt);
        r.heldHashes = held;
        r.heldLeading = hold;
        r.sharedTokens = shared;
        this.syncShared();
      }
    }
    this.waiting.shift();
    r.status = 'running';
    this.running.push(r);
    this.usedBlocks += needBlocks;
    r.blocks += needBlocks;
    this.evictCached();
    this.schedule(r, tokens, now);
    return true;
  }

  /**
   * Grows a running request's KV to `needBlocks`, preempting the newest running requests while blocks are short;
   * false when the request itself had to be preempted.
   */
  private growOrPreempt(r: SimRequest, needBlocks: number): boolean {
    const running = this.running;
    while (needBlocks - r.blocks > this.cfg.kvBlocks - this.usedBlocks) {
      const victim = running[running.length - 1]!;
      this.preempt(victim);
      running.length--;
      if (victim === r) return false;
    }
    this.usedBlocks += needBlocks - r.blocks;
    r.blocks = needBlocks;
    this.evictCached();
    return true;
  }

  // ---- KV blocks shared through the prefix cache (prefix-cache.ts) ----------------------------------

  /** The blocks a request holding `tokens` of KV needs of its own: those beyond its shared prefix blocks. */
  private ownBlocks(r: SimRequest, tokens: number): number {
    return Math.ceil((tokens - r.sharedTokens) / this.cfg.blockTokens);
  }

  /**
   * Frees a request's own blocks and lets go of its shared ones. With a prefix cache and `cacheOwn` (a finish, a
   * preemption, an abort; not a migration, whose KV leaves with it), its own full blocks stay cached in the free
   * blocks as vLLM keeps every freed block's hash: one run per request (`ownRunKey`) continuing its cached trace
   * blocks, which only a preempted request's resume can hit, but which takes its place in the LRU like any block.
   * Released tail first: the own run, then the shared blocks from the last.
   */
  private freeBlocksOf(r: SimRequest, cacheOwn: boolean): void {
    this.usedBlocks -= r.blocks;
    r.blocks = 0;
    const cache = this.prefixCache;
    if (cache === null) return;
    if (cacheOwn) {
      const bt = this.cfg.blockTokens;
      let start = 0;
      const hashes = r.prefixHashes;
      if (hashes) {
        const full = Math.min(hashes.length, Math.floor(r.inputTokens / r.prefixBlockTokens));
        let k = r.heldLeading; // held, so cached
        while (k < full && cache.has(hashes[k]!)) k++;
        start = k * r.prefixBlockTokens;
      }
      const end = Math.floor(r.kvTokens / bt) * bt;
      if (end > start) {
        cache.putRun(ownRunKey(r), end - start);
        r.ownRunStart = start;
      }
    }
    const held = r.heldHashes;
    if (held === null) return;
    for (let i = held.length - 1; i >= 0; i--) cache.release(held[i]!);
    r.heldHashes = null;
    r.heldLeading = 0;
    r.sharedTokens = 0;
    this.syncShared();
  }

  /** Brings `sharedBlocks` (and `usedBlocks`) to the blocks the cache's held tokens take. */
  private syncShared(): void {
    const b = Math.ceil(this.prefixCache!.heldTokens / this.cfg.blockTokens);
    this.usedBlocks += b - this.sharedBlocks;
    this.sharedBlocks = b;
  }

  /** Cached blocks no one holds live in the free KV blocks: an allocation evicts the least recent that no longer fit. */
  private evictCached(): void {
    this.prefixCache?.evictTo(Math.max(0, this.cfg.kvBlocks - this.usedBlocks) * this.cfg.blockTokens);
  }

  /**
   * At the end of a request's prefill, its full prompt blocks that are not cached yet become shared blocks it holds
   * (others then find them); a block already cached stays its own copy, as in vLLM. Skipped when rounding the
   * blocks (trace blocks not a multiple of the engine's) would need more blocks than it frees.
   */
  private shareFullBlocks(r: SimRequest): void {
    const cache = this.prefixCache!;
    const hashes = r.prefixHashes!;
    const pbt = r.prefixBlockTokens;
    const full = Math.min(hashes.length, Math.floor(r.inputTokens / pbt));
    const fresh = new Set<number>();
    for (let i = r.heldLeading; i < full; i++) if (!cache.has(hashes[i]!)) fresh.add(hashes[i]!);
    if (fresh.size === 0) return;
    const bt = this.cfg.blockTokens;
    const added = fresh.size * pbt;
    const own = Math.ceil((r.kvTokens - r.sharedTokens - added) / bt);
    const shared = Math.ceil((cache.heldTokens + added) / bt);
    if (own + shared > r.blocks + this.sharedBlocks) return;
    for (const h of fresh) cache.hold(h, pbt);
    const held = (r.heldHashes ??= []);
    for (const h of fresh) held.push(h);
    if (fresh.size === full - r.heldLeading) r.heldLeading = full; // no gap: every block from the first on is held
    r.sharedTokens += added;
    this.usedBlocks += own - r.blocks;
    r.blocks = own;
    this.syncShared();
  }

  /** Recompute preemption: KV freed, progress reset to "prefill everything known so far", back to the queue head. */
  private preempt(r: SimRequest): void {
    this.freeBlocksOf(r, true);
    r.kvTokens = 0;
    r.prefilled = 0;
    r.prefillTarget = r.inputTokens + r.generated;
    r.preemptions++;
    r.status = 'waiting';
    this.preemptions++;
    this.preemptedThisBuild = true;
    this.waiting.pushFront(r);
  }
}

/** Whether boundary m of `run` falls before t (strict) or at/before t. */
function endsBy(run: DecodeRun, m: number, t: number, strict: boolean): boolean {
  const end = run.t0 + runTime(run, m);
  return strict ? end < t : end <= t;
}

/** The prefix cache's key of a request's own cached blocks: never an integer, so never a trace's block hash. */
function ownRunKey(r: SimRequest): number {
  return r.id + 0.5;
}

/** A request's share of `Engine.pendingTokens`. */
function pendingOf(r: SimRequest): number {
  return r.generated === 0 ? r.inputTokens + 1 : 1;
}

/** F(j): seconds from a run's start to its j-th boundary. */
function runTime(run: DecodeRun, j: number): number {
  return j * run.a + run.b * (j * run.c0 + (run.k * j * (j - 1)) / 2);
}
