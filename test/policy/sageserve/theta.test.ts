import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicyOptions } from '../../../src/policy/options.ts';
import { sageserveScalingOptions, thetaOf } from '../../../src/policy/sageserve/options.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { resolvedScaling, selectedOptions } from '../../../src/scenario/schema.ts';

const scaling = (o: unknown) => parsePolicyOptions(sageserveScalingOptions, o, ['scaling', 'options']);

test('θ of one model leaves every other model at its default (a map is merged over the defaults)', () => {
  const o = scaling({ thetaTps: { 'llama2-70b': 7500 } });
  assert.deepEqual(
    ['llama2-70b', 'bloom-176b', 'llama3.1-8b', 'llama3.2-3b'].map((m) => thetaOf(o, m)),
    [7500, 2500, 20000, 20000],
  );
  // `default` changes only the models not named (here or in the defaults).
  const d = scaling({ thetaTps: { default: 2000 } });
  assert.deepEqual(['llama2-70b', 'bloom-176b', 'm'].map((m) => thetaOf(d, m)), [6000, 2500, 2000]);
  assert.deepEqual(scaling({}).thetaTps, { 'llama2-70b': 6000, 'bloom-176b': 2500, default: 20000 });
  assert.throws(() => scaling({ thetaTps: { 'bloom-176b': 0 } }), /scaling\.options\.thetaTps\.bloom-176b: expected > 0/);
});

test('θ set through a scenario flag keeps the other models’ defaults', () => {
  const { scenario } = loadScenario({ file: 'scenarios/sageserve-peak-day.yaml', sets: ['scaling.options.thetaTps={llama2-70b: 7500}'] });
  const o = scaling(selectedOptions(resolvedScaling(scenario)));
  assert.deepEqual([thetaOf(o, 'llama2-70b'), thetaOf(o, 'bloom-176b'), thetaOf(o, 'llama3.1-8b')], [7500, 2500, 20000]);
});
