import type { Engine } from './engine.ts';
import type { SimRequest } from './request.ts';

/**
 * SplitwiseSim's batch rebuild (../shared/docs/anchors/splitwise-baseline-semantics.md): at every iteration
 * boundary, classes are scanned in this order, each stopping at its own first misfit while later classes
 * still add: waiting prompts (FIFO); decodes left out last time (in the order they were left out); decodes
 * of the previous batch (batch order); other ready decodes (prefill just finished) by arrival. Limits:
 * `maxNumSeqs` sequences and `maxBatchedTokens` tokens (a prompt counts its length, a decode 1; the first
 * item always fits). Prompts are never split. KV is reserved, never preempted: prompt + 1 slots when the
 * prefill starts, output − 1 more when the decode starts, all freed at the end.
 * The starvation guard (tasks paused ≥ 4 times go first) is omitted: as keyed upstream it never fires.
 */
export function buildSplitwiseBatch(e: Engine, now: number, prev: readonly SimRequest[], prevCh: readonly number[]): void {
  const { maxNumSeqs, maxBatchedTokens, blockTokens, kvBlocks } = e.cfg;
  const capacity = kvBlocks * blockTokens;
  let tokens = 0;
  let seqs = 0;
  const fits = (cost: number) => seqs < maxNumSeqs && (seqs === 0 || tokens + cost <= maxBatchedTokens);
  /** A decode has started once it reserved its output slots (the prompt alone reserves prompt + 1). */
  const started = (r: SimRequest) => r.reservedTokens !== r.inputTokens + 1;

  // 1. Waiting prompts, oldest first.
  const prompts: SimRequest[] = [];
  const w = e.waiting;
  while (w.size > 0) {
    const r = w.peek()!;
    const cost = r.prefillTarget;
    if (!fits(cost) || e.reservedTokens + r.inputTokens + 1 > capacity) break;
    w.shift();
    r.status = 'running';
    e.running.push(r);
    r.reservedTokens = r.inputTokens + 1;
    e.reservedTokens += r.reservedTokens;
    prompts.push(r);
    tokens += cost;
    seqs++;
  }

  // Ready decodes by class: paused (started, left out before), the previous batch's, then those that never ran
  // (prefill just finished, or finished earlier but never fitted) by arrival.
  const paused: SimRequest[] = [];
  const fresh: SimRequest[] = [];
  for (const r of e.paused) if (r.status === 'running') (started(r) ? paused : fresh).push(r);
  e.paused.length = 0;
  const fromBatch: SimRequest[] = [];
  for (let i = 0; i < prev.length; i++) {
    const r = prev[i]!;
    if (r.status === 'running') (prevCh[i]! > 0 ? fresh : fromBatch).push(r);
  }
  fresh.sort((a, b) => a.arrivalS - b.arrivalS || a.id - b.id);

  const kept: SimRequest[] = [];
  const resumed: SimRequest[] = [];
  const leftNotStarted: SimRequest[] = [];
  for (const [cls, into] of [[paused, resumed], [fromBatch, kept], [fresh, resumed]] as const) {
    let open = true;
    for (const r of cls) {
      const extra = started(r) ? 0 : r.outputTokens - 1;
      if (open && fits(1) && e.reservedTokens + extra <= capacity) {
        r.reservedTokens += extra;
        e.reservedTokens += extra;
        into.push(r);
        tokens += 1;
        seqs++;
      } else {
        open = false;
        r.pauses++;
        (started(r) ? e.paused : leftNotStarted).push(r);
      }
    }
  }
  e.paused.push(...leftNotStarted);
  // SplitwiseSim keeps its batch list: the survivors in their old order, then the new tasks in selection order.
  // That order is the "previous batch" class of the next rebuild.
  for (const r of kept) e.schedule(r, 0, now);
  for (const r of prompts) e.schedule(r, r.prefillTarget, now);
  for (const r of resumed) e.schedule(r, 0, now);

  // Under overload the two-stage reservation can deadlock: admitted prompts hold all KV, so no decode can
  // reserve its output − 1 slots, nothing is scheduled and no event would ever restart the instance.
  // Rather than stall (SplitwiseSim would), the oldest ready decode runs over its reservation. This only
  // acts when the rebuild is otherwise empty, so it changes nothing at moderate load.
  if (e.batch.length === 0 && e.paused.length > 0) {
    const r = e.paused.shift()!;
    r.pauses--;
    const extra = started(r) ? 0 : r.outputTokens - 1;
    r.reservedTokens += extra;
    e.reservedTokens += extra;
    e.schedule(r, 0, now);
  }
}
