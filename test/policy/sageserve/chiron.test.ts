import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createScaler } from '../../../src/policy/scaling/registry.ts';
import type { ArrivalStats, PoolStatus, ScaleAction, ScalingSignals } from '../../../src/policy/scaling/types.ts';
import { sageserveScalingOptions } from '../../../src/policy/sageserve/options.ts';
import { chironDrainS, chironEndpoints, interactiveBackpressure } from '../../../src/policy/sageserve/scalers.ts';
import type { FleetView, InstanceView, RequestProgress } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';

const ctx = { rng: new Rng(1) };
const OPTS = sageserveScalingOptions.parse({});

function pool(name: string, ready: number, extra: Partial<PoolStatus> = {}): PoolStatus {
  return {
    name, model: 'llama2-70b', hardware: 'h100-80gb', region: 'east', tp: 8, pp: 1, provisioning: 0, ready, draining: 0,
    minCount: 0, maxCount: 40, kvUtilization: 0, outstandingRequests: 0, waiting: 0, ...extra,
  };
}
const running = (tier: string): RequestProgress => ({ status: 'running', tier } as RequestProgress);
/** One instance per entry: the tiers of its running requests ([] = idle), plus optional load fields. */
function fleet(pools: Record<string, (string[] | Partial<InstanceView>)[]>): FleetView {
  const instances: InstanceView[] = [];
  for (const [name, list] of Object.entries(pools)) {
    for (const x of list) {
      const tiers = Array.isArray(x) ? x : [];
      const extra = Array.isArray(x) ? {} : x;
      instances.push({
        id: instances.length, pool: name, model: 'llama2-70b', hardware: 'h100-80gb', tp: 8, pp: 1, region: 'east', state: 'ready',
        numRunning: tiers.length, numWaiting: 0, outstandingRequests: tiers.length, kvUsedFraction: 0, outstandingTokens: 0,
        pendingTokens: 0, kvCapacityTokens: 1000, requests: () => tiers.map(running), ...extra,
      } as InstanceView);
    }
  }
  return { now: 0, instances, routable: () => instances };
}
const signals = (now: number, pools: PoolStatus[], view: FleetView, arrivals: ArrivalStats[] = []): ScalingSignals => ({ now, intervalS: 15, pools, arrivals, view });
const niwArrival = (requests: number): ArrivalStats => ({ model: 'llama2-70b', region: 'east', tier: 'niw', requests, inputTokens: 1000, predictedOutputTokens: 0 });
const acts = (a: ScaleAction[]) => a.flatMap((x) => (x.kind === 'hold' ? [] : [`${x.kind} ${x.pool} ${x.count}`]));

/** A Chiron scaler past its first (start) tick: the pools are already at or above their start sizes. */
function started(opts: object, pools: PoolStatus[]) {
  const s = createScaler('chiron', { chironStart: { interactive: 0, mixed: 0, batch: 0 }, ...opts }, ctx);
  s.decide(signals(0, pools, fleet({})));
  return s;
}

test('pools are told apart by suffix: plain = interactive, -mixed = mixed, -niw = batch, per model and region', () => {
  const eps = chironEndpoints(OPTS, [pool('east-a-niw', 0), pool('east-a', 1), pool('east-a-mixed', 0), pool('west-a', 1, { region: 'west' })]);
  assert.deepEqual(eps.map((e) => [e.region, e.interactive?.name, e.mixed?.name, e.batch?.name]), [
    ['east', 'east-a', 'east-a-mixed', 'east-a-niw'],
    ['west', 'west-a', undefined, undefined],
  ]);
});

test('IBP counts ready interactive and mixed instances running at least one IW request: 4 of 6 = 0.667 > 0.6 scales both out', () => {
  // interactive: 3 of 4 run IW; mixed: one runs only NIW (not busy), one runs NIW + IW (busy) ⇒ (3 + 1) / 6.
  const view = fleet({
    'east-a': [['iw-f'], ['iw-n', 'iw-f'], ['iw-f'], []],
    'east-a-mixed': [['niw'], ['niw', 'iw-n']],
    'east-a-niw': [['niw'], ['niw']],
  });
  assert.equal(interactiveBackpressure(view, ['east-a', 'east-a-mixed'], 'niw'), 4 / 6);
  const pools = [pool('east-a', 4), pool('east-a-mixed', 2), pool('east-a-niw', 2)];
  const s = started({}, pools);
  assert.deepEqual(acts(s.decide(signals(15, pools, view, [niwArrival(1)]))), ['add east-a 1', 'add east-a-mixed 1']);
});

test('IBP 3 of 6 = 0.5 ≤ 0.6 scales the interactive and mixed pools in, never below the floor of 2', () => {
  const view = fleet({ 'east-a': [['iw-f'], ['iw-f'], [], []], 'east-a-mixed': [['niw'], ['iw-f']] });
  assert.equal(interactiveBackpressure(view, ['east-a', 'east-a-mixed'], 'niw'), 0.5);
  const pools = [pool('east-a', 4), pool('east-a-mixed', 2)];
  const s = started({}, pools);
  assert.deepEqual(acts(s.decide(signals(15, pools, view))), ['remove east-a 1'], 'the mixed pool is at the floor of 2');
  // Exactly Θ is not above it (the code's `ibp > 0.6`): 3 of 5 ⇒ scale in.
  const atTheta = fleet({ 'east-a': [['iw-f'], ['iw-f'], ['iw-f'], [], []] });
  const s2 = started({}, [pool('east-a', 5)]);
  assert.deepEqual(acts(s2.decide(signals(15, [pool('east-a', 5)], atTheta))), ['remove east-a 1']);
});

