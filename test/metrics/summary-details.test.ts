import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

// Review findings (session 23, mutation audit): these summary details changed no test when broken.

test('the headline attainment by tier counts untiered requests also when the first request of the log is one', () => {
  // Request 0 is untiered and meets the top-level targets; request 1's tier asks for the impossible.
  const trace = writeTrace([{ t: 0, in: 10, out: 5 }, { t: 1, in: 10, out: 5, tier: 'gold' }]);
  const s = summarize(run(scenarioFor(trace, { slo: { ttftS: 10, tpotS: 10, tiers: { gold: { ttftS: 1e-9 } } } }), 'fast'), 0);
  assert.equal(s.tiers!.gold!.slo.attainment, 0);
  assert.equal(s.slo.attainmentByTier, 0.5);
});

test('with endS, throughput counts the tokens of completed requests only', () => {
  const trace = writeTrace(Array.from({ length: 50 }, (_, i) => ({ t: i * 0.1, in: 200, out: 400 })));
  const res = run(scenarioFor(trace, { endS: 3 }), 'fast');
  const s = summarize(res, 0);
  assert.ok(s.requests.unfinished > 0, 'the cut leaves requests unfinished');
  let out = 0;
  let inp = 0;
  for (let i = 0; i < res.log.n; i++) {
    if (!res.log.isDone(i)) continue;
    out += res.log.output[i]!;
    inp += res.log.input[i]!;
  }
  assert.ok(Math.abs(s.throughput.outputTokensPerSecond * res.endS - out) < 1e-6);
  assert.ok(Math.abs(s.throughput.inputTokensPerSecond * res.endS - inp) < 1e-6);
});
