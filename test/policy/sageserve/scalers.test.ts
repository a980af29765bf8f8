import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createScaler } from '../../../src/policy/scaling/registry.ts';
import type { ArrivalStats, PoolStatus, ScaleAction, ScalingSignals } from '../../../src/policy/scaling/types.ts';
import { sageserveScalingOptions } from '../../../src/policy/sageserve/options.ts';
import { HourlyPlanner } from '../../../src/policy/sageserve/planner.ts';
import type { FleetView, InstanceView } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';

const ctx = { rng: new Rng(1) };
const OPTS = sageserveScalingOptions.parse({});

function pool(name: string, ready: number, extra: Partial<PoolStatus> = {}): PoolStatus {
  return {
    name, model: 'llama2-70b', hardware: 'h100-80gb', region: name.split('-')[0]!, tp: 8, pp: 1, provisioning: 0, ready, draining: 0,
    minCount: 1, maxCount: 40, kvUtilization: 0, outstandingRequests: 0, waiting: 0, ...extra,
  };
}
function fleet(pools: { name: string; n: number; kv: number; running?: number }[]): FleetView {
  const instances: InstanceView[] = [];
  for (const p of pools) {
    for (let i = 0; i < p.n; i++) {
      instances.push({
        id: instances.length, pool: p.name, model: 'llama2-70b', hardware: 'h100-80gb', tp: 8, pp: 1, region: p.name.split('-')[0]!,
        state: 'ready', numRunning: i < (p.running ?? 0) ? 1 : 0, numWaiting: 0, outstandingRequests: 0, kvUsedFraction: p.kv,
        outstandingTokens: 0, pendingTokens: 0, kvCapacityTokens: 1000, requests: () => [],
      } as InstanceView);
    }
  }
  return { now: 0, instances, routable: () => instances };
}
const signals = (now: number, pools: PoolStatus[], view: FleetView, arrivals: ArrivalStats[] = []): ScalingSignals => ({ now, intervalS: 15, pools, arrivals, view });
const iwArrival = (tps: number, region = 'east'): ArrivalStats => ({ model: 'llama2-70b', region, tier: 'iw-f', requests: 1, inputTokens: tps * 15, predictedOutputTokens: 0 });
const adds = (a: ScaleAction[]) => a.filter((x) => x.kind === 'add').reduce((s, x) => s + (x.kind === 'add' ? x.count : 0), 0);
const removes = (a: ScaleAction[]) => a.filter((x) => x.kind === 'remove').reduce((s, x) => s + (x.kind === 'remove' ? x.count : 0), 0);

test('the planner waits for an hour of history and only uses arrivals up to the decision time', () => {
  const p = new HourlyPlanner(OPTS);
  const rng = new Rng(3);
  const pools = [pool('east-a', 2)];
  let t = 15;
  for (; t <= 3600; t += 15) {
    if (t === 1800) assert.equal(p.plan(t, pools), null, 'no plan with 30 min of history');
    p.observe(signals(t, pools, fleet([]), [iwArrival(12_000 + 1000 * rng.normal())]));
  }
  const plan = p.plan(3600, pools)!;
  assert.ok(plan, 'a plan at the first hour');
  // ≈ 12k tokens/s at θ = 6000 ⇒ about 2–3 instances; never a number from data after t = 3600.
  assert.ok(plan[0]!.target >= 2 && plan[0]!.target <= 3, `target ${plan[0]!.target}`);
  // Later arrivals (a 10× jump) do not change what was decided at 3600.
  p.observe(signals(3615, pools, fleet([]), [iwArrival(120_000)]));
  assert.equal(p.plans[0]!.target, plan[0]!.target);
  assert.ok(Math.abs(p.observedTps('llama2-70b', 'east', 3600, 300) - 12_000) < 2000);
});

