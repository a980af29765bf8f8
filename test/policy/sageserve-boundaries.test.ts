import { test } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { createRouter } from '../../src/policy/routing/registry.ts';
import { niwReleaseCount } from '../../src/policy/sageserve/niw.ts';
import type { FleetView, InstanceView, RequestView } from '../../src/policy/types.ts';
import { Rng } from '../../src/util/rng.ts';
import { run, scenarioFor } from '../helpers/sim.ts';

// SageServe's NIW queue manager: how many held requests a signalling endpoint takes at its utilisation's
// boundaries, which held request goes first (hold order), how many go per signal, and which events signal.

test('NIW release counts at the exact thresholds: paper u < 0.5 ⇒ 2, u < 0.6 ⇒ 1; code u ≤ 0.5 ⇒ 1, u ≤ 0.6 ⇒ 2', () => {
  assert.deepEqual([0.4999, 0.5, 0.5999, 0.6, 0.6001].map((u) => niwReleaseCount(u, 'paper')), [2, 1, 1, 0, 0]);
  assert.deepEqual([0.4999, 0.5, 0.5001, 0.6, 0.6001].map((u) => niwReleaseCount(u, 'code')), [1, 1, 2, 2, 0]);
  // Thresholds given explicitly move the edges the same way.
  assert.deepEqual([0.3, 0.4].map((u) => niwReleaseCount(u, 'paper', 0.4, 0.3)), [1, 0]);
  assert.deepEqual([0.3, 0.4].map((u) => niwReleaseCount(u, 'code', 0.4, 0.3)), [1, 2]);
});

function inst(id: number, region: string, kv: number): InstanceView {
  return {
    id, pool: `${region}-m`, model: 'm', hardware: 'h100-80gb', tp: 8, pp: 1, region, state: 'ready',
    numRunning: 0, numWaiting: 0, outstandingRequests: 0, kvUsedFraction: kv, outstandingTokens: 0, pendingTokens: 0,
    kvCapacityTokens: 1000, requests: () => [],
  } as InstanceView;
}
const view = (instances: InstanceView[], now: number): FleetView => ({ now, instances, routable: (m) => instances.filter((i) => i.model === m && i.state === 'ready') });
const niw = (id: number, arrivalS = 0): RequestView => ({
  id, arrivalS, inputTokens: 100, predictedOutputTokens: 10, model: 'm', tier: 'niw', region: 'east', app: '', deadlineS: arrivalS + 86_400,
});
const sage = (opts: object = {}) => createRouter('sageserve', opts, { rng: new Rng(1) });
const kinds = (r: ReturnType<typeof sage>, n: number, v: FleetView) => Array.from({ length: n }, (_, i) => r.route(niw(i + 1), v).kind);

test('the NIW queue manager: an endpoint signalling at exactly 50 % takes one request (paper), at exactly 60 % none', () => {
  for (const [u, paper, code] of [[0.5, 1, 1], [0.6, 0, 2], [0.4, 2, 1]] as const) {
    const expect = (k: number) => [...Array(k).fill('send'), ...Array(3 - k).fill('defer')];
    const p = sage();
    p.endpointSignal!('m', new Set(['east']), 100);
    assert.deepEqual(kinds(p, 3, view([inst(0, 'east', u)], 100)), expect(paper), `paper at ${u}`);
    const c = sage({ preset: 'code' });
    c.endpointSignal!('m', new Set(['east']), 100);
    assert.deepEqual(kinds(c, 3, view([inst(0, 'east', u)], 100)), expect(code), `code at ${u}`);
  }
});

test('a held NIW request exactly niwPromoteAfterS old is routed at once, like IW; a moment younger it is held', () => {
  const v = (now: number) => view([inst(0, 'east', 0.9)], now);
  assert.deepEqual(sage().route(niw(1, 0), v(36_000)), { kind: 'send', to: 0, reason: 'least-utilised-region' });
  assert.equal(sage().route(niw(2, 0), v(35_999.5)).kind, 'defer');
  assert.equal(sage({ niwPromoteAfterS: 10 }).route(niw(3, 90), v(100)).kind, 'send');
});

// ---- the queue manager in the simulator ----------------------------------------------------------------------

