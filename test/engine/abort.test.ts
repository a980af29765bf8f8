import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, type EngineConfig } from '../../src/engine/engine.ts';
import { SimRequest } from '../../src/engine/request.ts';
import type { BatchShape, PerfModel } from '../../src/perf/types.ts';
import { fcfs } from '../../src/policy/scheduling/fcfs.ts';

// Prefill 1 ms + 10 µs a token; decode 5 ms + 0.1 ms a sequence + 1 µs a context token.
const perf: PerfModel = {
  name: 'linear',
  stepTimeS: (b: BatchShape) =>
    (b.prefillTokens > 0 ? 0.001 + 1e-5 * b.prefillTokens : 0) + (b.decodeSeqs > 0 ? 0.005 + 1e-4 * b.decodeSeqs + 1e-6 * b.decodeContextTokens : 0),
  decodeStepCoeffs: (k: number) => ({ baseS: 0.005 + 1e-4 * k, perContextTokenS: 1e-6 }),
};

interface Spec {
  t: number;
  in: number;
  out: number;
  /** Abort time, if the client goes away. */
  abortAt?: number;
}

/** Drives one engine through arrivals, aborts and its own boundaries; returns the requests and the engine. */
function drive(specs: Spec[], mode: 'fast' | 'step', cfg: Partial<EngineConfig> = {}) {
  const engine = new Engine(0, { scheduler: 'vllm', maxNumSeqs: 8, maxBatchedTokens: 512, chunkedPrefill: true, blockTokens: 16, kvBlocks: 64, mode, ...cfg }, perf, fcfs(), { onFinish: () => {} });
  const reqs = specs.map((s, id) => new SimRequest({ id, arrivalS: s.t, inputTokens: s.in, outputTokens: s.out }, 'm'));
  const external = [
    ...specs.map((s, i) => ({ t: s.t, run: (now: number) => engine.enqueue(reqs[i]!, now) })),
    ...specs.flatMap((s, i) => (s.abortAt === undefined ? [] : [{ t: s.abortAt, run: (now: number) => engine.abort(reqs[i]!, now) }])),
  ].sort((a, b) => a.t - b.t);
  let boundary = NaN;
  const setBoundary = (t: number) => {
    if (!Number.isNaN(t)) boundary = t;
  };
  let next = 0;
  // The incrementally kept pending tokens equal their definition after every event.
  const recount = () => {
    let p = 0;
    for (const r of reqs) if (r.status === 'waiting' || r.status === 'running') p += r.generated === 0 ? r.inputTokens + 1 : 1;
    assert.equal(engine.pendingTokens, p);
  };
  for (let guard = 0; guard < 100_000; guard++) {
    recount();
    const ext = external[next];
    if (ext !== undefined && (Number.isNaN(boundary) || ext.t < boundary)) {
      next++;
      setBoundary(ext.run(ext.t));
    } else if (!Number.isNaN(boundary)) {
      const t = boundary;
      boundary = NaN;
      setBoundary(engine.onBoundary(t));
    } else return { engine, reqs };
  }
  throw new Error('engine did not settle');
}

test('a running request aborted mid-decode leaves at the next boundary and frees its KV blocks', () => {
  const { engine, reqs } = drive([{ t: 0, in: 100, out: 50 }, { t: 0, in: 200, out: 50, abortAt: 0.05 }], 'step');
  const [keep, gone] = reqs as [SimRequest, SimRequest];
  assert.equal(gone.status, 'aborted');
  assert.equal(gone.blocks, 0);
  assert.ok(gone.generated > 1 && gone.generated < 50, `stopped mid-decode after ${gone.generated} tokens`);
  assert.equal(keep.status, 'done');
  assert.equal(keep.generated, 50);
  assert.equal(engine.usedBlocks, 0, 'every block is back');
  assert.equal(engine.isBusy, false);
  // Alone after the abort, the kept request decodes faster than it would next to the other one.
  const both = drive([{ t: 0, in: 100, out: 50 }, { t: 0, in: 200, out: 50 }], 'step').reqs[0]!;
  assert.ok(keep.finishS < both.finishS);
});

test('a waiting request aborted never runs, and the queue keeps its order', () => {
  // One sequence at a time: the second and third wait behind the first.
  const { reqs } = drive([{ t: 0, in: 50, out: 20 }, { t: 0.001, in: 50, out: 20, abortAt: 0.01 }, { t: 0.002, in: 50, out: 20 }], 'step', { maxNumSeqs: 1 });
  assert.equal(reqs[1]!.status, 'aborted');
  assert.equal(reqs[1]!.generated, 0);
  assert.equal(reqs[1]!.firstScheduledS, -1);
  assert.equal(reqs[2]!.status, 'done');
  assert.equal(reqs[2]!.firstScheduledS, reqs[0]!.finishS, 'the third starts as soon as the first is done');
});

test('aborts give the same per-request results in fast and step mode', () => {
  const specs: Spec[] = [
    { t: 0, in: 300, out: 120 },
    { t: 0.004, in: 80, out: 200, abortAt: 0.3137 },
    { t: 0.02, in: 500, out: 90 },
    { t: 0.021, in: 40, out: 300, abortAt: 0.0333 },
    { t: 0.5, in: 120, out: 60, abortAt: 0.7771 },
    { t: 0.52, in: 900, out: 400 },
    { t: 0.6, in: 60, out: 30, abortAt: 10 },
  ];
  const fast = drive(specs, 'fast', { kvBlocks: 90 });
  const step = drive(specs, 'step', { kvBlocks: 90 });
  const view = (r: SimRequest) => [r.status, r.generated, r.firstTokenS, r.finishS, r.preemptions];
  assert.deepEqual(fast.reqs.map(view), step.reqs.map(view));
  assert.deepEqual(
    fast.reqs.map((r) => r.status),
    ['done', 'aborted', 'done', 'aborted', 'aborted', 'done', 'done'],
    'an abort after the request finished changes nothing',
  );
  assert.ok(fast.engine.preemptions > 0, 'KV pressure preempts, so aborts meet recomputing requests too');
  assert.equal(fast.engine.usedBlocks, 0);
});
