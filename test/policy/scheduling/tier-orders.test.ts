import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimRequest } from '../../../src/engine/request.ts';
import { queueOrders, type QueueOrderName } from '../../../src/policy/scheduling/registry.ts';
import { parseQueueOrderOptions } from '../../../src/policy/scheduling/tier-queue.ts';
import { drain, make, req } from './queues.ts';
import { ConfigError } from '../../../src/util/errors.ts';
import { Rng } from '../../../src/util/rng.ts';


test('EDF serves the earliest TTFT deadline first: an IW-F arriving later beats an earlier IW-N', () => {
  const now = { t: 10 };
  const q = make('edf', now);
  q.push(req(0, 0, 'iw-n')); // due 60
  q.push(req(1, 5, 'iw-f')); // due 6 (already expired at t = 10: most negative slack first)
  q.push(req(2, 9, 'iw-f')); // due 10
  q.push(req(3, 1, 'niw')); //  due 86401
  assert.equal(q.peek()!.id, 1);
  assert.deepEqual(drain(q), [1, 2, 0, 3]);
});

test("priority (SageServe's default): IW tiers FCFS among themselves, NIW only when no IW waits; preempted back to the head of its class", () => {
  const q = make('priority', { t: 0 });
  q.push(req(0, 50, 'niw'));
  q.push(req(1, 90, 'iw-f'));
  q.push(req(2, 95, 'iw-n'));
  q.push(req(3, 96, 'niw'));
  q.pushFront(req(4, 10, 'niw')); // a preempted NIW request: head of the NIW class, still behind IW
  q.pushFront(req(5, 20, 'iw-n')); // a preempted IW request: head of everything
  const seen: number[] = [];
  q.forEach((r) => seen.push(r.id));
  assert.deepEqual(seen, [5, 1, 2, 4, 0, 3]);
  assert.equal(q.peek()!.id, 5);
  assert.deepEqual(drain(q), [5, 1, 2, 4, 0, 3]);
  // FCFS keeps arrival order across tiers (the paper's order needs the classes).
  const f = make('fcfs', { t: 0 });
  for (const r of [req(0, 50, 'niw'), req(1, 90, 'iw-f')]) f.push(r);
  assert.deepEqual(drain(f), [0, 1]);
  // A NIW request promoted by age (≥ 10 h old at enqueue) goes first in this order too.
  const p = make('priority', { t: 40_000 });
  p.push(req(0, 39_990, 'iw-f'));
  p.push(req(1, 1_000, 'niw'));
  assert.deepEqual(drain(p), [1, 0]);
});

test('PF serves every IW-F request (FCFS) before any IW-N, and NIW last', () => {
  const q = make('pf', { t: 0 });
  q.push(req(0, 0, 'iw-n'));
  q.push(req(1, 1, 'niw'));
  q.push(req(2, 2, 'iw-f'));
  q.push(req(3, 3, 'iw-n'));
  q.push(req(4, 4, 'iw-f'));
  assert.deepEqual(drain(q), [2, 4, 0, 3, 1]);
});

test('DPA orders severely expired, urgent by tier, non-urgent by tier, then recently expired', () => {
  // τ_n = 60, τ_p = 5, now = 100 (the worked example in dpa.ts).
  const now = { t: 100 };
  const q = make('dpa', now);
  q.push(req(0, 99, 'iw-f')); //  due 100: d = 0 → urgent IW-F
  q.push(req(1, 42, 'iw-n')); //  due 102: d = 2 → urgent IW-N
  q.push(req(2, 50, 'iw-n')); //  due 110: d = 10 → non-urgent IW-N
  q.push(req(3, 29, 'iw-f')); //  due 30: d = −70 → severely expired
  q.push(req(4, 98, 'iw-f')); //  due 99: d = −1 → recently expired
  q.push(req(5, 0, 'niw')); //    due 86400 → non-urgent NIW
  const f = new SimRequest({ id: 6, arrivalS: 100, inputTokens: 1, outputTokens: 1, tier: 'iw-f', deadlineS: 120 }, 'm');
  q.push(f); //                   due 120: d = 20 → non-urgent IW-F
  assert.deepEqual(drain(q), [3, 0, 1, 6, 2, 5, 4]);
});

test('DPA classes move with the clock: a non-urgent IW-N becomes urgent and then goes ahead of non-urgent IW-F', () => {
  const now = { t: 0 };
  const q = make('dpa', now);
  q.push(req(0, 0, 'iw-n')); // due 60
  q.push(new SimRequest({ id: 1, arrivalS: 0, inputTokens: 1, outputTokens: 1, tier: 'iw-f', deadlineS: 100 }, 'm'));
  assert.equal(q.peek()!.id, 1, 'both non-urgent: IW-F first');
  now.t = 56;
  assert.equal(q.peek()!.id, 0, 'IW-N is 4 s from its deadline: urgent');
});

test('scheduling.options ttftS overrides the request deadline per tier', () => {
  const q = make('edf', { t: 0 }, { ttftS: { 'iw-n': 0.5 } });
  q.push(req(0, 0.1, 'iw-f')); // due 1.1
  q.push(req(1, 0.2, 'iw-n')); // due 0.7 with the override
  assert.deepEqual(drain(q), [1, 0]);
});

test('bad scheduling options are a ConfigError naming the key', () => {
  assert.throws(() => parseQueueOrderOptions('dpa', { tauNS: -1 }), (e: unknown) => e instanceof ConfigError && /scheduling\.options\.tauNS/.test(e.message));
  assert.throws(() => parseQueueOrderOptions('edf', { nope: 1 }), (e: unknown) => e instanceof ConfigError && /scheduling\.options\.nope/.test(e.message));
});

for (const name of Object.keys(queueOrders) as QueueOrderName[]) {
  test(`${name}: forEach visits the requests in the same order shift takes them, and size is conserved`, () => {
    const rng = new Rng(7);
    const tiers = ['iw-f', 'iw-n', 'niw', ''];
    for (let round = 0; round < 20; round++) {
      const now = { t: rng.next() * 200 };
      const q = make(name, now);
      const n = 1 + rng.int(30);
      for (let i = 0; i < n; i++) q.push(req(i, rng.next() * 200, tiers[rng.int(tiers.length)]!));
      const seen: number[] = [];
      q.forEach((r) => seen.push(r.id));
      assert.equal(q.size, n);
      const taken = drain(q);
      assert.equal(taken.length, n);
      assert.deepEqual(new Set(taken).size, n);
      if (name !== 'fcfs') assert.deepEqual(seen, taken, `round ${round}`);
    }
  });
}

test('long queues: interleaved pushes and shifts always take what a full re-sort would (EDF, PF, DPA)', () => {
  for (const name of ['edf', 'pf', 'dpa'] as const) {
    const rng = new Rng(13);
    const now = { t: 0 };
    const q = make(name, now);
    const live: SimRequest[] = [];
    let id = 0;
    for (let step = 0; step < 12000; step++) {
      now.t += 0.05;
      if (rng.next() < 0.5 || live.length === 0) {
        const r = req(id++, now.t - rng.next() * 2, ['iw-f', 'iw-n', 'niw'][rng.int(3)]!);
        q.push(r);
        live.push(r);
      } else {
        const seen: number[] = [];
        q.forEach((r) => seen.push(r.id));
        const got = q.shift()!;
        assert.equal(got.id, seen[0], `${name} step ${step}`);
        live.splice(live.indexOf(got), 1);
      }
      assert.equal(q.size, live.length);
    }
  }
});
