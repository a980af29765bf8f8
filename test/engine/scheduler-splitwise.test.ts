import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makePerfModel } from '../../src/perf/index.ts';
import { getHardware, getModel } from '../../src/model/catalog.ts';
import type { PerfModel } from '../../src/perf/types.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { outcomes, run, scenarioFor, writeTrace } from '../helpers/sim.ts';

const perf: PerfModel = makePerfModel(
  { kind: 'profile', path: 'data/profiles/splitwise_perf_model.csv', model: 'llama2-70b', hardware: 'h100-80gb', tp: 8 },
  { model: getModel('llama2-70b'), hardware: getHardware('h100-80gb'), tp: 8, pp: 1 },
);
const prefill = (tokens: number, decodes = 0) =>
  perf.stepTimeS({ prefillTokens: tokens, prefillSeqs: 1, prefillAttendTokens: 0, decodeSeqs: decodes, decodeContextTokens: 0 });
const decode = (k: number) => perf.decodeStepCoeffs(k).baseS;

const splitwise = (reqs: { t: number; in: number; out: number }[]) =>
  scenarioFor(writeTrace(reqs), {
    fleet: { pools: [{ name: 'p', model: 'llama2-70b', hardware: 'h100-80gb', tp: 8, count: 1, contextLength: 1000000 }] },
    engine: { scheduler: 'splitwise', maxNumSeqs: 512, maxBatchedTokens: 2048, chunkedPrefill: false, blockTokens: 1, kvCapacityTokens: 210645 },
    routing: { policy: 'pending-tokens' },
  });

test('a prompt arriving during a prefill joins at the next boundary, in a mixed batch priced 1.1 × prompt(Σ prompts + decodes)', () => {
  // A: 100-token prompt, 3 tokens; B arrives 1 ms later (during A's prefill): 200-token prompt, 2 tokens.
  const res = run(splitwise([{ t: 0, in: 100, out: 3 }, { t: 0.001, in: 200, out: 2 }]), 'fast', perf);
  const it1 = prefill(100); // A's prefill alone
  const it2 = prefill(200, 1); // B's prefill + A's first decode: the profile model applies the 1.1 factor
  assert.ok(Math.abs(it2 - 1.1 * prefill(201)) < 1e-12, 'mixed rule');
  const it3 = decode(2); // both decode
  assert.equal(res.log.ttft[0], it1);
  assert.equal(res.log.e2e[0], it1 + it2 + it3);
  assert.equal(res.log.ttft[1], it1 + it2 - 0.001);
  assert.equal(res.log.e2e[1], it1 + it2 + it3 - 0.001);
});

test('a prompt longer than the token limit runs alone and decodes sit that iteration out', () => {
  // A decodes for a while; B's 3,000-token prompt exceeds 2,048 tokens, so its iteration holds B only.
  const res = run(splitwise([{ t: 0, in: 50, out: 40 }, { t: 0.2, in: 3000, out: 2 }]), 'step', perf);
  const it1 = prefill(50);
  // A decodes alone until the boundary after B arrives at 0.2 s.
  let t = it1;
  let gen = 1;
  while (t < 0.2) {
    t += decode(1);
    gen++;
  }
  const bStart = t;
  t += prefill(3000); // B alone (A paused)
  assert.ok(Math.abs(res.log.ttft[1]! - (t - 0.2)) < 1e-12);
  // Then A (paused, first in order) and B decode together until B is done, then A alone.
  t += decode(2);
  gen++;
  while (gen < 40) {
    t += decode(1);
    gen++;
  }
  assert.ok(bStart > 0.2);
  assert.ok(Math.abs(res.log.e2e[0]! - t) < 1e-9, `${res.log.e2e[0]} vs ${t}`);
});

test('the bundled splitwise-baseline scenario is internally consistent on a slice of its workload', () => {
  const { scenario, baseDir } = loadScenario({ file: 'scenarios/splitwise-baseline.yaml', sets: ['workload.transforms.limit=3000'] });
  const fast = simulate(scenario, baseDir, { mode: 'fast' });
  const step = simulate(scenario, baseDir, { mode: 'step' });
  assert.equal(fast.log.n, 3000);
  for (let i = 0; i < 3000; i++) {
    assert.ok(fast.log.isDone(i));
    assert.equal(fast.log.e2e[i], step.log.e2e[i]);
  }
  // Pending-tokens routing spreads requests over all 40 instances.
  const used = new Set(Array.from({ length: 3000 }, (_, i) => fast.log.instance[i]));
  assert.equal(used.size, 40);
});

test('under overload the KV reservation cannot deadlock: every request completes, in both modes alike', () => {
  // KV of 5,000 tokens; 1,000-token prompts with 3,000-token outputs. Two prompts fit an iteration (2,048
  // tokens): after two iterations four prompts hold 4,004 tokens, no decode can reserve its 2,999 more and no
  // fifth prompt fits: without the over-reservation rule the instance would stall with work queued.
  const reqs = Array.from({ length: 10 }, (_, i) => ({ t: i * 0.001, in: 1000, out: 3000 }));
  const sc = splitwise(reqs);
  sc.fleet.pools[0]!.engine = { kvCapacityTokens: 5000 };
  const fast = run(sc, 'fast', perf);
  const step = run(sc, 'step', perf);
  for (let i = 0; i < 10; i++) assert.ok(fast.log.isDone(i), `request ${i} finished`);
  assert.deepEqual(outcomes(fast), outcomes(step));
});
