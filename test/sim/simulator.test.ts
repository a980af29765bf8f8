import { test } from 'node:test';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { summarize } from '../../src/metrics/summary.ts';
import { scenarioSchema } from '../../src/scenario/schema.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { outcomes, run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

const steady = (n: number, gap: number, inTok = 300, outTok = 50): Req[] => Array.from({ length: n }, (_, i) => ({ t: i * gap, in: inTok, out: outTok }));

test('every arrived request ends completed, dropped or unfinished, also when the run is cut at endS', () => {
  const reqs = steady(200, 0.05, 800, 300);
  for (const endS of [undefined, 3, 8]) {
    const res = run(scenarioFor(writeTrace(reqs), endS ? { endS } : {}), 'fast');
    const s = summarize(res, 0);
    assert.equal(s.requests.total, s.requests.completed + s.requests.dropped + s.requests.unfinished);
    if (endS) {
      assert.equal(s.sim.simulatedSeconds, endS);
      assert.ok(s.requests.unfinished > 0);
    } else assert.equal(s.requests.completed, 200);
  }
});

test('a run cut at endS closes the trace it was reading', { skip: !existsSync('/proc/self/fd') && 'needs /proc/self/fd' }, () => {
  const trace = writeTrace(steady(2000, 0.05));
  const open = () => readdirSync('/proc/self/fd').length;
  const before = open();
  for (let i = 0; i < 3; i++) run(scenarioFor(trace, { endS: 2 }), 'fast');
  assert.equal(open(), before);
});

test('the same seed gives the same summary; another seed changes a seeded workload', () => {
  const sc = (seed: number) =>
    scenarioSchema.parse({
      seed,
      workload: { synthetic: { durationS: 60, arrivals: { kind: 'poisson', ratePerS: 5 }, lengths: { kind: 'lognormal', input: { mu: 5, sigma: 1 }, output: { mu: 4, sigma: 1 } } } },
      fleet: { pools: [{ model: 'llama3.1-8b', hardware: 'a100-80gb', count: 2 }] },
      routing: { policy: 'power-of-two' },
    });
  const strip = (seed: number) => {
    const { sim: _sim, ...rest } = summarize(simulate(sc(seed), '.', { mode: 'fast' }), 0);
    return JSON.stringify(rest);
  };
  assert.equal(strip(3), strip(3));
  assert.notEqual(strip(3), strip(4));
});

test('requests longer than the context are dropped with a reason', () => {
  const sc = scenarioFor(writeTrace([{ t: 0, in: 140000, out: 100 }, { t: 0.1, in: 10, out: 10 }]));
  const s = summarize(run(sc, 'fast'), 0);
  assert.deepEqual(s.requests.dropReasons, { 'context-length': 1 });
  assert.equal(s.requests.completed, 1);
});

test('an added instance serves only after provisioning, which is billed and reported as wasted', () => {
  // No instance at t = 0; one is added at once and needs 60 + 40 s: requests wait for it (deferred).
  const sc = scenarioFor(writeTrace(steady(10, 1)), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', tp: 2, count: 0 }], provisioning: { vmAcquireS: 60, modelLoadS: 40 } },
    scaling: { policy: 'scheduled', actions: [{ atS: 0, action: 'add', pool: 'p' }] },
  });
  const res = run(sc, 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 10);
  assert.ok(res.log.queue[0]! >= 100 - 1e-9, 'the first request waits for the instance');
  assert.ok(Math.abs(s.fleet.wastedGpuHours - (2 * 100) / 3600) < 1e-12);
  assert.ok(Math.abs(s.fleet.gpuHours - (2 * s.sim.simulatedSeconds) / 3600) < 1e-12);
});

test('a drained instance takes no new requests and stops when its last one finishes', () => {
  const sc = scenarioFor(writeTrace(steady(100, 0.1)), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 2 }] },
    scaling: { policy: 'scheduled', actions: [{ atS: 5, action: 'drain', pool: 'p' }] },
  });
  const res = run(sc, 'fast');
  const drained = res.fleet.instances[1]!;
  assert.equal(drained.state, 'stopped');
  assert.ok(drained.stoppedS >= 5);
  for (let i = 0; i < res.log.n; i++) if (res.log.arrival[i]! > 5) assert.equal(res.log.instance[i], 0);
  const s = summarize(res, 0);
  assert.ok(Math.abs(s.fleet.instanceHours - (s.sim.simulatedSeconds + drained.stoppedS) / 3600) < 1e-12);
});

