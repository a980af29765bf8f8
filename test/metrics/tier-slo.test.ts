import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

test('a per-tier SLO inherits the targets it does not set from the top-level slo, not from the schema defaults', () => {
  const trace = writeTrace([{ t: 0, in: 10, out: 200, tier: 'gold' }]);
  // TPOT here is about 5 ms (linearPerf): above a 1 ms target, below 10 s.
  const strict = { ttftS: 10, tpotS: 0.001 };
  const loose = { ttftS: 10, tpotS: 10 };
  for (const [top, want] of [[strict, 0], [loose, 1]] as const) {
    const sc = scenarioFor(trace, { slo: { ...top, tiers: { gold: { ttftS: 5 } } } });
    assert.deepEqual(sc.slo.tiers.gold, { ttftS: 5 }, 'unset tier targets stay unset after validation');
    const s = summarize(run(sc, 'fast'), 0);
    assert.equal(s.tiers!.gold!.slo.tpotS, top.tpotS);
    assert.equal(s.tiers!.gold!.slo.attainment, want);
  }
  assert.throws(() => scenarioFor(trace, { slo: { tiers: { gold: { ttftS: 0 } } } }), /ttftS/, 'tier targets are still validated');
  assert.throws(() => scenarioFor(trace, { slo: { tiers: { gold: { ttft: 1 } } } }), /ttft/, 'and strict');
});
