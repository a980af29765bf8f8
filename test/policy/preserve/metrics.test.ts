import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimRequest } from '../../../src/engine/request.ts';
import { RequestLog } from '../../../src/metrics/collector.ts';
import { preserveMetrics } from '../../../src/policy/preserve/metrics.ts';
import type { SimResult } from '../../../src/sim/simulator.ts';

function req(id: number, arrivalS: number, out: number, ttftS: number, e2eS: number, log: RequestLog): void {
  const r = new SimRequest({ id, arrivalS, inputTokens: 10, outputTokens: out }, 'm');
  log.arrive(r);
  r.firstScheduledS = arrivalS;
  r.firstTokenS = arrivalS + ttftS;
  r.finishS = arrivalS + e2eS;
  log.finish(r);
}

test('normalised latency, SLO violations, peak bucket and instance-hours as the paper defines them', () => {
  const log = new RequestLog();
  // normalised latencies: 1/10 = 0.1, 3/10 = 0.3 (violates 0.2), 0.5/5 = 0.1; the 4th request never finishes.
  req(0, 0, 10, 0.2, 1, log);
  req(1, 100, 10, 0.4, 3, log);
  req(2, 400, 5, 0.1, 0.5, log);
  log.arrive(new SimRequest({ id: 3, arrivalS: 450, inputTokens: 10, outputTokens: 5 }, 'm'));
  const inst = (createdS: number, stoppedS: number) => ({ createdS, stoppedS });
  const res = { log, endS: 600, fleet: { instances: [inst(0, -1), inst(300, 450)] } } as unknown as SimResult;
  const m = preserveMetrics(res, { referenceInstances: 2 });
  assert.equal(m.requests, 4);
  assert.equal(m.completed, 3);
  assert.ok(Math.abs(m.meanNormLatencyS - 0.5 / 3) < 1e-12);
  assert.ok(Math.abs(m.meanTtftS - 0.7 / 3) < 1e-12);
  assert.equal(m.sloViolation, 0.5); // one slow + one unfinished of four
  assert.ok(Math.abs(m.peakNormLatencyS - 0.2) < 1e-12); // bucket [0, 300): (0.1 + 0.3)/2; [300, 600): 0.1
  assert.ok(Math.abs(m.instanceHours - 750 / 3600) < 1e-12); // 600 s + 150 s
  assert.ok(Math.abs(m.resourceVsReference - 750 / 1200) < 1e-12);
  // A window clips both the requests and the charged time.
  const late = preserveMetrics(res, { fromS: 300, referenceInstances: 2 });
  assert.equal(late.requests, 2);
  assert.ok(Math.abs(late.instanceHours - 450 / 3600) < 1e-12); // 300 s + 150 s
});