test('a scale-in drains the newest instance by default, the least loaded one with drainOrder least-loaded', () => {
  // Round-robin: the short request lands on instance 0, the long one on instance 1, still busy at t = 5.
  const drainedWith = (drainOrder?: string) => {
    const sc = scenarioFor(writeTrace([{ t: 0, in: 100, out: 5 }, { t: 0.1, in: 100, out: 4000 }]), {
      fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 2 }] },
      routing: { policy: 'round-robin' },
      scaling: { policy: 'scheduled', actions: [{ atS: 5, action: 'drain', pool: 'p' }], ...(drainOrder ? { drainOrder } : {}) },
    });
    const res = run(sc, 'fast');
    assert.ok(res.log.e2e[1]! > 10, 'the long request is still running at the drain');
    return res.fleet.instances.filter((i) => i.stoppedS >= 0).map((i) => i.id);
  };
  assert.deepEqual(drainedWith(), [1]);
  assert.deepEqual(drainedWith('least-loaded'), [0]);
});

test('per-tier blocks appear when requests carry tiers, with per-tier SLO targets', () => {
  const sc = scenarioSchema.parse({
    workload: {
      synthetic: {
        durationS: 30,
        arrivals: { kind: 'poisson', ratePerS: 4 },
        lengths: { kind: 'lognormal', input: { mu: 5, sigma: 0.5 }, output: { mu: 3, sigma: 0.5 } },
        labels: { tier: { 'iw-f': 1, niw: 1 } },
      },
    },
    fleet: { pools: [{ model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }] },
    slo: { ttftS: 1, tpotS: 0.1, tiers: { niw: { ttftS: 3600 } } },
  });
  const s = summarize(simulate(sc, '.', { mode: 'fast' }), 0);
  assert.deepEqual(Object.keys(s.tiers ?? {}), ['iw-f', 'niw']);
  assert.equal(s.tiers!.niw!.slo.ttftS, 3600);
  assert.equal(s.tiers!['iw-f']!.requests.total + s.tiers!.niw!.requests.total, s.requests.total);
});

test('a pool override replaces only the fields it names; the rest come from the top-level sections', () => {
  const sc = scenarioSchema.parse({
    workload: { trace: { path: 'x.csv', format: 'csv' } },
    engine: { maxNumSeqs: 7, scheduler: 'splitwise' },
    perf: { kind: 'roofline', calibrated: true },
    fleet: { pools: [{ model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, engine: { kvBlocks: 5 } }] },
  });
  const pool = sc.fleet.pools[0]!;
  assert.deepEqual(pool.engine, { kvBlocks: 5 });
  assert.equal(pool.perf, undefined);
  assert.equal(sc.engine.maxNumSeqs, 7);
  assert.equal(sc.engine.maxBatchedTokens, 8192);
});

test('the reactive scaler adds instances under KV pressure (after provisioning) and removes them when load falls', () => {
  // A burst of long requests on one small-KV instance, then quiet.
  const reqs: Req[] = [];
  for (let i = 0; i < 300; i++) reqs.push({ t: i * 0.2, in: 400, out: 300 });
  reqs.push({ t: 3000, in: 10, out: 2 });
  const sc = scenarioFor(writeTrace(reqs), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, minCount: 1, maxCount: 3 }], provisioning: { vmAcquireS: 20, modelLoadS: 10 } },
    engine: { kvBlocks: 400 },
    scaling: { policy: 'reactive', intervalS: 10, downCooldownS: 60 },
  });
  const res = run(sc, 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 301);
  assert.equal(res.fleet.instances.length, 3, 'scaled up to maxCount');
  for (const inst of res.fleet.instances.slice(1)) {
    assert.equal(inst.readyS - inst.createdS, 30, 'provisioning delay');
    assert.equal(inst.state, 'stopped', 'scaled back in when the burst was over');
  }
  assert.ok(s.fleet.wastedGpuHours > 0);
  // Fast and step modes agree with a scaler in the loop.
  const step = run(sc, 'step');
  assert.deepEqual(outcomes(res), outcomes(step));
});

