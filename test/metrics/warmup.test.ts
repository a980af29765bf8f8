import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/metrics/summary.ts';
import { digestRun } from '../../src/report/digest.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

// Requests 0–9 arrive in a burst (long queues), 10–19 alone: a 5 s warm-up leaves out exactly the burst.
const burst = Array.from({ length: 10 }, (_, i) => ({ t: i * 0.01, in: 2000, out: 200, tier: 'gold' }));
const calm = Array.from({ length: 10 }, (_, i) => ({ t: 100 + i * 20, in: 2000, out: 200 }));
const trace = writeTrace([...burst, ...calm]);

test('output.warmupS leaves the requests arriving before it out of every request figure, not out of the cost', () => {
  const whole = run(scenarioFor(trace), 'fast');
  const res = run(scenarioFor(trace, { output: { warmupS: 5 } }), 'fast');
  const all = summarize(whole, 0);
  const s = summarize(res, 0);
  assert.equal(s.requests.total, 10);
  assert.equal(s.requests.completed, 10);
  assert.equal(s.requests.warmup, 10);
  assert.equal(all.requests.warmup, undefined);
  // The measured requests are exactly the calm ones: the same TTFTs as those in the whole run.
  const calmTtft = Array.from({ length: 10 }, (_, k) => whole.log.ttft[10 + k]!);
  assert.equal(s.ttft.p99, Math.max(...calmTtft));
  assert.ok(all.ttft.p99 > s.ttft.p99, 'the burst queued, so the whole run has the worse tail');
  // A tier only the warm-up carried is left with no request.
  assert.equal(s.tiers!.gold!.requests.total, 0);
  // Throughput over the measured span; the cost is the whole run's.
  assert.ok(Math.abs(s.throughput.requestsPerSecond - 10 / (res.endS - 5)) < 1e-12);
  assert.equal(s.fleet.costUsd, all.fleet.costUsd);
  // report.html's CDFs leave them out too.
  const d = digestRun(s, res.log, [], undefined, 5);
  assert.equal(d.cdf.ttft.at(-1)!.valueS, Math.max(...calmTtft));
});

test('a warm-up past the last arrival says that nothing is left to measure', () => {
  const s = summarize(run(scenarioFor(trace, { output: { warmupS: 1000 } }), 'fast'), 0);
  assert.equal(s.requests.total, 0);
  assert.ok(s.notes.some((n) => n.includes('output.warmupS = 1000 s leaves no request')), s.notes.join('\n'));
});
