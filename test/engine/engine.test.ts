import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { outcomes, run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

test('a lone request takes one prefill step and output − 1 decode steps, each priced by the perf model', () => {
  const sc = scenarioFor(writeTrace([{ t: 0, in: 100, out: 4 }]));
  for (const mode of ['fast', 'step'] as const) {
    const res = run(sc, mode);
    const prefill = 0.001 + 1e-5 * 100;
    // Decode i reads the prompt + i tokens plus its own slot: context 100 + i + 1... starting at 101.
    let t = prefill;
    for (let i = 0; i < 3; i++) t += 0.005 + 1e-4 + 1e-6 * (101 + i);
    assert.equal(res.log.ttft[0], prefill);
    assert.ok(Math.abs(res.log.e2e[0]! - t) < 1e-12, `${mode}: e2e ${res.log.e2e[0]} vs ${t}`);
    assert.equal(res.iterations, 4);
  }
});

test('a one-token output finishes with its prefill', () => {
  const res = run(scenarioFor(writeTrace([{ t: 1, in: 50, out: 1 }])), 'fast');
  assert.equal(res.log.ttft[0], res.log.e2e[0]);
  assert.equal(res.log.tpot(0), 0);
});

test('chunked prefill splits a prompt longer than the token budget over several iterations', () => {
  const sc = scenarioFor(writeTrace([{ t: 0, in: 1000, out: 2 }]), { engine: { maxBatchedTokens: 256 } });
  const res = run(sc, 'step');
  // ⌈1000 / 256⌉ = 4 prefill iterations, then 1 decode.
  assert.equal(res.iterations, 5);
  const whole = run(scenarioFor(writeTrace([{ t: 0, in: 1000, out: 2 }]), { engine: { maxBatchedTokens: 256, chunkedPrefill: false } }), 'step');
  assert.equal(whole.iterations, 2, 'whole-prompt mode runs the long prompt alone in one iteration');
});

test('vLLM V0 scheduling runs an arriving prompt in a prefill-only step that stalls the decodes; V1 mixes it in', () => {
  const trace = writeTrace([{ t: 0, in: 100, out: 10 }, { t: 0.02, in: 50, out: 5 }]);
  const v0 = run(scenarioFor(trace, { engine: { scheduler: 'vllm-v0' } }), 'fast');
  const v1 = run(scenarioFor(trace), 'fast');
  // A: prefill 1 ms + 10 µs × 100, then decodes of 5 ms + 0.1 ms + 1 µs × context (101, 102, …).
  let t = 0.001 + 1e-5 * 100;
  for (let ctx = 101; t < 0.02; ctx++) t += 0.005 + 1e-4 + 1e-6 * ctx;
  // V0: B's prompt runs alone at the first boundary after its arrival.
  assert.ok(Math.abs(v0.log.ttft[1]! - (t - 0.02 + 0.001 + 1e-5 * 50)) < 1e-12, `ttft ${v0.log.ttft[1]}`);
  assert.equal(v0.iterations, 11, "A's 1 + 9 steps, plus B's prefill-only step (B's decodes ride with A's)");
  assert.equal(v1.iterations, 10, "V1: B's prompt shares a step with A's decode");
  assert.ok(v0.log.e2e[0]! > v1.log.e2e[0]!, 'the stall delays the running request');
  for (const mode of ['fast', 'step'] as const) assert.deepEqual(outcomes(run(scenarioFor(trace, { engine: { scheduler: 'vllm-v0' } }), mode)), outcomes(v0));
});

test('when KV runs out the newest request is preempted, recomputes, and still completes exactly', () => {
  // 40 blocks of 16 tokens = 640 tokens; four requests of 100 + 200 tokens cannot all stay resident.
  const reqs: Req[] = [0, 0.001, 0.002, 0.003].map((t) => ({ t, in: 100, out: 200 }));
  const sc = scenarioFor(writeTrace(reqs), { engine: { kvBlocks: 40 } });
  const res = run(sc, 'fast');
  assert.ok(res.preemptions > 0, 'expected preemptions');
  for (let i = 0; i < 4; i++) assert.ok(res.log.isDone(i));
  assert.ok(res.log.preemptions[3]! > 0, 'the newest request is the first victim');
  assert.equal(res.fleet.instances[0]!.engine.usedBlocks, 0, 'all KV blocks are returned at the end');
});

test('a request that can never fit in KV is dropped with a reason, not lost', () => {
  const sc = scenarioFor(writeTrace([{ t: 0, in: 600, out: 100 }, { t: 1, in: 10, out: 10 }]), { engine: { kvBlocks: 40 } });
  const res = run(sc, 'fast');
  assert.ok(res.log.isDropped(0));
  assert.equal(res.log.dropReasons[res.log.dropIdx[0]!], 'exceeds-kv-capacity');
  assert.ok(res.log.isDone(1));
});

const reqArb = fc
  .array(fc.record({ gap: fc.double({ min: 0, max: 0.2, noNaN: true }), in: fc.integer({ min: 1, max: 1500 }), out: fc.integer({ min: 1, max: 300 }) }), {
    minLength: 1,
    maxLength: 40,
  })
  .map((rs) => {
    let t = 0;
    return rs.map((r) => ({ t: (t += r.gap), in: r.in, out: r.out }));
  });

const cfgArb = fc.record({
  scheduler: fc.constantFrom('vllm', 'vllm-v0', 'splitwise'),
  kvBlocks: fc.integer({ min: 120, max: 600 }),
  maxNumSeqs: fc.integer({ min: 1, max: 24 }),
  maxBatchedTokens: fc.integer({ min: 16, max: 2048 }),
  chunkedPrefill: fc.boolean(),
  instances: fc.integer({ min: 1, max: 3 }),
  policy: fc.constantFrom('round-robin', 'jsq', 'least-kv', 'pending-tokens', 'power-of-two', 'least-requests'),
});

test('fast mode gives exactly the per-request results of step mode (random workloads, tight KV, preemption)', () => {
  let preempting = 0;
  fc.assert(
    fc.property(reqArb, cfgArb, (reqs, c) => {
      const sc = scenarioFor(writeTrace(reqs), {
        fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: c.instances }] },
        engine: { scheduler: c.scheduler, kvBlocks: c.kvBlocks, maxNumSeqs: c.maxNumSeqs, maxBatchedTokens: c.maxBatchedTokens, chunkedPrefill: c.scheduler === 'vllm' && c.chunkedPrefill },
        routing: { policy: c.policy },
        output: { timelineIntervalS: 0.5 },
      });
      const fast = run(sc, 'fast');
      const step = run(sc, 'step');
      if (step.preemptions > 0) preempting++;
      assert.deepEqual(outcomes(fast), outcomes(step));
      assert.deepEqual(fast.timeline.rows, step.timeline.rows);
      assert.equal(fast.iterations, step.iterations);
      assert.ok(fast.events <= step.events);
    }),
    { numRuns: 60, seed: 7 },
  );
  assert.ok(preempting > 0, 'the property must exercise preemption');
});

