import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, type EngineConfig } from '../../src/engine/engine.ts';
import { SimRequest } from '../../src/engine/request.ts';
import type { BatchShape, PerfModel } from '../../src/perf/types.ts';
import { edf } from '../../src/policy/scheduling/edf.ts';
import { fcfs } from '../../src/policy/scheduling/fcfs.ts';
import type { WaitingQueue } from '../../src/policy/scheduling/types.ts';

// The Splitwise builder's KV reservation at the exact capacity boundary: a prompt reserves prompt + 1 slots, its
// decode output − 1 more, and a task is admitted when reserved + need ≤ capacity (equality fits, one token over
// does not). One-token blocks, so capacity K is K tokens; seat and token limits far away; step mode, so every
// boundary is an event and the batch after each one can be read.

const perf: PerfModel = {
  name: 'linear',
  stepTimeS: (b: BatchShape) => 0.001 + 1e-5 * b.prefillTokens + 1e-4 * b.decodeSeqs,
  decodeStepCoeffs: (k: number) => ({ baseS: 0.001 + 1e-4 * k, perContextTokenS: 0 }),
};

function engine(kvTokens: number, maxNumSeqs: number, queue: WaitingQueue): Engine {
  const cfg: EngineConfig = { scheduler: 'splitwise', maxNumSeqs, maxBatchedTokens: 100_000, chunkedPrefill: false, blockTokens: 1, kvBlocks: kvTokens, mode: 'step' };
  return new Engine(0, cfg, perf, queue, { onFinish: () => {} });
}

const req = (id: number, inputTokens: number, outputTokens: number, arrivalS: number, deadlineS?: number) =>
  new SimRequest({ id, arrivalS, inputTokens, outputTokens, ...(deadlineS === undefined ? {} : { deadlineS }) }, 'm');

interface Snap {
  /** The boundary's time. */
  t: number;
  /** The batch built at it: `<id>p` a prompt, `<id>d` a decode, in batch order. */
  batch: string;
  reserved: number;
  done: Set<number>;
}

/** Enqueues each request at its arrival time and runs the engine boundary by boundary, recording the batch built at each. */
function drive(kvTokens: number, arrivals: SimRequest[], maxBoundaries = 200, maxNumSeqs = 64, queue: WaitingQueue = fcfs()): { e: Engine; snaps: Snap[] } {
  const e = engine(kvTokens, maxNumSeqs, queue);
  const todo = [...arrivals].sort((a, b) => a.arrivalS - b.arrivalS);
  const snaps: Snap[] = [];
  let t = NaN;
  while (snaps.length < maxBoundaries) {
    const next = todo[0];
    if (next !== undefined && (Number.isNaN(t) || next.arrivalS <= t)) {
      todo.shift();
      const w = e.enqueue(next, next.arrivalS);
      if (!Number.isNaN(w)) t = w;
      continue;
    }
    if (Number.isNaN(t)) break;
    const at = t;
    t = e.onBoundary(at);
    snaps.push({
      t: at,
      batch: e.batch.map((r, k) => `${r.id}${e.chunks[k]! > 0 ? 'p' : 'd'}`).join(','),
      reserved: e.reservedTokens,
      done: new Set(arrivals.filter((r) => r.status === 'done').map((r) => r.id)),
    });
  }
  return { e, snaps };
}

test('splitwise: prompts that fill the KV exactly (prompt + 1 each) are admitted together', () => {
  // K = 100: two 49-token prompts reserve 50 each, exactly 100; a third (50 tokens, needs 51) waits.
  const a = req(1, 49, 5, 0);
  const b = req(2, 49, 5, 0);
  const c = req(3, 50, 5, 0);
  const { snaps } = drive(100, [a, b, c], 1);
  assert.equal(snaps[0]!.batch, '1p,2p');
  assert.equal(snaps[0]!.reserved, 100);
  assert.equal(c.status, 'waiting');
});

