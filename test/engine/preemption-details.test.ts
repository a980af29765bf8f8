import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BatchShape, PerfModel } from '../../src/perf/types.ts';
import { linearPerf, run, scenarioFor, writeTrace } from '../helpers/sim.ts';

// Review finding (session 23, mutation audit): these engine details changed no test when broken.

test('a decode in a mixed step is priced at its context + its own slot, as in a decode-only step', () => {
  // A decodes; B's prompt joins at the first boundary after it arrives (vLLM V1 mixes them).
  const trace = writeTrace([{ t: 0, in: 100, out: 10 }, { t: 0.02, in: 50, out: 5 }]);
  let t = 0.001 + 1e-5 * 100;
  let ctx = 101;
  for (; t < 0.02; ctx++) t += 0.005 + 1e-4 + 1e-6 * ctx;
  // linearPerf: 1 ms + 10 µs per prefill token + 0.1 ms per decode + 1 µs per decode context token (A's ctx).
  const ttftB = t + 0.001 + 1e-5 * 50 + 1e-4 + 1e-6 * ctx - 0.02;
  for (const mode of ['fast', 'step'] as const) {
    const res = run(scenarioFor(trace), mode);
    assert.ok(Math.abs(res.log.ttft[1]! - ttftB) < 1e-12, `${mode}: TTFT ${res.log.ttft[1]} vs ${ttftB}`);
  }
});

/** Two requests at 0 that outgrow 20 KV blocks of 16 tokens: the newer (1) is preempted mid-decode. */
const tight = (extra: { t: number; in: number; out: number }[] = [], engine: Record<string, unknown> = {}) =>
  scenarioFor(writeTrace([{ t: 0, in: 16, out: 200 }, { t: 0, in: 16, out: 200 }, ...extra]), { engine: { kvBlocks: 20, ...engine } });

test("a preempted request's TTFT stays the time of its first token, not its recompute's", () => {
  const res = run(tight(), 'fast');
  assert.ok(res.log.preemptions[1]! > 0, 'request 1 was preempted');
  const roomy = run(scenarioFor(writeTrace([{ t: 0, in: 16, out: 200 }, { t: 0, in: 16, out: 200 }]), { engine: { kvBlocks: 1000 } }), 'fast');
  assert.equal(roomy.log.preemptions[1], 0);
  // Nothing differs between the two runs before the first preemption, which comes long after the first token.
  assert.equal(res.log.ttft[1], roomy.log.ttft[1]);
  assert.ok(res.log.e2e[1]! > roomy.log.e2e[1]!, 'the recompute costs time');
});

test('a preempted request goes back to the head of the queue (vLLM), ahead of one that waited before it', () => {
  // Request 2 waits for a seat (maxNumSeqs 2) from t = 0.001; request 1 is preempted later and must run first again.
  const res = run(tight([{ t: 0.001, in: 16, out: 200 }], { maxNumSeqs: 2 }), 'fast');
  assert.ok(res.log.preemptions[1]! > 0);
  // At the back of the queue it would let request 2 take the seat it left, and finish after it.
  const end = (i: number) => res.log.arrival[i]! + res.log.e2e[i]!;
  assert.ok(end(1) < end(2), `request 1 finished at ${end(1)}, request 2 at ${end(2)}`);
  assert.ok(res.log.queue[2]! >= end(0) - res.log.arrival[2]! - 1e-9, "request 2's seat is the one request 0 left at its end");
});

/** linearPerf, recording every shape it prices (mixed and prefill steps) and every decode-run batch size. */
function recordingPerf() {
  const shapes: BatchShape[] = [];
  const decodeBatches: number[] = [];
  const perf: PerfModel = {
    name: 'recording',
    stepTimeS: (b) => (shapes.push({ ...b }), linearPerf.stepTimeS(b)),
    decodeStepCoeffs: (k) => (decodeBatches.push(k), linearPerf.decodeStepCoeffs(k)),
  };
  return { perf, shapes, decodeBatches };
}

test("a mixed step's shape: the prompt's attention over its own tokens, the decode's context + its slot", () => {
  const rec = recordingPerf();
  run(scenarioFor(writeTrace([{ t: 0, in: 100, out: 10 }, { t: 0.02, in: 50, out: 5 }])), 'fast', rec.perf);
  // A's decodes before B arrives (as in the test above): ctx is A's context + its slot at the mixed step.
  let t = 0.001 + 1e-5 * 100;
  let ctx = 101;
  for (; t < 0.02; ctx++) t += 0.005 + 1e-4 + 1e-6 * ctx;
  const mixed = rec.shapes.filter((s) => s.prefillSeqs > 0 && s.decodeSeqs > 0);
  assert.equal(mixed.length, 1);
  const m = mixed[0]!;
  assert.equal(m.prefillTokens, 50);
  // Each of the 50 prompt tokens attends to the tokens before it and itself: 50 · (0 + (50 + 1) / 2).
  assert.equal(m.prefillAttendTokens, 50 * (51 / 2));
  assert.equal(m.decodeSeqs, 1);
  assert.equal(m.decodeContextTokens, ctx, "A's prompt + its tokens so far + its own slot");
});

test('every step keeps the token budget and the sequence limit (vLLM V1), a budget below the seat count included', () => {
  // Many prompts and tight KV: budgets bind, preemptions happen; then more seats than budget tokens, so that the
  // budget, not the seats, stops the decodes joining a step.
  const reqs = Array.from({ length: 40 }, (_, i) => ({ t: i * 0.003, in: 40 + ((i * 37) % 90), out: 30 + ((i * 53) % 120) }));
  for (const limits of [{ kvBlocks: 60, maxNumSeqs: 6, maxBatchedTokens: 128 }, { kvBlocks: 1000, maxNumSeqs: 8, maxBatchedTokens: 4 }]) {
    const rec = recordingPerf();
    const res = run(scenarioFor(writeTrace(reqs), { engine: limits }), 'step', rec.perf);
    if (limits.kvBlocks === 60) assert.ok(res.preemptions > 0, 'the case preempts');
    for (const s of rec.shapes) {
      const items = s.prefillSeqs + s.decodeSeqs;
      assert.ok(items <= limits.maxNumSeqs, `${items} sequences in a step`);
      assert.ok(items === 1 || s.prefillTokens + s.decodeSeqs <= limits.maxBatchedTokens, `${s.prefillTokens} + ${s.decodeSeqs} tokens in a step`);
    }
    for (const k of rec.decodeBatches) assert.ok(k <= Math.min(limits.maxNumSeqs, limits.maxBatchedTokens), `a decode batch of ${k}`);
    for (let i = 0; i < reqs.length; i++) assert.ok(res.log.isDone(i));
  }
});
