import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpotPool, type SpotVm } from '../../../src/policy/sageserve/spot.ts';
import { spotSchema } from '../../../src/scenario/schema.ts';
import { summarize } from '../../../src/metrics/summary.ts';
import { outcomes, run, scenarioFor, writeTrace } from '../../helpers/sim.ts';

const vm = (model: string, region = 'east', hardware = 'h100-80gb', tp = 8): SpotVm => ({ region, hardware, tp, pp: 1, model });
const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

test('a scale-out reclaims a same-model spot instance first, then the oldest other-model one of the same shape, else a new VM', () => {
  const spot = new SpotPool(spotSchema.parse({ sameModelS: 60, otherModelS: 600, revenueUsdPerInstanceHour: 2 }));
  spot.donate(vm('b'), 0); //          oldest other-model candidate
  spot.donate(vm('c'), 100);
  spot.donate(vm('a', 'west'), 0); //  same model, wrong region
  spot.donate(vm('a', 'east', 'a100-80gb'), 0); // same model, wrong hardware
  spot.donate(vm('a'), 200);
  assert.deepEqual(spot.reclaim(vm('a'), 300, { acquireS: 120, loadS: 60 }), { source: 'same-model', leadS: 60 });
  assert.deepEqual(spot.reclaim(vm('a'), 300, { acquireS: 120, loadS: 60 }), { source: 'other-model', leadS: 600 }); // takes b (donated at 0)
  assert.deepEqual(spot.reclaim(vm('a'), 300, { acquireS: 120, loadS: 60 }), { source: 'other-model', leadS: 600 }); // then c
  assert.deepEqual(spot.reclaim(vm('a'), 300, { acquireS: 120, loadS: 60 }), { source: 'new-vm', leadS: 180 });
  assert.equal(spot.size, 2);
  const s = spot.summary(3600);
  assert.equal(s.donations, 5);
  assert.deepEqual(s.reclaims, { 'same-model': 1, 'other-model': 2, 'new-vm': 1 });
  // Provisioning time is booked by the simulator once known (until ready, cancelled or the end), not at the reclaim.
  assert.deepEqual(s.provisioningInstanceHours, { 'same-model': 0, 'other-model': 0, 'new-vm': 0 });
  // Spot time: a 200→300, b 0→300, c 100→300, and the two left (west, a100) 0→3600 each.
  const hours = (100 + 300 + 200 + 3600 + 3600) / 3600;
  close(s.instanceHours, hours, 'spot instance-hours');
  close(s.revenueUsd, 2 * hours, 'revenue');
  close(s.regions['west']!.instanceHours, 1, 'west');
  assert.equal(s.atEnd, 2);
  assert.equal(s.peak, 5);
});

test("a model whose weights are not in the region loads them remotely: the other-model and new-VM paths take remoteWeightsS", () => {
  const spot = new SpotPool(spotSchema.parse({ otherModelS: 600, remoteWeightsS: 7200, weightsRegions: { a: ['west'] } }));
  spot.donate(vm('b'), 0);
  spot.donate(vm('b', 'west'), 0);
  const fresh = { acquireS: 300, loadS: 600 };
  assert.deepEqual(spot.reclaim(vm('a'), 10, fresh), { source: 'other-model', leadS: 7200 }, 'east has no copy of a');
  assert.deepEqual(spot.reclaim(vm('a', 'west'), 10, fresh), { source: 'other-model', leadS: 600 }, 'west has one');
  // A fresh VM is acquired, then loads the weights remotely instead of locally.
  assert.deepEqual(spot.reclaim(vm('a'), 10, fresh), { source: 'new-vm', leadS: 300 + 7200 });
  assert.deepEqual(spot.reclaim(vm('b'), 10, fresh), { source: 'new-vm', leadS: 900 }, 'b is not listed: weights everywhere');
});

// East has a pool of model A (llama3.1-8b) and B (llama3.2-3b) on the same VM shape; B's one instance is in spot
// at t = 0. A new VM takes 120 + 60 = 180 s. Actions: 100 drain A (idle: donated at once); 200 add A (same
// model, ready 260); 300 add A (B's spot instance, ready 900); 400 add A (new VM, ready 580).
function spotScenario(spot: Record<string, unknown> | undefined) {
  return scenarioFor(writeTrace([{ t: 1000, in: 10, out: 1 }]), {
    fleet: {
      pools: [
        { name: 'a', region: 'east', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 },
        { name: 'b', region: 'east', model: 'llama3.2-3b', hardware: 'h100-80gb', count: 0 },
      ],
      provisioning: { vmAcquireS: 120, modelLoadS: 60 },
      ...(spot ? { spot } : {}),
    },
    scaling: {
      policy: 'scheduled',
      actions: [
        { atS: 100, action: 'drain', pool: 'a' },
        { atS: 200, action: 'add', pool: 'a' },
        { atS: 300, action: 'add', pool: 'a' },
        { atS: 400, action: 'add', pool: 'a' },
      ],
    },
  });
}

