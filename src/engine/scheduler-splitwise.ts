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

/** A request reached the instance: both its tasks join the pending queue, and the arrival-ordered list. */
export function splitwiseArrival(e: Engine, r: SimRequest): void {
  insortPending(e.pending, { r, decode: false });
  insortPending(e.pending, { r, decode: true });
  const u = e.unfinished;
  let i = u.length;
  while (i > 0 && (u[i - 1]!.arrivalS > r.arrivalS || (u[i - 1]!.arrivalS === r.arrivalS && u[i - 1]!.id > r.id))) i--;
  u.splice(i, 0, r);
}

export function buildSplitwiseBatch(e: Engine, now: number, prev: readonly SimRequest[], prevCh: readonly number[]): void {
  const { maxNumSeqs, maxBatchedTokens, blockTokens, kvBlocks } = e.cfg;
  const capacity = kvBlocks * blockTokens;
  let tokens = 0;
  let seqs = 0;
  const full = () => seqs >= maxNumSeqs;
  const tooLong = (cost: number) => seqs > 0 && tokens + cost > maxBatchedTokens;
  /** A decode has started once it reserved its output slots (the prompt alone reserves prompt + 1). */
  const started = (r: SimRequest) => r.reservedTokens !== r.inputTokens + 1;
  const chosen = new Set<SimRequest>();
  const added: { r: SimRequest; chunk: number }[] = [];
  const waiting: SimRequest[] = [];
  for (let r = e.waiting.shift(); r !== undefined; r = e.waiting.shift()) waiting.push(r);

  const admitPrompt = (r: SimRequest) => {
    r.status = 'running';
    e.running.push(r);
    r.reservedTokens = r.inputTokens + 1;
    e.reservedTokens += r.reservedTokens;
    chosen.add(r);
    added.push({ r, chunk: r.prefillTarget });
    tokens += r.prefillTarget;
    seqs++;
  };
  const admitDecode = (r: SimRequest, isNew: boolean) => {
    const extra = started(r) ? 0 : r.outputTokens - 1;
    r.reservedTokens += extra;
    e.reservedTokens += extra;
    chosen.add(r);
    if (isNew) added.push({ r, chunk: 0 });
    tokens += 1;
    seqs++;
  };
  const kvFits = (need: number) => e.reservedTokens + need <= capacity;

  // 0. Starvation guard: admits what fits and skips (does not stop at) what does not.
  for (const t of e.pending) {
    if (skips(t) < 4) break;
    if (full() || tooLong(t.decode ? 1 : t.r.prefillTarget)) break;
    if (chosen.has(t.r) || t.r.status === 'aborted') continue;
    if (t.decode) {
      if (t.r.status !== 'running') continue; // its prompt has not run yet
      if (started(t.r) || kvFits(t.r.outputTokens - 1)) admitDecode(t.r, true);
    } else if (kvFits(t.r.inputTokens + 1)) admitPrompt(t.r);
  }
  // 1. Waiting prompts, FIFO.
  for (const r of waiting) {
    if (full() || tooLong(r.prefillTarget)) break;
    if (chosen.has(r)) continue;
    if (!kvFits(r.inputTokens + 1)) break;
    admitPrompt(r);
  }
  // 2. Paused decodes (their output is reserved), in pause order.
  const paused = e.paused.filter((r) => r.status === 'running' && started(r));
  for (const r of paused) {
    if (full() || tooLong(1)) break;
    if (chosen.has(r)) continue;
    admitDecode(r, true);
  }
  // 3. The previous batch's decodes, in batch order: they survive in place.
  const prevDecodes: SimRequest[] = [];
  for (let i = 0; i < prev.length; i++) if (prev[i]!.status === 'running' && prevCh[i] === 0) prevDecodes.push(prev[i]!);
  const survivors: SimRequest[] = [];
  for (const r of prevDecodes) {
    if (full() || tooLong(1)) break;
    if (chosen.has(r)) continue;
    admitDecode(r, false);
    survivors.push(r);
  }
  // 4. Every unfinished request by arrival, with its current task.
  const u = e.unfinished;
  let w = 0;
  for (let i = 0; i < u.length; i++) if (u[i]!.status === 'waiting' || u[i]!.status === 'running') u[w++] = u[i]!;
  u.length = w;
  for (const r of u) {
    if (full()) break;
    if (chosen.has(r)) continue;
    const isPrompt = r.status === 'waiting';
    if (tooLong(isPrompt ? r.prefillTarget : 1)) break;
    if (!isPrompt && started(r)) {
      admitDecode(r, true);
      continue;
    }
    if (!kvFits(isPrompt ? r.inputTokens + 1 : r.outputTokens - 1)) break;
    if (isPrompt) admitPrompt(r);
    else admitDecode(r, true);
  }

  // Bookkeeping in SplitwiseSim's order: left-out decodes re-enter the pending queue, admitted tasks leave it,
  // then every request left out counts one more skip on its current task.
  const leftOut = prevDecodes.filter((r) => !chosen.has(r));
  for (const r of leftOut) insortPending(e.pending, { r, decode: true });
  for (const { r, chunk } of added) removePending(e.pending, r, chunk === 0);
  e.paused.length = 0;
  for (const r of paused) if (!chosen.has(r)) e.paused.push(r);
  e.paused.push(...leftOut);
  for (const r of u) {
    if (chosen.has(r)) continue;
    if (r.status === 'waiting') r.promptSkips++;
    else r.decodeSkips++;
  }
  for (const r of waiting) if (r.status === 'waiting') e.waiting.push(r);
  for (const r of survivors) e.schedule(r, 0, now);
  for (const { r, chunk } of added) e.schedule(r, chunk, now);

  // Under overload the two-stage reservation can deadlock: admitted prompts hold all KV, so no decode can
  // reserve its output − 1 slots, nothing is scheduled and no event would ever restart the instance.
  // Rather than stall (SplitwiseSim would), the oldest ready decode runs over its reservation. This only
  // acts when the rebuild is otherwise empty, so it changes nothing at moderate load.
  if (e.batch.length === 0) {
    const r = e.paused[0] ?? u.find((x) => x.status === 'running');
    if (r !== undefined) {
      if (e.paused[0] === r) e.paused.shift();
      const extra = started(r) ? 0 : r.outputTokens - 1;
      r.reservedTokens += extra;
      e.reservedTokens += extra;
      removePending(e.pending, r, true);
      e.schedule(r, 0, now);
    }
  }
}