/** A canonical trace with tiers and regions (deadlines far away). */
function trace(rows: { t: number; in: number; out: number; tier: string; region: string }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-niw-'));
  const path = join(dir, 'trace.csv');
  const body = rows.map((r) => `${r.t},${r.in},${r.out},llama3.1-8b,${r.tier},${r.region},${r.t + 86_400}`);
  writeFileSync(path, 'arrival_s,input_tokens,output_tokens,model,tier,region,deadline_s\n' + body.join('\n') + '\n');
  return path;
}
const east = { name: 'east-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'east', count: 1 };

/** Runs NIW requests held from t ≈ 1 s on one idle East instance; returns each request's first-token and finish times. */
function held(rows: { t: number; region: string }[], options: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const sc = scenarioFor(trace(rows.map((r) => ({ ...r, in: 200, out: 10, tier: 'niw' }))), {
    fleet: { pools: [east], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    routing: { policy: 'sageserve', options: { niwSignalIntervalS: 30, ...options } },
    maxDeferS: 86_400,
    ...extra,
  });
  const res = run(sc, 'fast');
  return rows.map((_, i) => {
    assert.ok(res.log.isDone(i), `request ${i} finished`);
    return { first: res.log.arrival[i]! + res.log.ttft[i]!, end: res.log.arrival[i]! + res.log.e2e[i]! };
  });
}

test('one release per signal (niwTwoBelow 0): the request held first goes first, across region FIFOs', () => {
  // East's request is held first (its own FIFO), then West's (another FIFO). At the 30 s signal the idle East
  // endpoint takes one: the older, East's. West's goes at the next signal, East's completion.
  const [a, b] = held([{ t: 1, region: 'east' }, { t: 1.01, region: 'west' }], { niwQueues: 'model-region', niwTwoBelow: 0 });
  assert.ok(a!.first >= 30 && a!.first < 31, `the first held goes at the 30 s signal, got ${a!.first}`);
  assert.ok(b!.first >= a!.end, `the second after the first finished (${b!.first} vs ${a!.end})`);
  // Held the other way round, West's goes first.
  const [c, d] = held([{ t: 1, region: 'west' }, { t: 1.01, region: 'east' }], { niwQueues: 'model-region', niwTwoBelow: 0 });
  assert.ok(c!.first >= 30 && c!.first < 31, `got ${c!.first}`);
  assert.ok(d!.first >= c!.end);
});

test('one release per signal (niwTwoBelow 0): one FIFO per model releases in hold order', () => {
  const times = held([1, 2, 3].map((t) => ({ t, region: 'east' })), { niwTwoBelow: 0 });
  assert.ok(times[0]!.first >= 30 && times[0]!.first < 31, `got ${times[0]!.first}`);
  assert.ok(times[1]!.first >= times[0]!.end && times[2]!.first >= times[1]!.end, 'one after the other, in hold order');
});

test('two releases per signal below 50 %: both go at the same signal, from one FIFO', () => {
  // The idle endpoint (u = 0) takes two at the 30 s signal; the third waits for a completion.
  const [a, b, c] = held([1, 2, 3].map((t) => ({ t, region: 'east' })), {});
  assert.ok(a!.first >= 30 && a!.first < 31 && b!.first >= 30 && b!.first < 31, `both at 30 s: ${a!.first}, ${b!.first}`);
  assert.ok(b!.first < a!.end, 'the second ran alongside the first');
  assert.ok(c!.first >= Math.min(a!.end, b!.end), 'the third only after a completion');
});

test('an instance becoming ready signals the queue manager: held NIW goes then, not at the next periodic signal', () => {
  // No instance at first; one is added at 3 s and ready at 5 s (2 s VM acquisition). The NIW request held since
  // 1 s is released when it becomes ready.
  const sc = scenarioFor(trace([{ t: 1, in: 200, out: 10, tier: 'niw', region: 'east' }]), {
    fleet: { pools: [{ ...east, count: 0 }], provisioning: { vmAcquireS: 2, modelLoadS: 0 } },
    routing: { policy: 'sageserve', options: { niwSignalIntervalS: 30 } },
    scaling: { policy: 'scheduled', actions: [{ atS: 3, action: 'add', pool: 'east-a', count: 1 }] },
    maxDeferS: 86_400,
  });
  const res = run(sc, 'fast');
  assert.ok(res.log.isDone(0));
  const first = res.log.arrival[0]! + res.log.ttft[0]!;
  assert.ok(first >= 5 && first < 6, `released when the instance became ready at 5 s, got ${first}`);
});