test('in a run, scale-in donates and scale-outs take the lead time of their source; spot time earns revenue', () => {
  const res = run(spotScenario({ sameModelS: 60, otherModelS: 600, revenueUsdPerInstanceHour: 36, initial: [{ region: 'east', model: 'llama3.2-3b', hardware: 'h100-80gb', count: 1 }] }), 'fast');
  const ready = res.fleet.instances.map((i) => i.readyS);
  assert.deepEqual(ready, [0, 260, 900, 580]);
  assert.equal(res.fleet.instances[0]!.stoppedS, 100);
  const s = res.spot!;
  assert.equal(s.donations, 1);
  assert.deepEqual(s.reclaims, { 'same-model': 1, 'other-model': 1, 'new-vm': 1 });
  // Spot time: A's instance 100 → 200, B's 0 → 300: 400 s = 1/9 h, at $36/h = $4.
  close(s.instanceHours, 400 / 3600, 'spot hours');
  close(s.revenueUsd, 4, 'revenue');
  assert.equal(s.atEnd, 0);
  const summary = summarize(res, 0);
  assert.deepEqual(summary.spot, s);
  assert.equal(Object.keys(summary).at(-1), 'sim');
  // Wasted = provisioning: 60 + 600 + 180 s, one device per instance.
  close(summary.fleet.wastedGpuHours, 840 / 3600, 'wasted');
});

test('spot provisioning instance-hours are the time actually spent provisioning: until ready, until a scale-in cancels it, or until the run ends', () => {
  // A new VM takes 180 s. 100: add (new VM); 130: drain cancels it after 30 s (its VM is donated); 200: add
  // (reclaims that VM: same model, 60 s, ready 260); 950: add (new VM, ready 1130, after the run's end ≈ 1000 s).
  const sc = scenarioFor(writeTrace([{ t: 1000, in: 10, out: 1 }]), {
    fleet: {
      pools: [{ name: 'a', region: 'east', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }],
      provisioning: { vmAcquireS: 120, modelLoadS: 60 },
      spot: { sameModelS: 60 },
    },
    scaling: {
      policy: 'scheduled',
      actions: [
        { atS: 100, action: 'add', pool: 'a' },
        { atS: 130, action: 'drain', pool: 'a' },
        { atS: 200, action: 'add', pool: 'a' },
        { atS: 950, action: 'add', pool: 'a' },
      ],
    },
  });
  const res = run(sc, 'fast');
  assert.deepEqual(res.fleet.instances.map((i) => [i.createdS, i.stoppedS]), [[0, -1], [100, 130], [200, -1], [950, -1]]);
  assert.ok(res.endS > 1000 && res.endS < 1130, `${res.endS}`);
  const s = res.spot!;
  assert.deepEqual(s.reclaims, { 'same-model': 1, 'other-model': 0, 'new-vm': 2 });
  close(s.provisioningInstanceHours['new-vm'], (30 + res.endS - 950) / 3600, 'new-vm: 30 s cancelled + the unfinished one up to the end');
  close(s.provisioningInstanceHours['same-model'], 60 / 3600, 'same-model');
  // The same time as the fleet's wasted (provisioning) hours, one device per instance.
  const total = Object.values(s.provisioningInstanceHours).reduce((a, b) => a + b, 0);
  close(total, summarize(res, 0).fleet.wastedGpuHours, 'wasted');
});

test('without a spot pool every scale-out takes the provisioning delay and the summary has no spot block', () => {
  const res = run(spotScenario(undefined), 'fast');
  assert.deepEqual(res.fleet.instances.map((i) => i.readyS), [0, 380, 480, 580]);
  assert.equal(res.spot, undefined);
  assert.equal(summarize(res, 0).spot, undefined);
  // An empty spot pool with sameModelS = otherModelS = the VM delay changes nothing but the accounts.
  const same = run(spotScenario({ sameModelS: 180, otherModelS: 180 }), 'fast');
  assert.deepEqual(outcomes(same), outcomes(res));
  assert.deepEqual(same.fleet.instances.map((i) => i.readyS), [0, 380, 480, 580]);
});

test('an initial spot entry with a model or hardware the catalog lacks is a ConfigError with the path', () => {
  const bad = spotScenario({ initial: [{ region: 'east', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }, { region: 'east', model: 'lama', hardware: 'h100-80gb', count: 1 }] });
  assert.throws(() => run(bad, 'fast'), (e: Error) => e.name === 'ConfigError' && /fleet\.spot\.initial\[1\]\.model/.test(e.message));
  assert.throws(() => spotSchema.parse({ initial: [{ model: 'a', hardware: 'b', count: -1 }] }));
});
