import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { SimRequest } from '../../../src/engine/request.ts';
import { latencyBlock, RequestLog, sloTargetsText } from '../../../src/metrics/collector.ts';
import { summarize } from '../../../src/metrics/summary.ts';
import { preserveMetrics } from '../../../src/policy/preserve/metrics.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { simulate } from '../../../src/sim/simulator.ts';

/** Logs one finished request: `ttft` and `e2e` seconds after its arrival at 0. */
function finished(log: RequestLog, id: number, outputTokens: number, ttft: number, e2e: number): void {
  const r = new SimRequest({ id, arrivalS: 0, inputTokens: 10, outputTokens }, 'm');
  log.arrive(r);
  r.firstScheduledS = 0;
  r.firstTokenS = ttft;
  r.finishS = e2e;
  log.finish(r);
}

test('slo.normalizedE2eS judges a request by E2E / output tokens alone (PreServe §4); TTFT and TPOT are still reported', () => {
  const log = new RequestLog();
  finished(log, 0, 100, 3, 10); // 0.1 s/token, but TTFT 3 s > 2 s: meets PreServe's SLO only
  finished(log, 1, 10, 0.1, 3); // 0.3 s/token (TPOT 0.32 s): misses both
  finished(log, 2, 10, 0.1, 1); // 0.1 s/token, TPOT 0.1 s: meets both
  const dropped = new SimRequest({ id: 3, arrivalS: 0, inputTokens: 10, outputTokens: 5 }, 'm');
  log.arrive(dropped);
  log.drop(dropped, 'capacity'); // misses every SLO
  const targets = { ttftS: 2, tpotS: 0.2 };
  const paper = latencyBlock(log, { ...targets, normalizedE2eS: 0.2 }, () => true);
  assert.equal(paper.slo.attainment, 2 / 4);
  assert.equal(paper.slo.normalizedE2eS, 0.2);
  assert.equal(paper.slo.ttftAttainment, 2 / 4);
  assert.equal(paper.slo.tpotAttainment, 2 / 4);
  const plain = latencyBlock(log, targets, () => true);
  assert.equal(plain.slo.attainment, 1 / 4);
  assert.equal('normalizedE2eS' in plain.slo, false, 'unset: summary.json unchanged');
  assert.equal(sloTargetsText({ ...targets, normalizedE2eS: 0.2 }), 'E2E/token ≤ 0.2 s');
  assert.equal(sloTargetsText(targets), 'TTFT ≤ 2 s, TPOT ≤ 0.2 s');
});

test('the PreServe scenarios report the paper\'s SLO: summary attainment = 1 − the violations bench/preserve.ts computes', () => {
  for (const name of ['preserve-routing', 'preserve-scaling']) {
    const file = resolve(import.meta.dirname, `../../../scenarios/${name}.yaml`);
    // A short, overloaded slice so that some requests miss 0.2 s/token.
    const sets = ['workload.synthetic.durationS=60', 'workload.synthetic.arrivals.ratePerS=14', 'scaling.policy=none'];
    const { scenario, baseDir } = loadScenario({ file, sets: name === 'preserve-routing' ? sets : ['endS=300', 'scaling.policy=none'] });
    assert.equal(scenario.slo.normalizedE2eS, 0.2, name);
    const res = simulate(scenario, baseDir, { mode: 'fast' });
    const m = preserveMetrics(res);
    const s = summarize(res, 0);
    assert.ok(m.sloViolation > 0 && m.sloViolation < 1, `${name}: ${m.sloViolation}`);
    assert.ok(Math.abs(s.slo.attainment - (1 - m.sloViolation)) < 1e-12, `${name}: ${s.slo.attainment} vs 1 − ${m.sloViolation}`);
  }
});
