import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { QueueOrderName } from '../../../src/policy/scheduling/registry.ts';
import { drain, make, req, SLA } from './queues.ts';
import { outcomes, run, scenarioFor, writeTrace, type Req } from '../../helpers/sim.ts';

const HOUR = 3600;

for (const name of ['fcfs', 'edf', 'pf', 'dpa'] as const) {
  test(`${name}: a NIW request queued 10 h or more after its arrival goes before every IW request`, () => {
    const now = { t: 20 * HOUR };
    const q = make(name, now);
    q.push(req(0, now.t - 2, 'iw-f'));
    q.push(req(1, now.t - 1, 'iw-n'));
    const old = req(2, now.t - 10 * HOUR - 1, 'niw');
    q.push(old);
    const young = req(3, now.t - 9 * HOUR, 'niw');
    q.push(young);
    assert.equal(old.promoted, true);
    assert.equal(young.promoted, false);
    assert.equal(q.peek()!.id, 2);
    assert.equal(q.size, 4);
    const seen: number[] = [];
    q.forEach((r) => seen.push(r.id));
    assert.equal(seen[0], 2);
    assert.deepEqual(drain(q)[0], 2);
  });
}

test('the promotion boundary matches the router release: exactly 10 h old is promoted, a second younger is not', () => {
  const now = { t: 10 * HOUR };
  const q = make('fcfs', now);
  q.push(req(0, now.t - 1, 'iw-f'));
  const young = req(1, 1, 'niw');
  q.push(young);
  const old = req(2, 0, 'niw');
  q.push(old);
  assert.equal(young.promoted, false);
  assert.equal(old.promoted, true);
  assert.deepEqual(drain(q), [2, 0, 1]);
});

test('promoted requests are served among themselves in push order and a preempted one goes back to the front', () => {
  const now = { t: 11 * HOUR };
  const q = make('pf', now);
  q.push(req(0, 10, 'iw-f'));
  const a = req(1, 5, 'niw');
  const b = req(2, 1, 'niw');
  q.push(a);
  q.push(b);
  assert.equal(q.shift()!.id, 1);
  q.pushFront(a); // preempted
  assert.deepEqual(drain(q), [1, 2, 0]);
});

test('promoteAfterS: null turns promotion off and other tiers are never promoted', () => {
  const now = { t: 20 * HOUR };
  const off = make('fcfs', now, { promoteAfterS: null });
  off.push(req(0, now.t - 1, 'iw-f'));
  off.push(req(1, 0, 'niw'));
  assert.deepEqual(drain(off), [0, 1]);
  const q = make('fcfs', now, { promoteTier: 'batch' });
  q.push(req(0, now.t - 1, 'iw-f'));
  const niw = req(1, 0, 'niw');
  q.push(niw);
  assert.equal(niw.promoted, false);
  assert.deepEqual(drain(q), [0, 1]);
});

// In a simulation: the only instance comes up at t = 1 s; everything that arrived before waits at the gateway and
// is enqueued at 1 s. With promoteAfterS = 0.5 s, the NIW requests that arrived before 0.5 s are promoted.
function promotedRun(reqs: Req[], order: QueueOrderName, kvBlocks: number, maxNumSeqs: number) {
  return scenarioFor(writeTrace(reqs), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 0 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    engine: { kvBlocks, maxNumSeqs, maxBatchedTokens: 512 },
    scaling: { policy: 'scheduled', actions: [{ atS: 1, action: 'add', pool: 'p' }] },
    scheduling: { policy: order, options: { promoteAfterS: 0.5 } },
    maxDeferS: 100,
  });
}

test('in a run, NIW requests promoted at enqueue get their first token before the IW requests queued with them', () => {
  // Hand-checked: one sequence at a time, so the queue order is the service order. Arrivals: IW-F at 0.1,
  // NIW at 0.2 (0.8 s old at 1 s: promoted), IW-N at 0.6, NIW at 0.7 (0.3 s old: not promoted).
  const reqs: Req[] = [
    { t: 0.1, in: 50, out: 2, tier: 'iw-f', deadline: 1.1 },
    { t: 0.2, in: 50, out: 2, tier: 'niw', deadline: 86400.2 },
    { t: 0.6, in: 50, out: 2, tier: 'iw-n', deadline: 60.6 },
    { t: 0.7, in: 50, out: 2, tier: 'niw', deadline: 86400.7 },
  ];
  for (const order of ['fcfs', 'edf'] as const) {
    const res = run(promotedRun(reqs, order, 100, 1), 'step');
    const firstToken = [0, 1, 2, 3].map((i) => res.log.arrival[i]! + res.log.ttft[i]!);
    const served = [0, 1, 2, 3].sort((a, b) => firstToken[a]! - firstToken[b]!);
    assert.deepEqual(served, [1, 0, 2, 3], `${order}: first tokens at ${firstToken.join(', ')}`);
  }
});

test('fast mode equals step mode with promoted NIW requests in every queue order', () => {
  const tiered = fc
    .array(
      fc.record({
        gap: fc.double({ min: 0, max: 0.08, noNaN: true }),
        in: fc.integer({ min: 1, max: 800 }),
        out: fc.integer({ min: 1, max: 200 }),
        tier: fc.constantFrom('iw-f', 'iw-n', 'niw'),
      }),
      { minLength: 2, maxLength: 30 },
    )
    .map((rs) => {
      let t = 0;
      return rs.map((r) => ({ t: (t += r.gap), in: r.in, out: r.out, tier: r.tier, deadline: t + SLA[r.tier]! }));
    });
  let promoted = 0;
  fc.assert(
    fc.property(tiered, fc.constantFrom('fcfs', 'edf', 'pf', 'dpa'), fc.integer({ min: 100, max: 400 }), (reqs, order, kvBlocks) => {
      const sc = promotedRun(reqs, order, kvBlocks, 8);
      const fast = run(sc, 'fast');
      const step = run(sc, 'step');
      assert.deepEqual(outcomes(fast), outcomes(step));
      if (reqs.some((r) => r.tier === 'niw' && r.t < 0.5)) promoted++;
    }),
    { numRuns: 60, seed: 5 },
  );
  assert.ok(promoted > 10, 'the property must exercise promotion');
});