test('the reactive scaler starts an instance for a pool that begins at zero once its model sees requests', () => {
  const reqs: Req[] = [];
  for (let i = 0; i < 20; i++) reqs.push({ t: 5 + i, in: 100, out: 20 });
  const sc = scenarioFor(writeTrace(reqs), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 0, minCount: 0, maxCount: 2 }], provisioning: { vmAcquireS: 20, modelLoadS: 10 } },
    scaling: { policy: 'reactive', intervalS: 10 },
  });
  const res = run(sc, 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 20, 'nothing dropped for want of an instance');
  assert.equal(res.fleet.instances.length, 1, 'one instance from zero, not one per tick');
  assert.equal(res.fleet.instances[0]!.createdS, 10, 'started at the first tick after the first arrival');
});

test("a scenario's catalog file adds hardware and models users can deploy by name", () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-cat-'));
  writeFileSync(
    join(dir, 'catalog.yaml'),
    [
      'hardware:',
      '  b200: { kind: gpu, memoryBytes: 192e9, bf16Flops: 2.25e15, memBandwidthBytesPerS: 8e12, interconnectBytesPerS: 900e9, priceUsdPerHour: 9, devicesPerNode: 8 }',
      'models:',
      '  tiny: { layers: 4, hiddenSize: 512, heads: 8, kvHeads: 8, headDim: 64, intermediateSize: 1024, vocabSize: 32000, params: 5e7, activeParams: 5e7, contextLength: 2048, bytesPerParam: 2 }',
      '',
    ].join('\n'),
  );
  const sc = scenarioFor(writeTrace(steady(5, 1, 100, 10)), {
    catalog: 'catalog.yaml',
    fleet: { pools: [{ name: 'p', model: 'tiny', hardware: 'b200', count: 1 }] },
  });
  const res = simulate(sc, dir, { mode: 'fast' });
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 5);
  assert.ok(Math.abs(s.fleet.costUsd - (9 * s.sim.simulatedSeconds) / 3600) < 1e-9);
});

test('routing.dispatchDelayS: every request reaches its instance that much after the routing decision (TTFT and E2E pay it)', () => {
  const trace = writeTrace([0, 100, 200].map((t) => ({ t, in: 100, out: 10 })));
  const at = (dispatchDelayS: number) => run(scenarioFor(trace, { routing: { policy: 'round-robin', dispatchDelayS } }), 'fast').log;
  const [base, late] = [at(0), at(0.0456)];
  for (let i = 0; i < 3; i++) {
    assert.ok(Math.abs(late.ttft[i]! - base.ttft[i]! - 0.0456) < 1e-9, `ttft ${i}: ${late.ttft[i]} vs ${base.ttft[i]}`);
    assert.ok(Math.abs(late.e2e[i]! - base.e2e[i]! - 0.0456) < 1e-9, `e2e ${i}`);
  }
  assert.throws(() => scenarioFor(trace, { routing: { dispatchDelayS: -1 } }));
});

test('scheduled actions the run never reaches, or that the pool bounds clamp, get a note naming their own index', () => {
  const trace = writeTrace([0, 1, 2].map((t) => ({ t, in: 100, out: 10 })));
  const res = run(scenarioFor(trace, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, maxCount: 2 }] },
    scaling: { policy: 'scheduled', actions: [{ atS: 1e6, action: 'add', pool: 'p' }, { atS: 0.5, action: 'add', pool: 'p', count: 5 }] },
  }), 'fast');
  assert.deepEqual(res.notes, [
    "scaling.actions[1] (add 5 on p at 0.5 s): 1 done, the pool's maxCount 2 bounds it",
    `scaling.actions[0] (add 1 on p at 1000000 s): not done, the run ended at ${+res.endS.toFixed(1)} s`,
  ]);
});
