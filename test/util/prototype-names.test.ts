import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadScenario } from '../../src/scenario/load.ts';
import { networkDelay } from '../../src/sim/simulator.ts';
import { efficiencyFor } from '../../src/perf/efficiency.ts';
import { BUILTIN_CATALOG } from '../../src/model/catalog.ts';
import { thetaOf, sageserveScalingOptions } from '../../src/policy/sageserve/options.ts';
import { parseConfigText } from '../../src/util/config-file.ts';
import { own } from '../../src/util/own.ts';
import { UserError } from '../../src/util/errors.ts';

// User names (pools, regions, tiers, models, devices) key plain objects in many places. `constructor`,
// `toString`… read inherited functions there (NaN step times, string deadlines, wrong network delays, a crash in the
// spot pool), and `__proto__` sets the prototype (a pool lost from the cost totals, a record entry dropped). Such
// names now work like any other, and `__proto__` is refused where it would be a key.

test('own() reads own keys only', () => {
  const o: Record<string, number> = { a: 1 };
  assert.equal(own(o, 'a'), 1);
  for (const k of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) assert.equal(own(o, k), undefined, k);
  assert.equal(own(undefined, 'a'), undefined);
});

test('lookups by a user name do not read inherited members', () => {
  const h100 = BUILTIN_CATALOG.hardware['h100-80gb']!;
  const base = efficiencyFor(h100);
  assert.deepEqual(efficiencyFor({ ...h100, name: 'constructor' }), efficiencyFor({ ...h100, name: 'plain-device' }));
  assert.ok(Object.values(base).every((v) => typeof v === 'number'));
  const o = sageserveScalingOptions.parse({ thetaTps: { default: 300 } });
  assert.equal(thetaOf(o, 'constructor'), 300);
  const delay = networkDelay({ crossRegionS: 0.5, latencyS: { eu: { us: 0.1 } } } as never);
  assert.equal(delay('constructor', 'length'), 0.5);
  assert.equal(delay('__proto__', 'constructor'), 0.5);
  assert.equal(delay('eu', 'us'), 0.1);
});

test('"__proto__" is refused as a key of a config file, of a --set value, and as a pool or region name', () => {
  assert.throws(() => parseConfigText('slo:\n  tiers:\n    __proto__: {ttftS: 1}\n', 's.yaml'), (e: Error) => e.message.startsWith('s.yaml:3: expected keys other than "__proto__"'));
  assert.throws(() => parseConfigText('{"a": {"__proto__": 1}}', 's.json'), (e: Error) => e.message.startsWith('s.json:1: expected keys other than "__proto__"'));
  assert.throws(() => loadScenario({ sets: ['network={crossRegionS: 1, latencyS: {__proto__: {a: 1}}}'] }), (e: Error) => e instanceof UserError && /'__proto__' is not a config key/.test(e.message));
  for (const field of ['name', 'region']) {
    assert.throws(() => loadScenario({ sets: [`fleet.pools.0.${field}=__proto__`] }), (e: Error) => e instanceof UserError && new RegExp(`fleet\\.pools\\[0\\]\\.${field}: expected a ${field} other than "__proto__"`).test(e.message), field);
  }
  // A key named like an inherited member can be set like any other (it read the inherited toString function).
  const sc = loadScenario({ sets: ['slo.tiers.toString.ttftS=5'] }).scenario;
  assert.equal(own(sc.slo.tiers, 'toString')?.ttftS, 5);
});