test('fast mode equals step mode with the roofline perf model on a bursty trace', () => {
  const reqs: Req[] = [];
  for (let i = 0; i < 300; i++) reqs.push({ t: Math.floor(i / 30) * 2 + (i % 30) * 0.001, in: 200 + ((i * 37) % 900), out: 20 + ((i * 53) % 400) });
  const sc = scenarioFor(writeTrace(reqs), { fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'a100-40gb', count: 2 }] }, routing: { policy: 'jsq' }, engine: { kvBlocks: 900 } });
  const fast = run(sc, 'fast', undefined);
  const step = run(sc, 'step', undefined);
  assert.deepEqual(outcomes(fast), outcomes(step));
  assert.ok(fast.events * 3 < step.events, `fast mode should need far fewer events (${fast.events} vs ${step.events})`);
});

test('fast mode equals step mode with deadline-aware queue orders (EDF, PF, DPA) on tiered requests under KV pressure', () => {
  const tiered = fc
    .array(
      fc.record({
        gap: fc.double({ min: 0, max: 0.05, noNaN: true }),
        in: fc.integer({ min: 1, max: 1200 }),
        out: fc.integer({ min: 1, max: 300 }),
        tier: fc.constantFrom('iw-f', 'iw-n', 'niw'),
        slack: fc.double({ min: 0, max: 3, noNaN: true }),
      }),
      { minLength: 2, maxLength: 40 },
    )
    .map((rs) => {
      let t = 0;
      return rs.map((r) => ({ t: (t += r.gap), in: r.in, out: r.out, tier: r.tier, deadline: t + r.slack }));
    });
  fc.assert(
    fc.property(tiered, fc.constantFrom('edf', 'pf', 'dpa'), fc.integer({ min: 100, max: 400 }), (reqs, policy, kvBlocks) => {
      const sc = scenarioFor(writeTrace(reqs), {
        engine: { kvBlocks, maxNumSeqs: 16, maxBatchedTokens: 512 },
        scheduling: { policy, options: { tauNS: 0.5, tauPS: 0.2 } },
      });
      assert.deepEqual(outcomes(run(sc, 'fast')), outcomes(run(sc, 'step')));
    }),
    { numRuns: 80, seed: 11 },
  );
});