test('LT-I jumps to the hourly target at once; LT-U moves one step per cooldown and only while util > 70 %', () => {
  const run = (policy: 'lt-i' | 'lt-u', kv: number) => {
    const s = createScaler(policy, {}, ctx);
    const pools = [pool('east-a', 1)];
    const out: ScaleAction[][] = [];
    for (let t = 15; t <= 3600 + 60; t += 15) out.push(s.decide(signals(t, pools, fleet([{ name: 'east-a', n: 1, kv }]), [iwArrival(30_000)])));
    return out;
  };
  const ltI = run('lt-i', 0.5);
  const atHour = ltI[3600 / 15 - 1]!;
  assert.equal(adds(atHour), 4, '30k tokens/s at θ = 6000 ⇒ 5 instances: +4 at the hour');
  const ltUcool = run('lt-u', 0.5);
  assert.equal(ltUcool.slice(3600 / 15 - 1).reduce((s, a) => s + adds(a), 0), 0, 'util 50 %: LT-U waits');
  const ltUhot = run('lt-u', 0.8);
  const after = ltUhot.slice(3600 / 15 - 1);
  assert.equal(adds(after[0]!), 1, 'one step at a time');
  assert.ok(after.reduce((s, a) => s + adds(a), 0) <= 4, 'never past the target');
});

test('LT-UA keeps scaling out past the target in the last 20 min when traffic is ≥ 5× the forecast', () => {
  const s = createScaler('lt-ua', {}, ctx);
  const pools = [pool('east-a', 2)];
  let last: ScaleAction[] = [];
  const seen: number[] = [];
  for (let t = 15; t <= 2 * 3600; t += 15) {
    const inLast20 = t > 3600 + 2400;
    last = s.decide(signals(t, pools, fleet([{ name: 'east-a', n: 2, kv: 0.5 }]), [iwArrival(t <= 3600 ? 9000 : inLast20 ? 90_000 : 9000)]));
    if (adds(last) > 0) seen.push(t);
  }
  assert.ok(seen.length > 0 && seen.every((t) => t > 3600 + 2400), `override only in the last 20 min, got ${seen.slice(0, 5)}`);
});

test('Reactive scales out above 70 %, in below 30 %, with a 15 s cooldown per endpoint', () => {
  const s = createScaler('sageserve-reactive', {}, ctx);
  const hot = fleet([{ name: 'east-a', n: 3, kv: 0.9 }]);
  assert.equal(adds(s.decide(signals(15, [pool('east-a', 3)], hot))), 1);
  assert.equal(adds(s.decide(signals(20, [pool('east-a', 3, { provisioning: 1 })], hot))), 0, 'cooldown');
  assert.equal(adds(s.decide(signals(30, [pool('east-a', 3, { provisioning: 1 })], hot))), 1, 'does not wait for provisioning');
  assert.equal(removes(s.decide(signals(60, [pool('east-a', 3)], fleet([{ name: 'east-a', n: 3, kv: 0.1 }])))), 1);
  assert.equal(removes(s.decide(signals(90, [pool('east-a', 1)], fleet([{ name: 'east-a', n: 1, kv: 0.1 }])))), 0, 'keeps the minimum');
});

test('Reactive counts draining instances against maxCount: no scale-out (and no cooldown spent) while they fill the cap', () => {
  const s = createScaler('sageserve-reactive', {}, ctx);
  const hot = fleet([{ name: 'east-a', n: 2, kv: 0.9 }]);
  assert.equal(adds(s.decide(signals(15, [pool('east-a', 2, { draining: 2, maxCount: 4 })], hot))), 0, '2 ready + 2 draining = max 4');
  assert.equal(adds(s.decide(signals(20, [pool('east-a', 2, { draining: 1, maxCount: 4 })], hot))), 1, 'room again once one stopped');
});

test('siloed keeps its NIW pools at their minimum and scales each pool on its own utilisation', () => {
  const s = createScaler('siloed', {}, ctx);
  const a = s.decide(signals(15, [pool('east-a', 3), pool('east-a-niw', 0, { minCount: 0 })], fleet([{ name: 'east-a', n: 3, kv: 0.9 }])));
  assert.deepEqual(a.map((x) => [x.kind, 'pool' in x ? x.pool : '', 'count' in x ? x.count : 0]), [['add', 'east-a', 1], ['add', 'east-a-niw', 2]]);
});

