import type { Engine } from './engine.ts';
import type { SimRequest } from './request.ts';

/**
 * SplitwiseSim's batch rebuild (its `SplitwiseInstance.select_batch`; ../shared/docs/anchors/splitwise-baseline-semantics.md
 * and docs/fidelity/splitwise-compare.md, which checks it request by request against SplitwiseSim itself).
 * Classes are scanned in this order, each stopping at its own first misfit while later classes still add:
 *   0. the starvation guard: pending tasks that sat out ≥ 4 rebuilds, from the head of the pending queue;
 *   1. waiting prompts, FIFO;
 *   2. decodes paused earlier, in the order they were paused;
 *   3. decodes of the previous batch, in batch order;
 *   4. every unfinished request by arrival, with its current task (a waiting prompt or a ready decode).
 * Limits: `maxNumSeqs` sequences and `maxBatchedTokens` tokens (a prompt counts its length, a decode 1; the first
 * item always fits). Prompts are never split. KV is reserved, never preempted: prompt + 1 slots when the prefill
 * starts, output − 1 more when the decode starts, all freed at the end. Previous-batch decodes left out are paused.
 * The batch keeps SplitwiseSim's list order (survivors first, then new tasks in selection order), which is what
 * class 3 scans next time; the engine rebuilds only after a completion or an arrival (Engine.keepsBatch).
 */

/** One task not yet running on an instance: a request's prompt or its decode (SplitwiseSim's pending_queue). */
export interface PendingTask {
  r: SimRequest;
  decode: boolean;
}

const skips = (t: PendingTask) => (t.decode ? t.r.decodeSkips : t.r.promptSkips);
/** A decode has started once it reserved its output slots (the prompt alone reserves prompt + 1). */
const started = (r: SimRequest) => r.reservedTokens !== r.inputTokens + 1;

/**
 * Python's `bisect.insort_right` on the key (skips, arrival), keys read now. SplitwiseSim's keys go stale as the
 * counters grow after insertion, so the list is not sorted; searching it this way reproduces where it inserts.
 */
function insortPending(q: PendingTask[], t: PendingTask): void {
  const n = skips(t);
  const at = t.r.arrivalS;
  let lo = 0;
  let hi = q.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const m = q[mid]!;
    const mn = skips(m);
    if (n < mn || (n === mn && at < m.r.arrivalS)) hi = mid;
    else lo = mid + 1;
  }
  q.splice(lo, 0, t);
}

function removePending(q: PendingTask[], r: SimRequest, decode: boolean): void {
  const i = q.findIndex((t) => t.r === r && t.decode === decode);
  if (i >= 0) q.splice(i, 1);
}

/** One instance's SplitwiseSim batch builder and the state it keeps between rebuilds. Methods, not closures: hot path. */
export class SplitwiseBuilder {
  /** Started decodes left out of the batch, in the order they were left out. */
  private readonly paused: SimRequest[] = [];
  private readonly pending: PendingTask[] = [];
  /** Unfinished requests of the instance by arrival. */
  private readonly unfinished: SimRequest[] = [];
  // Per-rebuild scratch, reused.
  private readonly waiting: SimRequest[] = [];
  private readonly added: SimRequest[] = [];
  private readonly addedChunks: number[] = [];
  private readonly survivors: SimRequest[] = [];
  private readonly prevDecodes: SimRequest[] = [];
  private readonly still: SimRequest[] = [];
  /** A request is in the batch being built when its `buildMark` equals this. */
  private mark = 0;
  private tokens = 0;
  private seqs = 0;

  constructor(private readonly e: Engine) {}

  /** A request reached the instance: both its tasks join the pending queue, and the arrival-ordered list. */
  arrival(r: SimRequest): void {
    insortPending(this.pending, { r, decode: false });
    insortPending(this.pending, { r, decode: true });
    const u = this.unfinished;
    let i = u.length;
    while (i > 0 && (u[i - 1]!.arrivalS > r.arrivalS || (u[i - 1]!.arrivalS === r.arrivalS && u[i - 1]!.id > r.id))) i--;
    u.splice(i, 0, r);
  }

