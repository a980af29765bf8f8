// One simulator benchmark case in its own process (so peak RSS is the case's own). Prints one JSON line.
// Usage: node --import tsx bench/sim-case.ts CASE MODE   (CASE: conv | day | splitwise | busy | busy-long | prefix-off |
// prefix-rr | prefix-aware; MODE: fast | step)
import { loadScenario } from '../src/scenario/load.ts';
import { loadVariant } from '../src/report/variants.ts';
import { simulate } from '../src/sim/simulator.ts';
import { summarize } from '../src/metrics/summary.ts';

const [which = 'conv', mode = 'fast'] = process.argv.slice(2) as [string, 'fast' | 'step'];
const cases: Record<string, () => ReturnType<typeof loadScenario>> = {
  conv: () => loadScenario({}),
  splitwise: () => loadScenario({ file: 'scenarios/splitwise-baseline.yaml' }),
  // One synthetic day: 1,000,000 Poisson arrivals (11.574 req/s) with Azure conv lengths on 40 instances.
  day: () =>
    loadScenario({
      sets: [
        'workload={synthetic: {durationS: 86400, maxRequests: 1000000, arrivals: {kind: poisson, ratePerS: 11.6}, lengths: {kind: empirical, path: ../data/azure-llm/AzureLLMInferenceTrace_conv.csv, format: azure}}}',
        'fleet.pools.0.count=40',
        'fleet.pools.0.model=llama3.1-8b',
        'fleet.pools.0.hardware=a10g',
        'routing.policy=least-requests',
        'output.timelineIntervalS=600',
      ],
    }),
  // Concurrency: 120,000 requests in 20 min on 12 H100s, then the same arrivals with 4× the output tokens (near
  // saturation: large running batches). Same requests, fewer iterations: the time the second takes beyond the first
  // is work per iteration growing with the batch (DESIGN.md, speed).
  busy: () => busyCase(5.3),
  'busy-long': () => busyCase(5.3 + Math.log(4)),
  // Prefix caching: scenarios/prefix-cache.yaml for 20 minutes (≈24k requests of ≈4.5k prompt tokens, 16-token
  // blocks: ≈280 block hashes a request), without the cache, with it, and with the prefix-aware router's index too.
  'prefix-off': () => prefixCase('no-cache'),
  'prefix-rr': () => prefixCase('round-robin'),
  'prefix-aware': () => prefixCase('prefix-aware'),
};

function prefixCase(variant: string): ReturnType<typeof loadScenario> {
  return { ...loadVariant({ file: 'scenarios/prefix-cache.yaml', sets: ['workload.synthetic.durationS=1200'] }, variant), source: 'scenarios/prefix-cache.yaml' };
}

function busyCase(outputMu: number): ReturnType<typeof loadScenario> {
  return loadScenario({
    sets: [
      `workload={synthetic: {durationS: 1200, arrivals: {kind: poisson, ratePerS: 100}, lengths: {kind: lognormal, input: {mu: 6.2, sigma: 0.5, min: 1, max: 8000}, output: {mu: ${outputMu}, sigma: 0.5, min: 1, max: 8000}}}}`,
      'fleet.pools.0.count=12',
      'fleet.pools.0.model=llama3.1-8b',
      'fleet.pools.0.hardware=h100-80gb',
      'routing.policy=least-requests',
    ],
  });
}
const { scenario, baseDir } = cases[which]!();
const t0 = performance.now();
const res = simulate(scenario, baseDir, { mode });
const wall = (performance.now() - t0) / 1000;
const s = summarize(res, wall);
console.log(
  JSON.stringify({
    case: which,
    mode,
    wallS: wall,
    requests: s.requests.total,
    completed: s.requests.completed,
    events: s.sim.events,
    iterations: s.engine.iterations,
    simulatedS: s.sim.simulatedSeconds,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    ttftP99: s.ttft.p99,
    e2eP50: s.e2e.p50,
  }),
);
