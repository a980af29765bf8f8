import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { loadComparison, parseSweepFlag } from '../../src/report/variants.ts';
import { describeTarget } from '../../src/report/table.ts';
import { UserError } from '../../src/util/errors.ts';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';

test('--sweep PATH=V1,V2: one override and one label per value; a value with commas stays whole in { } or quotes', () => {
  assert.deepEqual(parseSweepFlag('fleet.pools.0.count=2,4,8'), {
    overrides: ['fleet.pools.0.count=2', 'fleet.pools.0.count=4', 'fleet.pools.0.count=8'],
    labels: ['count-2', 'count-4', 'count-8'],
  });
  const engine = parseSweepFlag('fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false},{maxNumSeqs: 8}');
  assert.deepEqual(engine.overrides, ['fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false}', 'fleet.pools.0.engine={maxNumSeqs: 8}']);
  for (const l of engine.labels) assert.match(l, /^engine-[A-Za-z0-9_.+-]+$/);
  assert.deepEqual(parseSweepFlag('routing.policy="jsq",round-robin').labels, ['policy-jsq', 'policy-round-robin']);
  for (const bad of ['count', '=1,2', 'a..b=1', 'fleet.pools.0.count=', 'fleet.pools.0.count=2,2', 'routing.options={a: 1']) {
    assert.throws(() => parseSweepFlag(bad), UserError, bad);
  }
});

test("sweeps multiply the scenario's variants (every combination, the sweep's override last) or the base scenario", () => {
  const setup = loadComparison({ file: 'scenarios/compare-routers.yaml', sweeps: ['fleet.pools.0.count=1,2'], sets: ['endS=10'] });
  assert.deepEqual(
    setup.variants.map((v) => v.name),
    ['round-robin.count-1', 'round-robin.count-2', 'least-requests.count-1', 'least-requests.count-2', 'jsq.count-1', 'jsq.count-2'],
  );
  const jsq2 = setup.variants[5]!.scenario;
  assert.equal(jsq2.routing.policy, 'jsq');
  assert.equal(jsq2.fleet.pools[0]!.count, 2);
  const two = loadComparison({ file: 'scenarios/default.yaml', sweeps: ['fleet.pools.0.count=1,2', 'routing.policy=jsq,round-robin'], sets: ['endS=10'] });
  assert.deepEqual(two.variants.map((v) => v.name), ['count-1.policy-jsq', 'count-1.policy-round-robin', 'count-2.policy-jsq', 'count-2.policy-round-robin']);
  // A bad value is named with its variant.
  assert.throws(() => loadComparison({ file: 'scenarios/default.yaml', sweeps: ['fleet.pools.0.count=1,-2'] }), /variant 'count--2' \(fleet\.pools\.0\.count=-2\)/);
});

test('describeTarget: the cheapest variant at or above the target (the better attainment on equal cost); else the closest', () => {
  const names = ['a', 'b', 'c', 'd'];
  const points = [
    { costUsd: 1, attainment: 0.9 },
    { costUsd: 3, attainment: 0.995 },
    { costUsd: 2, attainment: 0.99 },
    { costUsd: 2, attainment: 0.992 },
  ];
  assert.equal(describeTarget(names, points, 0.99), 'cheapest with SLO attainment ≥ 99.00%: d ($2.00, 99.20%)');
  assert.equal(describeTarget(names, points, 0.995), 'cheapest with SLO attainment ≥ 99.50%: b ($3.00, 99.50%)');
  assert.equal(describeTarget(names, points, 0.999), 'no variant reaches SLO attainment ≥ 99.90% (closest: b, 99.50%)');
});

test('compare --sweep --target prints the cheapest variant meeting the target; a bad --target is refused in one line', () => {
  const r = runCli(['compare', '--scenario', 'scenarios/default.yaml', '--sweep', 'fleet.pools.0.count=1,2', '--target', '50%', '--set', 'endS=60', '--workers', '0', '--out', '/tmp/llmfleet-test-sweep']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^count-1 /m);
  assert.match(r.stdout, /^count-2 /m);
  assert.match(r.stdout, /^cheapest with SLO attainment ≥ 50\.00%: count-1 \(\$/m);
  assert.deepEqual(JSON.parse(readFileSync('/tmp/llmfleet-test-sweep/comparison.json', 'utf8')).target, { attainment: 0.5, meets: true, variant: 'count-1' });
  assert.match(readFileSync('/tmp/llmfleet-test-sweep/report.html', 'utf8'), /<strong>Cheapest with SLO attainment ≥ 50\.00%: count-1 \(\$/);
  for (const bad of ['0', '1.5', '150%', 'x', '%']) assert.match(refusedInOneLine(runCli(['compare', '--target', bad]), bad), /--target: expected an SLO attainment in \(0, 1\]/);
});