test('splitwise: a waiting prompt that fits exactly takes the only seat in the FIFO pass, ahead of the running decode', () => {
  // One seat, K = 100. R (9-token prompt, 20 tokens) holds 29 while it decodes; B (70-token prompt) arrives and needs
  // 71 = the 71 free: the waiting-prompt pass (before the previous batch's decodes) admits it, R is paused.
  const r = req(1, 9, 20, 0);
  const b = req(2, 70, 2, 0.002);
  const { snaps } = drive(100, [r, b], 200, 1);
  const i = snaps.findIndex((s) => s.batch === '2p');
  assert.ok(i > 0, `B's prompt ran alone: ${snaps.map((s) => s.batch).join(' | ')}`);
  assert.ok(snaps[i]!.t > 0.002 && snaps[i - 1]!.batch === '1d', 'at the first rebuild after B arrived');
  assert.equal(snaps[i]!.reserved, 100);
  assert.ok(r.finishS > b.firstTokenS, 'R was paused, not finished, when B ran');
});

test('splitwise: a prompt one token over the free KV (it needs prompt + 1) waits, in the FIFO pass and the arrival pass alike', () => {
  // K = 100: a 49-token prompt reserves 50; a 50-token prompt needs 51 of the 50 left: not admitted.
  const a = req(1, 49, 5, 0);
  const b = req(2, 50, 5, 0);
  const { snaps } = drive(100, [a, b], 1);
  assert.equal(snaps[0]!.batch, '1p');
  assert.equal(snaps[0]!.reserved, 50);
  assert.equal(b.status, 'waiting');
  assert.equal(b.reservedTokens, 0);
});

test('splitwise: a first decode that needs exactly the free KV (output − 1) starts; one token short, it waits', () => {
  // R: 9-token prompt, 20 tokens → reserves 10, then 19 more = 29. A (arrives during R's decode): 19-token prompt
  // → 20, then its decode needs 10 more. K = 59 leaves exactly 10 when A's prefill ends; K = 58 leaves 9.
  const run = (k: number) => {
    const r = req(1, 9, 20, 0);
    const a = req(2, 19, 11, 0.002);
    const { snaps } = drive(k, [r, a]);
    // The boundary that ends A's prefill is the first after the one that scheduled it.
    const i = snaps.findIndex((s) => s.batch.includes('2p'));
    assert.ok(i >= 0, 'A was prefilled');
    return { after: snaps[i + 1]!, a, r, snaps };
  };
  const fits = run(59);
  assert.equal(fits.after.batch, '1d,2d', 'A decodes next to R');
  assert.equal(fits.after.reserved, 59);
  assert.ok(fits.a.finishS < fits.r.finishS, 'A (10 decodes) finishes before R');

  const short = run(58);
  assert.equal(short.after.batch, '1d', 'A waits for R');
  assert.equal(short.after.reserved, 49);
  assert.ok(short.a.finishS > short.r.finishS, 'A decodes only once R is done');
  assert.equal(short.a.status, 'done');
});

