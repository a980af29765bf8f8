import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run, scenarioFor, writeTrace } from '../../helpers/sim.ts';

// One instance, one sequence at a time, 100 KV blocks (1,600 tokens): a running 1,000-token IW request keeps the
// endpoint above 60 %, so the SageServe router holds the NIW request that arrives at 0.01 s. At the 1.5 s
// periodic signal it is 1.49 s old (≥ the 1 s promotion age used here instead of 10 h) and released at once.
// Queued behind the running IW request are three IW requests that arrived before it.
function scenario(promoteInQueue: boolean) {
  const iw = (t: number) => ({ t, in: 1000, out: 400, tier: 'iw-n', deadline: t + 60 });
  return scenarioFor(writeTrace([iw(0), { t: 0.01, in: 100, out: 5, tier: 'niw', deadline: 86400 }, iw(0.02), iw(0.03), iw(0.04)]), {
    engine: { kvBlocks: 100, maxNumSeqs: 1, maxBatchedTokens: 2048 },
    routing: { policy: 'sageserve', options: { niwPromoteAfterS: 1, niwSignalIntervalS: 0.5 } },
    scheduling: { policy: 'fcfs', options: { promoteAfterS: promoteInQueue ? 1 : null } },
    output: { timelineIntervalS: 0.5 },
    maxDeferS: 100,
  });
}

test('a NIW request released after the promotion age runs before the IW requests already waiting on the instance', () => {
  for (const mode of ['fast', 'step'] as const) {
    const res = run(scenario(true), mode);
    const first = (i: number) => res.log.arrival[i]! + res.log.ttft[i]!;
    // The first IW request finishes its 400 tokens after about 2 s; the NIW request is next.
    assert.ok(first(1) > 1.5, `${mode}: NIW was held until its promotion age (first token ${first(1)})`);
    assert.ok(first(1) < first(2) && first(2) < first(3) && first(3) < first(4), `${mode}: NIW before the waiting IW requests`);
    assert.ok(first(1) > first(0));
  }
  // Released from the hold but not promoted in the queue: it waits behind all three.
  const res = run(scenario(false), 'fast');
  const first = (i: number) => res.log.arrival[i]! + res.log.ttft[i]!;
  assert.ok(first(1) > first(4), `without promotion NIW is served last (${first(1)} vs ${first(4)})`);
});
