import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, type EngineConfig } from '../../src/engine/engine.ts';
import { SimRequest } from '../../src/engine/request.ts';
import type { BatchShape, PerfModel } from '../../src/perf/types.ts';
import { fcfs } from '../../src/policy/scheduling/fcfs.ts';

const perf: PerfModel = {
  name: 'linear',
  stepTimeS: (b: BatchShape) => 0.001 + 1e-5 * b.prefillTokens + (b.decodeSeqs > 0 ? 0.005 + 1e-4 * b.decodeSeqs + 1e-6 * b.decodeContextTokens : 0),
  decodeStepCoeffs: (k: number) => ({ baseS: 0.006 + 1e-4 * k, perContextTokenS: 1e-6 }),
};

for (const mode of ['fast', 'step'] as const) {
  test(`a detached request moves to another engine with its KV and decodes on there without recompute (${mode})`, () => {
    const cfg: EngineConfig = { scheduler: 'vllm', maxNumSeqs: 8, maxBatchedTokens: 512, chunkedPrefill: true, blockTokens: 16, kvBlocks: 64, mode };
    const done: SimRequest[] = [];
    const a = new Engine(0, cfg, perf, fcfs(), { onFinish: (r) => done.push(r) });
    const b = new Engine(1, cfg, perf, fcfs(), { onFinish: (r) => done.push(r) });
    const r = new SimRequest({ id: 7, arrivalS: 0, inputTokens: 100, outputTokens: 40 }, 'm');
    let tA = a.enqueue(r, 0);
    // Run A until t = 0.1 s (mid-decode), then ask it to let the request go.
    while (tA < 0.1) tA = a.onBoundary(tA);
    a.sync(0.1, true);
    assert.ok(r.generated > 1 && r.generated < 40);
    assert.ok(Number.isNaN(b.reserve(Math.ceil((r.kvTokens + 1) / 16), 0.1)), 'B is idle: nothing to cut');
    // Fast mode cuts the decode run at its first boundary after 0.1 s; in step mode that boundary is already due.
    const asked = a.detach(r, 0.1);
    const cut = Number.isNaN(asked) ? tA : asked;
    assert.equal(a.onBoundary(cut), NaN, 'A has nothing left');
    const [moved] = a.takeDetached();
    assert.equal(moved, r);
    assert.equal(r.status, 'migrating');
    assert.equal(a.usedBlocks, 0);
    assert.equal(a.pendingTokens, 0);
    const generated = r.generated;
    const kv = r.kvTokens;
    assert.equal(kv, 100 + generated - 1);
    // B takes it over, converting its reservation into the request's blocks.
    let tB = b.attach(r, Math.ceil((kv + 1) / 16), cut + 0.02);
    assert.equal(b.usedBlocks, Math.ceil(kv / 16));
    assert.equal(r.instance, 1);
    const first = tB;
    tB = b.onBoundary(tB);
    assert.equal(b.chunks[0], 0, 'its first step on B is a decode, not a prefill');
    while (!Number.isNaN(tB)) tB = b.onBoundary(tB);
    assert.deepEqual(done, [r]);
    assert.equal(r.generated, 40);
    assert.equal(r.preemptions, 0);
    assert.equal(b.usedBlocks, 0);
    assert.ok(r.finishS > first);
  });
}

test('a request asked to leave that finishes first stays finished and is not handed over', () => {
  const cfg: EngineConfig = { scheduler: 'vllm', maxNumSeqs: 8, maxBatchedTokens: 512, chunkedPrefill: true, blockTokens: 16, kvBlocks: 64, mode: 'step' };
  const a = new Engine(0, cfg, perf, fcfs(), { onFinish: () => {} });
  const r = new SimRequest({ id: 1, arrivalS: 0, inputTokens: 10, outputTokens: 2 }, 'm');
  let t = a.enqueue(r, 0);
  t = a.onBoundary(t); // starts the prefill
  t = a.onBoundary(t); // the prefill ends with the first token; the decode of the second starts
  a.detach(r, t);
  t = a.onBoundary(t); // the second (last) token finishes it at this boundary
  assert.equal(r.status, 'done');
  assert.deepEqual(a.takeDetached(), []);
});

test('releasing reserved blocks wakes an idle engine whose queue waited for them', () => {
  const cfg: EngineConfig = { scheduler: 'vllm', maxNumSeqs: 8, maxBatchedTokens: 512, chunkedPrefill: true, blockTokens: 16, kvBlocks: 8, mode: 'step' };
  const a = new Engine(0, cfg, perf, fcfs(), { onFinish: () => {} });
  assert.ok(Number.isNaN(a.reserve(8, 0)));
  const r = new SimRequest({ id: 1, arrivalS: 0, inputTokens: 64, outputTokens: 2 }, 'm');
  let t = a.enqueue(r, 0);
  t = a.onBoundary(t); // no block free: nothing runs, the engine goes idle with a queue
  assert.ok(Number.isNaN(t));
  assert.equal(r.status, 'waiting');
  assert.equal(a.migrationBlocks, 8);
  t = a.release(8, 1);
  assert.equal(a.migrationBlocks, 0);
  assert.equal(t, 1);
  while (!Number.isNaN(t)) t = a.onBoundary(t);
  assert.equal(r.status, 'done');
});
