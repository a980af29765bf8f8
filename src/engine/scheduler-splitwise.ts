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
  const fits = (cost: number) => e.batch.length < maxNumSeqs && (e.batch.length === 0 || tokens + cost <= maxBatchedTokens);

  // 1. Waiting prompts, oldest first.
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
    e.schedule(r, cost, now);
    tokens += cost;
  }

  // Ready decodes by class; `e.paused` is rebuilt from the leftovers.
  const paused = e.paused.filter((r) => r.status === 'running');
  e.paused.length = 0;
  const fromBatch: SimRequest[] = [];
  const justPrefilled: SimRequest[] = [];
  for (let i = 0; i < prev.length; i++) {
    const r = prev[i]!;
    if (r.status !== 'running') continue;
    (prevCh[i]! > 0 ? justPrefilled : fromBatch).push(r);
  }
  justPrefilled.sort((a, b) => a.arrivalS - b.arrivalS || a.id - b.id);

  for (const cls of [paused, fromBatch, justPrefilled]) {
    let open = true;
    for (const r of cls) {
      const extra = r.reservedTokens === r.inputTokens + 1 ? r.outputTokens - 1 : 0;
      if (open && fits(1) && e.reservedTokens + extra <= capacity) {
        r.reservedTokens += extra;
        e.reservedTokens += extra;
        e.schedule(r, 0, now);
        tokens += 1;
      } else {
        open = false;
        r.pauses++;
        e.paused.push(r);
      }
    }
  }
  // Under overload the two-stage reservation can deadlock: admitted prompts hold all KV, so no decode can
  // reserve its output − 1 slots, nothing is scheduled and no event would ever restart the instance.
  // Rather than stall (SplitwiseSim would), the oldest ready decode runs over its reservation. This only
  // acts when the rebuild is otherwise empty, so it changes nothing at moderate load.
  if (e.batch.length === 0 && e.paused.length > 0) {
    const r = e.paused.shift()!;
    r.pauses--;
    const extra = r.reservedTokens === r.inputTokens + 1 ? r.outputTokens - 1 : 0;
    r.reservedTokens += extra;
    e.reservedTokens += extra;
    e.schedule(r, 0, now);
  }
}
