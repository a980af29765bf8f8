import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { SCALING_VARIANTS, scalingRowExtra } from '../../../bench/preserve.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { selectedOptions } from '../../../src/scenario/schema.ts';

const SCALING = resolve(import.meta.dirname, '../../../scenarios/preserve-scaling.yaml');

// docs/fidelity/preserve.md runs the RQ2 sensitivity rows as `bench/preserve.ts scaling --seeds 3 --set
// scaling.options.<key>=…`. Since the scenario loader checks the selected scaler's options, those PreServe options
// made the static/reactive rows fail with a stack trace after the preserve rows were printed.
test('bench scaling: a PreServe scaler option given with --set loads on every row, and reaches the preserve rows only', () => {
  const extra = ['scaling.options.scaleDownWhileStarting=true', 'scaling.options.scaleDownDivisor=one', 'fleet.provisioning.modelLoadS=30'];
  let preserveRows = 0;
  for (const [name, variant] of SCALING_VARIANTS) {
    const sets = [...variant, 'seed=1', ...scalingRowExtra(variant, extra)];
    const { scenario } = loadScenario({ file: SCALING, sets });
    const opts = selectedOptions(scenario.scaling);
    if (scenario.scaling.policy === 'preserve') {
      preserveRows++;
      assert.equal(opts.scaleDownWhileStarting, true, name);
      assert.equal(opts.scaleDownDivisor, 'one', name);
    } else {
      assert.equal(opts.scaleDownWhileStarting, undefined, name);
    }
    // Options that are not the scaler's still apply to every row.
    assert.equal(scenario.fleet.provisioning.modelLoadS, 30, name);
  }
  assert.equal(preserveRows, 3);
});
