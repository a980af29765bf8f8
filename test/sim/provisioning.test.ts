import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadScenario } from '../../src/scenario/load.ts';
import { UserError } from '../../src/util/errors.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

const trace = writeTrace([{ t: 0, in: 10, out: 2 }, { t: 2000, in: 10, out: 2 }]);
const leads = (res: ReturnType<typeof run>, pool: string) => res.fleet.instances.filter((i) => i.pool === pool && i.createdS > 0).map((i) => i.readyS - i.createdS);

test("a pool's own provisioning times override fleet.provisioning's, key by key", () => {
  const sc = scenarioFor(trace, {
    fleet: {
      pools: [
        { name: 'a', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 },
        { name: 'b', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, provisioning: { modelLoadS: 300 } },
      ],
      provisioning: { vmAcquireS: 100, modelLoadS: 50 },
    },
    scaling: { policy: 'scheduled', actions: [{ atS: 10, action: 'add', pool: 'a' }, { atS: 10, action: 'add', pool: 'b' }] },
  });
  const res = run(sc, 'fast');
  assert.deepEqual(leads(res, 'a'), [150]);
  assert.deepEqual(leads(res, 'b'), [400]);
});

test('provisioning times given as { median, max } are drawn per instance started, the same for the same seed, never above max', () => {
  const sc = (seed: number) =>
    scenarioFor(trace, {
      seed,
      fleet: { pools: [{ name: 'a', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }], provisioning: { vmAcquireS: { median: 120, max: 600 }, modelLoadS: 60 } },
      scaling: { policy: 'scheduled', actions: Array.from({ length: 20 }, (_, i) => ({ atS: 10 + i, action: 'add', pool: 'a' })) },
    });
  const one = leads(run(sc(1), 'fast'), 'a');
  assert.equal(one.length, 20);
  assert.ok(new Set(one).size > 10, `drawn, not fixed: ${one}`);
  for (const l of one) assert.ok(l > 60 && l <= 660, `${l}`);
  assert.deepEqual(leads(run(sc(1), 'fast'), 'a'), one);
  assert.notDeepEqual(leads(run(sc(2), 'fast'), 'a'), one);
});

test('a bad provisioning time is refused naming its field', () => {
  for (const [set, field] of [
    ['fleet.pools.0.provisioning={modelLoadS: -1}', /fleet\.pools\[0\]\.provisioning\.modelLoadS/],
    ['fleet.provisioning.vmAcquireS={median: 300, max: 100}', /fleet\.provisioning\.vmAcquireS/],
    ['fleet.pools.0.provisioning={load: 1}', /fleet\.pools\[0\]\.provisioning/],
  ] as const) {
    assert.throws(() => loadScenario({ file: 'scenarios/default.yaml', sets: [set] }), (e: Error) => e instanceof UserError && field.test(e.message), set);
  }
});
