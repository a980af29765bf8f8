import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { simulate } from '../../src/sim/simulator.ts';
import { outcomes, run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

// One instance until t = 0.5 s, when a second one joins (no provisioning delay). Twelve requests arrive before it,
// on a KV pool of 96 blocks × 16 tokens: instance 0 runs out of free blocks per request (Llumnix's migrate-out
// trigger) while instance 1, empty, is the freest destination.
const early: Req[] = Array.from({ length: 12 }, (_, i) => ({ t: 0.01 * i, in: 64 + 8 * i, out: 120 }));
const late: Req[] = Array.from({ length: 4 }, (_, i) => ({ t: 0.6 + 0.01 * i, in: 32, out: 20 }));
const trace = writeTrace([...early, ...late]);

const scenario = (migration: boolean, extra: Record<string, unknown> = {}) =>
  scenarioFor(trace, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    engine: { kvBlocks: 96, blockTokens: 16 },
    routing: { policy: 'llumnix', options: { migration: { enabled: migration } } },
    scaling: { policy: 'scheduled', actions: [{ atS: 0.5, action: 'add', pool: 'p', count: 1 }] },
    ...extra,
  });

/** Requests that arrived before instance 1 existed yet finished there. */
const movedToNewInstance = (res: ReturnType<typeof run>) => {
  let n = 0;
  for (let i = 0; i < early.length; i++) if (res.log.instance[i] === 1) n++;
  return n;
};

test('without migration a request stays on the instance it was sent to', () => {
  const res = run(scenario(false), 'fast');
  assert.equal(movedToNewInstance(res), 0);
  assert.equal(res.migrations, undefined);
});

test('llumnix migration moves running requests to a new, empty instance and every request still completes', () => {
  const res = run(scenario(true), 'fast');
  const m = res.migrations!;
  assert.ok(m.completed > 0, `completed ${m.completed}`);
  assert.ok(movedToNewInstance(res) > 0);
  for (let i = 0; i < res.log.n; i++) assert.ok(res.log.isDone(i), `request ${i}`);
  assert.equal(m.ordered, m.completed + m.refused + m.dropped);
});

test('a migration’s downtime is the stall plus its last copy stage', () => {
  const m = run(scenario(true), 'fast').migrations!;
  // llama3.1-8b: 2 · 32 layers · 8 KV heads · 128 · 2 bytes = 131,072 bytes a token; 10 GB/s; last stage ≤ 16 blocks.
  const lastStageMaxS = (16 * 16 * 131_072) / 10e9;
  assert.ok(m.meanDowntimeS >= 0.02 && m.meanDowntimeS <= 0.02 + lastStageMaxS, `downtime ${m.meanDowntimeS}`);
  const slow = run(scenario(true, { migration: { stallS: 0.2 } }), 'fast').migrations!;
  assert.ok(slow.meanDowntimeS >= 0.2, `downtime ${slow.meanDowntimeS}`);
});

test('migration gives the same per-request results in fast and step engine modes', () => {
  assert.deepEqual(outcomes(run(scenario(true), 'fast')), outcomes(run(scenario(true), 'step')));
});

test('a migrating router with the splitwise builder is refused with the field named', () => {
  const sc = scenario(true, { engine: { kvBlocks: 96, blockTokens: 16, scheduler: 'splitwise' } });
  assert.throws(() => simulate(sc, '.', { mode: 'fast' }), /fleet\.pools\[0\]\.engine\.scheduler/);
});