test('Chiron starts the interactive pool at 10, then scales it out while more than 60 % of its instances run IW', () => {
  // The fixture's running requests list nothing, so IBP counts no instance busy: past the start, Chiron scales in.
  // Hand-computed IBP, mixed and batch pools: chiron.test.ts.
  const s = createScaler('chiron', {}, ctx);
  assert.equal(adds(s.decide(signals(15, [pool('east-a', 5)], fleet([{ name: 'east-a', n: 5, kv: 0.1, running: 4 }])))), 5, 'start size 10');
  assert.equal(removes(s.decide(signals(60, [pool('east-a', 10)], fleet([{ name: 'east-a', n: 10, kv: 0.1, running: 9 }])))), 1);
});

test('bad SageServe scaling options are rejected with the key named', () => {
  assert.throws(() => createScaler('lt-ua', { scaleUpAbove: 0.2, scaleDownBelow: 0.3 }, ctx), /scaling\.options\.scaleDownBelow/);
  assert.throws(() => createScaler('lt-i', { bogus: 1 }, ctx), /scaling\.options\.bogus/);
});

test('LT-UA does not act on a large ratio over a tiny forecast while the endpoint has capacity to spare', () => {
  const addsWith = (overrideCapacityGuard: boolean) => {
    const s = createScaler('lt-ua', { overrideCapacityGuard }, ctx);
    const pools = [pool('west-a', 2)];
    let added = 0;
    for (let t = 15; t <= 2 * 3600; t += 15) {
      const a = s.decide(signals(t, pools, fleet([{ name: 'west-a', n: 2, kv: 0.2 }]), [iwArrival(t <= 3600 ? 100 + (t % 60) : 1000, 'west')]));
      if (t > 3600) added += adds(a);
    }
    return added;
  };
  assert.equal(addsWith(true), 0, '10× the forecast, but 1000 tokens/s fit in 2 × θ = 12,000');
  assert.ok(addsWith(false) > 0, 'without the guard the ratio alone scales out');
});

test("LT-U's emergency scale-out (code preset only): one past a reached target above 90 %, given back below 25 %", () => {
  // 27k IW tokens/s at θ = 6000 ⇒ a target of 5, the pool's size: after the hour's plan nothing is left to do.
  const afterHour = (options: object, policy: 'lt-u' | 'lt-ua' = 'lt-u', kvAt: (t: number) => number = () => 0.95) => {
    const s = createScaler(policy, options, ctx);
    const pools = [pool('east-a', 5)];
    const out: ScaleAction[] = [];
    for (let t = 15; t <= 3600 + 600; t += 15) {
      const a = s.decide(signals(t, pools, fleet([{ name: 'east-a', n: 5, kv: kvAt(t) }]), [iwArrival(27_000)]));
      if (t >= 3600) out.push(...a);
    }
    return out;
  };
  const reasons = (a: ScaleAction[]) => a.filter((x) => x.kind !== 'hold').map((x) => `${x.kind}:${x.reason}`);
  assert.deepEqual(reasons(afterHour({ preset: 'code' })), ['add:emergency-past-target'], 'one past the target, then it is owed');
  assert.deepEqual(reasons(afterHour({ preset: 'code' }, 'lt-u', (t) => (t < 3900 ? 0.95 : 0.1))), ['add:emergency-past-target', 'remove:toward-target']);
  assert.deepEqual(reasons(afterHour({ preset: 'code' }, 'lt-u', () => 0.85)), [], 'not above 90 %');
  assert.deepEqual(reasons(afterHour({})), [], "the paper's LT-U stops at the target");
  assert.deepEqual(reasons(afterHour({ preset: 'code', ltuEmergencyAbove: null })), [], 'switched off');
  assert.deepEqual(reasons(afterHour({ ltuEmergencyAbove: 0.9 })), ['add:emergency-past-target'], 'switched on with the paper preset');
  assert.deepEqual(reasons(afterHour({ preset: 'code' }, 'lt-ua')), [], 'LT-UA has the ratio rule instead');
});
