import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

test('each request earns its tier utility when it meets its tier targets; the summary adds them up', () => {
  // One sequence at a time: the first iw-f request waits behind a long NIW prompt and misses its 20 ms TTFT target.
  const trace = writeTrace([
    { t: 0, in: 2000, out: 2, tier: 'niw' },
    { t: 0.0001, in: 10, out: 2, tier: 'iw-f' },
    { t: 1, in: 10, out: 2, tier: 'iw-f' },
  ]);
  const sc = scenarioFor(trace, {
    engine: { maxBatchedTokens: 2048, maxNumSeqs: 1 },
    slo: { ttftS: 10, tpotS: 10, tiers: { 'iw-f': { ttftS: 0.02, utility: 3 }, niw: { ttftS: 86400, utility: 1 } } },
  });
  const s = summarize(run(sc, 'fast'), 0);
  assert.deepEqual(s.tiers!['iw-f']!.slo.utility, { perRequest: 3, earned: 3, possible: 6 });
  assert.deepEqual(s.tiers!.niw!.slo.utility, { perRequest: 1, earned: 1, possible: 1 });
  assert.deepEqual(s.utility, { earned: 4, possible: 7 });
  assert.equal(s.slo.utility, undefined, 'the all-request block does not pretend one utility for every tier');
  const none = summarize(run(scenarioFor(trace), 'fast'), 0);
  assert.equal(none.utility, undefined, 'no utility configured, none reported');
});

test('a per-tier SLO that no request carried is named in the notes (a misspelt tier is not silently ignored)', () => {
  const trace = writeTrace([{ t: 0, in: 10, out: 2, tier: 'iw-f' }]);
  const s = summarize(run(scenarioFor(trace, { slo: { ttftS: 10, tpotS: 10, tiers: { 'IW-F': { ttftS: 0.02 }, 'iw-f': { ttftS: 1 } } } }), 'fast'), 0);
  assert.deepEqual(s.notes.filter((n) => n.startsWith('slo.tiers')), ["slo.tiers 'IW-F': no request carried this tier (tiers seen: iw-f)"]);
  const ok = summarize(run(scenarioFor(trace, { slo: { ttftS: 10, tpotS: 10, tiers: { 'iw-f': { ttftS: 1 } } } }), 'fast'), 0);
  assert.equal(ok.notes.filter((n) => n.startsWith('slo.tiers')).length, 0);
});
