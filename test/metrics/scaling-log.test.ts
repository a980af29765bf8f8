import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../../src/metrics/summary.ts';
import { writeRunOutputs } from '../../src/metrics/write.ts';
import { scalers } from '../../src/policy/scaling/registry.ts';
import type { Scaler } from '../../src/policy/scaling/types.ts';
import { run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

// Busy for 600 s, quiet until 3000 s, busy again: the reactive scaler goes down to zero and back up.
const reqs: Req[] = [];
for (let t = 0; t < 600; t += 0.5) reqs.push({ t, in: 2000, out: 300 });
for (let t = 3000; t < 3300; t += 5) reqs.push({ t, in: 200, out: 20 });
const trace = writeTrace(reqs);

test('scaling.csv: every request of the policy and what the governor let through; its applied column accounts for every instance started and drained', async () => {
  const sc = scenarioFor(trace, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, minCount: 0, maxCount: 3 }], provisioning: { vmAcquireS: 20, modelLoadS: 10 } },
    scaling: { policy: 'reactive', intervalS: 30, downCooldownS: 60, options: { idleToZeroS: 300, scaleUpAbove: 0.05, scaleDownBelow: 0.02 } },
  });
  const res = run(sc, 'fast');
  const rows = res.scaling!;
  assert.ok(rows.length > 0);
  const started = res.fleet.instances.length - 1;
  const stopped = res.fleet.instances.filter((i) => i.stoppedS >= 0).length;
  assert.equal(rows.reduce((n, r) => n + Math.max(0, r.applied), 0), started, 'applied adds = instances started');
  assert.ok(started >= 2, `the pool scaled up (${started} started)`);
  // Every stopped instance was drained by an applied removal (one still draining at the end has not stopped yet).
  const removed = rows.reduce((n, r) => n + Math.max(0, -r.applied), 0);
  assert.ok(removed >= stopped && removed <= started + 1, `removed ${removed}, stopped ${stopped}`);
  assert.ok(rows.some((r) => r.reason === 'idle-to-zero' && r.applied < 0), 'the scale to zero is logged');
  assert.ok(rows.some((r) => r.asked > 0 && r.applied === 0), 'a vetoed request (maxCount or a provisioning instance) is logged');
  for (const r of rows) assert.ok(r.asked !== 0 || r.applied !== 0);

  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  await writeRunOutputs(dir, summarize(res, 0), res);
  const lines = readFileSync(join(dir, 'scaling.csv'), 'utf8').trimEnd().split('\n');
  assert.equal(lines[0], 't_s,pool,ready,provisioning,asked,applied,reason');
  assert.equal(lines.length, rows.length + 1);
});

test('scheduled actions are logged as asked and as done (clamped by the pool bounds); a run without scaling writes no scaling.csv', async () => {
  const sc = scenarioFor(writeTrace([{ t: 0, in: 10, out: 2 }, { t: 100, in: 10, out: 2 }]), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, maxCount: 2 }] },
    scaling: { policy: 'scheduled', actions: [{ atS: 10, action: 'add', pool: 'p', count: 3 }] },
  });
  const res = run(sc, 'fast');
  assert.deepEqual(res.scaling, [{ tS: 10, pool: 'p', ready: 1, provisioning: 0, asked: 3, applied: 1, reason: 'scheduled' }]);

  const plain = run(scenarioFor(writeTrace([{ t: 0, in: 10, out: 2 }])), 'fast');
  assert.equal(plain.scaling, undefined);
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  await writeRunOutputs(dir, summarize(plain, 0), plain);
  assert.equal(existsSync(join(dir, 'scaling.csv')), false);
});

test("the reactive scaler reads a pool's mean KV utilisation over its ready instances, not their sum", () => {
  // Three instances at about a quarter of their KV each: below the 0.7 scale-up threshold (their sum is not).
  const steady = writeTrace(Array.from({ length: 600 }, (_, i) => ({ t: i / 10, in: 200, out: 100 })));
  const sc = scenarioFor(steady, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 3, maxCount: 6 }] },
    engine: { kvBlocks: 100 },
    scaling: { policy: 'reactive', intervalS: 5 },
    output: { timelineIntervalS: 1 },
  });
  const res = run(sc, 'fast');
  const peak = Math.max(...res.timeline.rows.map((r) => r.kvUtilization));
  assert.ok(peak > 0.15 && peak < 0.35, `mean KV utilisation peaks at ${peak}`);
  assert.deepEqual(res.scaling!.filter((r) => r.asked > 0), [], 'no scale-up asked');
});

test("a scaler sees each interval's arrivals once: the counts it is given are per interval, not running totals", () => {
  const times = Array.from({ length: 120 }, (_, i) => 0.1 + i * 0.37);
  const sc = scenarioFor(writeTrace(times.map((t) => ({ t, in: 50, out: 20 }))), { scaling: { policy: 'static', intervalS: 5 } });
  // Wrap the static scaler to record what it is given (restored below).
  const entry = scalers.static as { make: (o: never, ctx: never) => Scaler };
  const make = entry.make;
  const seen: { now: number; requests: number }[] = [];
  entry.make = (o, ctx) => {
    const s = make(o, ctx);
    return { ...s, decide: (sig) => (seen.push({ now: sig.now, requests: sig.arrivals.reduce((n, a) => n + a.requests, 0) }), s.decide(sig)) };
  };
  try {
    run(sc, 'fast');
  } finally {
    entry.make = make;
  }
  assert.ok(seen.length >= 5);
  let prev = -Infinity;
  for (const { now, requests } of seen) {
    assert.equal(requests, times.filter((t) => t > prev && t <= now).length, `the tick at ${now} s`);
    prev = now;
  }
});

test("a scheduled add fills only the room a pool's draining instances leave under maxCount, and says so", () => {
  // The one instance is busy when drained at 1 s, so it drains for a while; the add at 2 s asks for two.
  const busy = writeTrace(Array.from({ length: 8 }, (_, i) => ({ t: i * 0.01, in: 500, out: 2000 })));
  const sc = scenarioFor(busy, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, maxCount: 2 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    scaling: { policy: 'scheduled', actions: [{ atS: 1, action: 'drain', pool: 'p' }, { atS: 2, action: 'add', pool: 'p', count: 2 }] },
  });
  const res = run(sc, 'fast');
  assert.ok(res.fleet.instances[0]!.stoppedS > 2, 'still draining at the add');
  assert.equal(res.fleet.instances.length, 2, 'one added: the draining one still holds its devices');
  assert.deepEqual(res.scaling!.map((r) => [r.tS, r.asked, r.applied]), [[1, -1, -1], [2, 2, 1]]);
  assert.ok(res.notes.some((n) => /scaling\.actions\[1\] \(add 2 on p at 2 s\): 1 done, the pool's maxCount 2 bounds it \(1 still draining\)/.test(n)), res.notes.join('\n'));
});