test('splitwise starvation guard: a decode that sat out 4 rebuilds starts when exactly output − 1 slots are free, ahead of a waiting prompt', () => {
  // K = 80. R (4-token prompt, 20 tokens) reserves 24; X1..X3 (1-token prompts, 2..4 tokens) 3 + 4 + 5; D
  // (39-token prompt, 41 tokens) 40, and its decode needs 40 more: it does not fit while R runs, and sits out the
  // rebuilds at its prefill's end and at each X's completion (4). P (37-token prompt, needs 38) arrives during D's
  // prefill and waits. When R finishes exactly 40 slots are free: the guard starts D's decode (40 ≤ 40) before the
  // waiting prompts are looked at, so P (38 ≤ 40 as well) keeps waiting.
  const r = req(1, 4, 20, 0);
  const xs = [req(2, 1, 2, 0.0004), req(3, 1, 3, 0.0004), req(4, 1, 4, 0.0004)];
  const d = req(5, 39, 41, 0.0005);
  const p = req(6, 37, 2, 0.0012);
  const { snaps } = drive(80, [r, ...xs, d, p], 40);
  const i = snaps.findIndex((s) => s.done.has(1));
  assert.ok(i > 0, 'R finished');
  assert.ok(xs.every((x) => x.finishS < r.finishS), 'the X requests finished first');
  assert.ok(d.decodeSkips >= 4, `D's decode sat out ${d.decodeSkips} rebuilds`);
  assert.equal(snaps[i - 1]!.batch, '1d', 'before: R alone decodes');
  assert.equal(snaps[i]!.batch, '5d', "at R's completion: D's decode, not P's prompt");
  assert.equal(snaps[i]!.reserved, 80);
  assert.equal(p.status, 'waiting');
});

test('splitwise starvation guard: a prompt that sat out 4 rebuilds still needs prompt + 1 free slots', () => {
  // K = 249. R (9-token prompt, 200 tokens) reserves 209 for good; X1..X5 (1-token prompts, 3..7 tokens) 30 more,
  // released one completion at a time. B (40-token prompt) arrives after they all started: it needs 41 and at
  // most 40 are ever free while R runs, so it waits through every rebuild, the guard's included.
  const r = req(1, 9, 200, 0);
  const xs = [1, 2, 3, 4, 5].map((i) => req(1 + i, 1, 2 + i, 0));
  const b = req(7, 40, 2, 0.0015);
  const { snaps } = drive(249, [r, ...xs, b], 30);
  assert.ok(xs.every((x) => x.status === 'done'), 'every X finished');
  assert.ok(b.promptSkips >= 5, `B sat out ${b.promptSkips} rebuilds`);
  assert.equal(b.status, 'waiting');
  assert.equal(b.reservedTokens, 0);
  const last = snaps.at(-1)!;
  assert.equal(last.batch, '1d');
  assert.equal(last.reserved, 209);
  assert.ok(snaps.every((s) => !s.batch.includes('7')), 'B never ran');
});

test('splitwise: the arrival-order pass admits an exactly fitting prompt that the queue-order pass never reached', () => {
  // EDF queue: B (deadline 1 s) heads the waiting queue, A (deadline 100 s; same arrival, lower id) follows. K = 100:
  // B needs 121 and stops the queue-order pass; the arrival-order pass then looks at A first, which needs 99 + 1 = 100.
  const a = req(1, 99, 5, 0, 100);
  const b = req(2, 120, 5, 0, 1);
  const { snaps } = drive(100, [a, b], 1, 64, edf());
  assert.equal(snaps[0]!.batch, '1p');
  assert.equal(snaps[0]!.reserved, 100);
  assert.equal(b.status, 'waiting');
});

test('splitwise starvation guard: a decode one slot short (output − 2 free) stays out and a waiting prompt that fits goes instead', () => {
  // The guard scenario above with K = 79: when R finishes 39 slots are free, one fewer than D's decode needs; P's
  // prompt (38) fits and runs, D's decode keeps waiting.
  const r = req(1, 4, 20, 0);
  const xs = [req(2, 1, 2, 0.0004), req(3, 1, 3, 0.0004), req(4, 1, 4, 0.0004)];
  const d = req(5, 39, 41, 0.0005);
  const p = req(6, 37, 2, 0.0012);
  const { snaps } = drive(79, [r, ...xs, d, p], 40);
  const i = snaps.findIndex((s) => s.done.has(1));
  assert.ok(i > 0, 'R finished');
  assert.ok(d.decodeSkips >= 4 || d.status === 'done', 'D sat out the rebuilds');
  assert.equal(snaps[i]!.batch, '6p', "at R's completion: P's prompt, not D's decode");
  assert.equal(snaps[i]!.reserved, 78);
});
