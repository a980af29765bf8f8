import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UserError } from '../../src/util/errors.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

test('a scaling interval too short for the run stops with a UserError naming scaling.intervalS instead of hanging', () => {
  const trace = writeTrace([{ t: 0, in: 10, out: 2 }, { t: 5000, in: 10, out: 2 }]);
  // At t ≈ 5000 s, 1e-12 s no longer advances the clock: the scaling tick would fire at one instant for ever.
  const sc = scenarioFor(trace, { scaling: { policy: 'reactive', intervalS: 1e-12 } });
  assert.throws(() => run(sc, 'fast'), (e: unknown) => e instanceof UserError && /scaling\.intervalS/.test(e.message));
  // A sane interval over the same trace runs.
  const ok = run(scenarioFor(trace, { scaling: { policy: 'reactive', intervalS: 1 } }), 'fast');
  assert.equal(ok.log.n, 2);
});