test('only the pools in chironScaledPools follow IBP, one step per cooldown, none while one is provisioning', () => {
  const view = fleet({ 'east-a': [['iw-f'], ['iw-f']], 'east-a-mixed': [['iw-f']] });
  const pools = [pool('east-a', 2), pool('east-a-mixed', 1)];
  const only = started({ chironScaledPools: ['mixed'] }, pools);
  assert.deepEqual(acts(only.decide(signals(15, pools, view))), ['add east-a-mixed 1']);
  assert.deepEqual(acts(only.decide(signals(20, pools, view))), [], '15 s cooldown');
  assert.deepEqual(acts(only.decide(signals(30, pools, view))), ['add east-a-mixed 1']);
  const prov = [pool('east-a', 2, { provisioning: 1 }), pool('east-a-mixed', 1)];
  const wait = started({}, prov);
  assert.deepEqual(acts(wait.decide(signals(15, prov, view))), ['add east-a-mixed 1'], 'the interactive pool waits for its instance');
  const noWait = started({ chironWaitForProvisioning: false }, prov);
  assert.deepEqual(acts(noWait.decide(signals(15, prov, view))), ['add east-a 1', 'add east-a-mixed 1']);
});

test('the first tick tops the pools up to the paper start sizes 10 / 5 / 5, the code preset to 20 / 10 / 10', () => {
  const pools = [pool('east-a', 4, { minCount: 2 }), pool('east-a-mixed', 0), pool('east-a-niw', 0)];
  const paper = createScaler('chiron', {}, ctx).decide(signals(15, pools, fleet({})));
  assert.deepEqual(acts(paper), ['add east-a 6', 'add east-a-mixed 5', 'add east-a-niw 5']);
  const code = createScaler('chiron', { preset: 'code' }, ctx).decide(signals(15, pools, fleet({})));
  assert.deepEqual(acts(code), ['add east-a 16', 'add east-a-mixed 10', 'add east-a-niw 10']);
  const sized = createScaler('chiron', { chironStart: { interactive: 5, mixed: 3, batch: 3 } }, ctx).decide(signals(15, pools, fleet({})));
  assert.deepEqual(acts(sized), ['add east-a 1', 'add east-a-mixed 3', 'add east-a-niw 3']);
});

test('batch pool: drain time over 24 h ⇒ +1, nothing pending and no NIW ⇒ to zero, NIW to an empty pool ⇒ +1', () => {
  // 100 pending requests, 2,000,000 tokens, 2 instances, 10 s prompt time, 100 tokens/s ⇒ 1,000 + 10,000 s.
  assert.equal(chironDrainS(100, 2_000_000, 2, 10, 100), 11_000);
  assert.equal(chironDrainS(3, 500, 0, 10, 100), 35, 'no instance counts as one');
  // 5,000 pending × 10 s + 8,000,000 / (100 × 2) = 50,000 + 40,000 = 90,000 s > 86,400 s.
  const full = fleet({ 'east-a-niw': [{ outstandingRequests: 2500, outstandingTokens: 4_000_000 }, { outstandingRequests: 2500, outstandingTokens: 4_000_000 }] });
  const b2 = [pool('east-a-niw', 2)];
  assert.deepEqual(acts(started({}, b2).decide(signals(15, b2, full))), ['add east-a-niw 1']);
  // 4,000 pending: 40,000 + 40,000 = 80,000 s ≤ 86,400 s ⇒ nothing.
  const under = fleet({ 'east-a-niw': [{ outstandingRequests: 2000, outstandingTokens: 4_000_000 }, { outstandingRequests: 2000, outstandingTokens: 4_000_000 }] });
  assert.deepEqual(acts(started({}, b2).decide(signals(15, b2, under))), []);
  const idle = fleet({ 'east-a-niw': [[], [], []] });
  const b3 = [pool('east-a-niw', 3)];
  assert.deepEqual(acts(started({}, b3).decide(signals(15, b3, idle))), ['remove east-a-niw 3'], 'scale to zero');
  assert.deepEqual(acts(started({}, b3).decide(signals(15, b3, idle, [niwArrival(2)]))), [], 'NIW still arriving: keep');
  const b0 = [pool('east-a-niw', 0)];
  assert.deepEqual(acts(started({}, b0).decide(signals(15, b0, fleet({}), [niwArrival(1)]))), ['add east-a-niw 1']);
});

test('the other SageServe scalers leave -mixed pools alone (the LT planner never targets them)', () => {
  const pools = [pool('east-a', 2, { minCount: 2 }), pool('east-a-mixed', 0), pool('east-a-niw', 0)];
  for (const policy of ['sageserve-reactive', 'lt-i', 'lt-u', 'lt-ua', 'siloed'] as const) {
    const s = createScaler(policy, {}, ctx);
    const iw: ArrivalStats = { model: 'llama2-70b', region: 'east', tier: 'iw-f', requests: 1, inputTokens: 60_000 * 15, predictedOutputTokens: 0 };
    for (let t = 15; t <= 3600 + 30; t += 15) {
      const a = s.decide(signals(t, pools, fleet({ 'east-a': [{ kvUsedFraction: 0.9 }, { kvUsedFraction: 0.9 }] }), [iw]));
      assert.ok(!a.some((x) => x.kind !== 'hold' && x.pool === 'east-a-mixed'), `${policy} touched the mixed pool at ${t}`);
    }
  }
});