  build(now: number, prev: readonly SimRequest[], prevCh: readonly number[]): void {
    const e = this.e;
    this.mark++;
    this.tokens = 0;
    this.seqs = 0;
    const { waiting, added, addedChunks, survivors, prevDecodes, still, pending } = this;
    waiting.length = added.length = addedChunks.length = survivors.length = prevDecodes.length = still.length = 0;
    for (let r = e.waiting.shift(); r !== undefined; r = e.waiting.shift()) waiting.push(r);

    // 0. Starvation guard: admits what fits and skips (does not stop at) what does not.
    for (const t of pending) {
      if (skips(t) < 4) break;
      if (this.full() || this.tooLong(t.decode ? 1 : t.r.prefillTarget)) break;
      if (this.chosen(t.r) || t.r.status === 'aborted') continue;
      if (t.decode) {
        if (t.r.status !== 'running') continue; // its prompt has not run yet
        if (started(t.r) || this.kvFits(t.r.outputTokens - 1)) this.admitDecode(t.r, true);
      } else if (this.kvFits(t.r.inputTokens + 1)) this.admitPrompt(t.r);
    }
    // 1. Waiting prompts, FIFO.
    for (const r of waiting) {
      if (this.full() || this.tooLong(r.prefillTarget)) break;
      if (this.chosen(r)) continue;
      if (!this.kvFits(r.inputTokens + 1)) break;
      this.admitPrompt(r);
    }
    // 2. Paused decodes (their output is reserved), in pause order.
    const paused = this.paused;
    let p = 0;
    for (const r of paused) if (r.status === 'running') paused[p++] = r;
    paused.length = p;
    for (const r of paused) {
      if (this.full() || this.tooLong(1)) break;
      if (this.chosen(r)) continue;
      this.admitDecode(r, true);
    }
    // 3. The previous batch's decodes, in batch order: they survive in place.
    for (let i = 0; i < prev.length; i++) if (prev[i]!.status === 'running' && prevCh[i] === 0) prevDecodes.push(prev[i]!);
    for (const r of prevDecodes) {
      if (this.full() || this.tooLong(1)) break;
      if (this.chosen(r)) continue;
      this.admitDecode(r, false);
      survivors.push(r);
    }
    // 4. Every unfinished request by arrival, with its current task.
    const u = this.unfinished;
    for (const r of u) {
      if (this.full()) break;
      if (this.chosen(r) || (r.status !== 'waiting' && r.status !== 'running')) continue;
      const isPrompt = r.status === 'waiting';
      if (this.tooLong(isPrompt ? r.prefillTarget : 1)) break;
      if (!isPrompt && started(r)) {
        this.admitDecode(r, true);
        continue;
      }
      if (!this.kvFits(isPrompt ? r.inputTokens + 1 : r.outputTokens - 1)) break;
      if (isPrompt) this.admitPrompt(r);
      else this.admitDecode(r, true);
    }

    // Bookkeeping in SplitwiseSim's order: left-out decodes re-enter the pending queue, admitted tasks leave it,
    // then every request left out counts one more skip on its current task.
    for (const r of paused) if (!this.chosen(r)) still.push(r);
    for (const r of prevDecodes) {
      if (this.chosen(r)) continue;
      insortPending(pending, { r, decode: true });
      still.push(r);
    }
    for (let i = 0; i < added.length; i++) removePending(pending, added[i]!, addedChunks[i] === 0);
    paused.length = 0;
    for (const r of still) paused.push(r);
    let w = 0; // also drops the finished from the arrival list
    for (const r of u) {
      if (r.status !== 'waiting' && r.status !== 'running') continue;
      u[w++] = r;
      if (this.chosen(r)) continue;
      if (r.status === 'waiting') r.promptSkips++;
      else r.decodeSkips++;
    }
    u.length = w;
    for (const r of waiting) if (r.status === 'waiting') e.waiting.push(r);
    // SplitwiseSim keeps its batch list: the survivors in their old order, then the new tasks in selection order.
    for (const r of survivors) e.schedule(r, 0, now);
    for (let i = 0; i < added.length; i++) e.schedule(added[i]!, addedChunks[i]!, now);

    // Under overload the two-stage reservation can deadlock: admitted prompts hold all KV, so no decode can
    // reserve its output − 1 slots, nothing is scheduled and no event would ever restart the instance.
    // Rather than stall (SplitwiseSim would), the oldest ready decode runs over its reservation. This only
    // acts when the rebuild is otherwise empty, so it changes nothing at moderate load.
    if (e.scheduledCount === 0) {
      const r = paused[0] ?? u.find((x) => x.status === 'running');
      if (r !== undefined) {
        if (paused[0] === r) paused.shift();
        this.reserveDecode(r);
        removePending(pending, r, true);
        e.schedule(r, 0, now);
      }
    }
  }

  private chosen(r: SimRequest): boolean {
    return r.buildMark === this.mark;
  }

  private full(): boolean {
    return this.seqs >= this.e.cfg.maxNumSeqs;
  }

  /** The first item always fits. */
  private tooLong(cost: number): boolean {
    return this.seqs > 0 && this.tokens + cost > this.e.cfg.maxBatchedTokens;
  }

  private kvFits(need: number): boolean {
    return this.e.reservedTokens + need <= this.e.cfg.kvBlocks * this.e.cfg.blockTokens;
  }

  private admitPrompt(r: SimRequest): void {
    const e = this.e;
    r.status = 'running';
    e.running.push(r);
    r.reservedTokens = r.inputTokens + 1;
    e.reservedTokens += r.reservedTokens;
    r.buildMark = this.mark;
    this.added.push(r);
    this.addedChunks.push(r.prefillTarget);
    this.tokens += r.prefillTarget;
    this.seqs++;
  }

  private admitDecode(r: SimRequest, isNew: boolean): void {
    this.reserveDecode(r);
    r.buildMark = this.mark;
    if (isNew) {
      this.added.push(r);
      this.addedChunks.push(0);
    }
    this.tokens += 1;
    this.seqs++;
  }

  /** A decode starting reserves its output − 1 slots (once). */
  private reserveDecode(r: SimRequest): void {
    const extra = started(r) ? 0 : r.outputTokens - 1;
    r.reservedTokens += extra;
    this.e.reservedTokens += extra;
  }
}