test('with migration every request still finishes exactly once, and fast and step modes agree (property)', () => {
  const reqs = fc
    .array(fc.record({ gap: fc.double({ min: 0, max: 0.05, noNaN: true }), in: fc.integer({ min: 1, max: 900 }), out: fc.integer({ min: 1, max: 300 }) }), { minLength: 1, maxLength: 40 })
    .map((rs) => {
      let t = 0;
      return rs.map((r) => ({ t: (t += r.gap), in: r.in, out: r.out }));
    });
  const cfg = fc.record({
    scheduler: fc.constantFrom('vllm', 'vllm-v0'),
    kvBlocks: fc.integer({ min: 80, max: 300 }),
    instances: fc.integer({ min: 1, max: 3 }),
    joinS: fc.double({ min: 0, max: 1, noNaN: true }),
    /** A drain of the newest instance, possibly while it sends or receives a migration (the 'stopped' hand-over path). */
    drainS: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
    stallS: fc.constantFrom(0, 0.02, 0.3),
    bandwidthGBps: fc.constantFrom(0.1, 10),
  });
  fc.assert(
    fc.property(reqs, cfg, (rs, c) => {
      const sc = scenarioFor(writeTrace(rs), {
        fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: c.instances }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
        engine: { scheduler: c.scheduler, kvBlocks: c.kvBlocks, blockTokens: 16, maxNumSeqs: 16, maxBatchedTokens: 1024, chunkedPrefill: false },
        routing: { policy: 'llumnix', options: { migration: { enabled: true } } },
        scaling: {
          policy: 'scheduled',
          actions: [{ atS: c.joinS, action: 'add', pool: 'p', count: 1 }, ...(c.drainS === undefined ? [] : [{ atS: c.drainS, action: 'drain', pool: 'p', count: 1 }])],
        },
        migration: { stallS: c.stallS, bandwidthGBps: c.bandwidthGBps },
        output: { timelineIntervalS: 0.05 },
      });
      const fast = run(sc, 'fast');
      for (let i = 0; i < fast.log.n; i++) assert.ok(fast.log.isDone(i) || fast.log.isDropped(i), `request ${i} neither finished nor dropped`);
      const m = fast.migrations!;
      assert.equal(m.ordered, m.completed + m.refused + m.dropped);
      // Each completed migration's downtime is its last copy stage plus the stall; the mean is over those.
      if (m.completed > 0) assert.ok(m.meanDowntimeS >= c.stallS, `mean downtime ${m.meanDowntimeS} < stall ${c.stallS}`);
      // Every completed migration copied at least the prompt it moved (and at least one token of output).
      if (m.completed > 0) assert.ok(m.copiedTokens >= m.completed * 2, `${m.copiedTokens} tokens copied by ${m.completed} migrations`);
      assert.deepEqual(outcomes(fast), outcomes(run(sc, 'step')));
    }),
    { numRuns: 60, seed: 7 },
  );
});

test('a request whose destination stops while its KV is in transit starts over elsewhere and still finishes', () => {
  // No late arrivals: instance 1 holds nothing but the reservation, so draining it at 0.8 s stops it at once,
  // while the first migrated request (suspended 0.5 s) is still on its way.
  const sc = scenarioFor(writeTrace(early), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    engine: { kvBlocks: 96, blockTokens: 16 },
    routing: { policy: 'llumnix', options: { migration: { enabled: true } } },
    migration: { stallS: 0.5 },
    scaling: { policy: 'scheduled', actions: [{ atS: 0.5, action: 'add', pool: 'p', count: 1 }, { atS: 0.8, action: 'drain', pool: 'p', count: 1 }] },
  });
  for (const mode of ['fast', 'step'] as const) {
    const res = run(sc, mode);
    assert.deepEqual({ ...res.migrations!, copiedTokens: 0 }, { ordered: 1, completed: 0, refused: 0, dropped: 1, inFlight: 0, copiedTokens: 0, meanDowntimeS: 0 });
    // Starting over elsewhere counts as a preemption of the request that was on its way (the engines' count has
    // only their own).
    let perRequest = 0;
    for (let i = 0; i < res.log.n; i++) perRequest += res.log.preemptions[i]!;
    assert.equal(perRequest, res.preemptions + 1);
    for (let i = 0; i < res.log.n; i++) {
      assert.ok(res.log.isDone(i), `request ${i}`);
      assert.equal(res.log.instance[i], 0);
    }
  }
});
