import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { catalogModelId, fleetYaml, planToFleet } from '../../../src/optimize/joint-allocation/fleet-export.ts';
import { scenarioSchema } from '../../../src/scenario/schema.ts';
import { simulate } from '../../../src/sim/simulator.ts';

const dep = (model: string, hardware: string, tp = 1, pp = 1) => ({ model, hardware, tp, pp }) as never;

test('problem model names map to catalog ids; unknown ones are kept and listed', () => {
  assert.equal(catalogModelId('llama-3.1-8b'), 'llama3.1-8b');
  assert.equal(catalogModelId('llama-3.2-1b'), 'llama3.2-1b');
  assert.equal(catalogModelId('llama-34b'), 'codellama-34b');
  assert.equal(catalogModelId('llama-3.2-11b-vision'), 'llama3.2-11b-vision');
  assert.equal(catalogModelId('falcon-40b'), 'falcon-40b');
  const { fleet, unmapped } = planToFleet({ deployments: [dep('llama-3.1-8b', 'h100-80gb'), dep('llama-3.1-8b', 'h100-80gb'), dep('falcon-40b', 'a6000', 2)] });
  assert.deepEqual(fleet.pools.map((p) => [p.model, p.hardware, p.tp, p.count]), [['falcon-40b', 'a6000', 2, 1], ['llama3.1-8b', 'h100-80gb', 1, 2]]);
  assert.deepEqual(unmapped, ['falcon-40b']);
});

test('an exported fleet runs in the simulator as a scenario fleet', () => {
  const { fleet } = parse(fleetYaml({ deployments: [dep('llama-3.1-8b', 'h100-80gb'), dep('llama-3.2-3b', 'a100-40gb')] }));
  const sc = scenarioSchema.parse({
    workload: { synthetic: { durationS: 20, arrivals: { kind: 'poisson', ratePerS: 2 }, lengths: { kind: 'lognormal', input: { mu: 5, sigma: 0.5 }, output: { mu: 3, sigma: 0.5 } } } },
    fleet,
  });
  const res = simulate(sc, '.', { mode: 'fast' });
  assert.equal(res.fleet.instances.length, 2);
  assert.ok(res.log.n > 0);
});
