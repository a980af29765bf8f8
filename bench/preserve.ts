/**
 * PreServe (seed 001) benchmarks and experiments. `node --import tsx bench/preserve.ts [mode] [args]`:
 * - `overhead` (default): time per routing decision of each router and per anticipator update, as a share of
 *   the mean request latency (paper RQ4: 0.23 %), on the routing scenario.
 * - `routing [--seeds N] [--set PATH=VALUE ...]`: RQ3 table (preserve vs llumnix, round-robin, least-loaded) ×
 *   predictors (oracle, noisy, learned).
 * - `ablation [--seeds N] [--set ...]`: the preserve router's knobs (β = 0 removes the anticipator's penalty).
 * - `scaling [--seeds N] [--set ...]`: RQ2 table (preserve vs static 8, reactive) over days 3–4.
 * - `probe [scenario.yaml]`: the capacity probe (μ_p, μ_d, μ_pd per instance).
 * Wall-clock timings go to stderr-free stdout tables; nothing here is a test.
 */
import { performance } from 'node:perf_hooks';
import { LoadAnticipator, peakWith } from '../src/policy/preserve/anticipator.ts';
import { probeCapacity } from '../src/policy/preserve/capacity-probe.ts';
import { preserveMetrics, type MetricsWindow, type PreserveMetrics } from '../src/policy/preserve/metrics.ts';
import { lengthPredictors } from '../src/forecast/length/registry.ts';
import { routers, type RouterName } from '../src/policy/routing/registry.ts';
import type { FleetView, RequestView } from '../src/policy/types.ts';
import { loadScenario } from '../src/scenario/load.ts';
import { simulate } from '../src/sim/simulator.ts';
import { Rng } from '../src/util/rng.ts';

const ROUTING = 'scenarios/preserve-routing.yaml';
const SCALING = 'scenarios/preserve-scaling.yaml';

function run(file: string, sets: string[], w: MetricsWindow): PreserveMetrics & { wallS: number } {
  const { scenario, baseDir } = loadScenario({ file, sets });
  const t0 = performance.now();
  const res = simulate(scenario, baseDir, { mode: 'fast' });
  const wallS = (performance.now() - t0) / 1000;
  return { ...preserveMetrics(res, w), wallS };
}

const f = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : '-');
const pct = (v: number) => `${(100 * v).toFixed(2)}%`;

function routingTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 3);
  const extra = sets(args);
  // [label, overrides, reads predictions]
  const rows: [string, string[], boolean][] = [
    ['preserve', ['routing.policy=preserve'], true],
    ['preserve L_d=all', ['routing.policy=preserve', 'routing.options.decodeOf=all'], true],
    ['llumnix', ['routing.policy=llumnix'], false],
    ['least-loaded', ['routing.policy=least-loaded'], false],
    ['round-robin', ['routing.policy=round-robin'], false],
  ];
  console.log(`routing: ${ROUTING} ${extra.join(' ')}, seeds 1..${seeds}, means over seeds`);
  console.log('predictor | router           | mean TTFT s | p99 norm s | mean norm s | SLO viol. | preempt/run');
  for (const pred of ['oracle', 'noisy', 'learned']) {
    for (const [label, s, reads] of rows) {
      if (!reads && pred !== 'oracle') continue; // baselines do not read predictions
      const ms: PreserveMetrics[] = [];
      for (let seed = 1; seed <= seeds; seed++) ms.push(run(ROUTING, [...s, `prediction.length=${pred}`, `seed=${seed}`, ...extra], {}));
      const avg = (k: keyof PreserveMetrics) => ms.reduce((a, m) => a + (m[k] as number), 0) / ms.length;
      console.log(`${pred.padEnd(9)} | ${label.padEnd(16)} | ${f(avg('meanTtftS')).padStart(11)} | ${f(avg('p99NormLatencyS')).padStart(10)} | ${f(avg('meanNormLatencyS')).padStart(11)} | ${pct(avg('sloViolation')).padStart(9)} | ${f(avg('preemptions'), 0)}`);
    }
  }
}

/** The router's own knobs at one load: what the anticipator's memory penalty is worth. */
function ablationTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 5);
  const extra = sets(args);
  const rows: [string, string[]][] = [
    ['default (β = 1)', []],
    ['β = 0 (no anticipator penalty)', ['routing.options.beta=0']],
    ['β = 5', ['routing.options.beta=5']],
    ['admission = defer (1-s retries)', ['routing.options.admission=defer', 'output.timelineIntervalS=1']],
    ['anticipator maps waiting requests', ['routing.options.anticipator.includeWaiting=true']],
  ];
  console.log(`preserve router ablation: ${ROUTING} ${extra.join(' ')}, seeds 1..${seeds}, means over seeds`);
  console.log('variant                            | mean TTFT s | p99 norm s | SLO viol.');
  for (const [label, s] of rows) {
    const ms: PreserveMetrics[] = [];
    for (let seed = 1; seed <= seeds; seed++) ms.push(run(ROUTING, ['routing.policy=preserve', ...s, `seed=${seed}`, ...extra], {}));
    const avg = (k: keyof PreserveMetrics) => ms.reduce((a, m) => a + (m[k] as number), 0) / ms.length;
    console.log(`${label.padEnd(34)} | ${f(avg('meanTtftS')).padStart(11)} | ${f(avg('p99NormLatencyS')).padStart(10)} | ${pct(avg('sloViolation')).padStart(9)}`);
  }
}

function scalingTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 1);
  const extra = sets(args);
  const w: MetricsWindow = { fromS: 7200, toS: 14400, referenceInstances: 8 };
  const variants: [string, string[]][] = [
    ['preserve', []],
    ['preserve (noisy)', ['prediction.length=noisy']],
    ['preserve (learned)', ['prediction.length=learned']],
    ['static 8', ['scaling.policy=none', 'scaling.options={}']],
    ['reactive', ['scaling.policy=reactive', 'scaling.options={}', 'scaling.downCooldownS=150']],
    ['llumnix-like', ['routing.policy=llumnix', 'scaling.policy=reactive', 'scaling.options={}', 'scaling.downCooldownS=150']],
  ];
  console.log(`scaling: ${SCALING} ${extra.join(' ')}, days 3–4 (7,200–14,400 s), seeds 1..${seeds}, means over seeds`);
  console.log('variant            | instance-h | vs static 8 | peak norm s | p99 norm s | mean TTFT s | SLO viol. | wall s');
  for (const [name, s] of variants) {
    const ms: (PreserveMetrics & { wallS: number })[] = [];
    for (let seed = 1; seed <= seeds; seed++) ms.push(run(SCALING, [...s, `seed=${seed}`, ...extra], w));
    const m = Object.fromEntries(Object.keys(ms[0]!).map((k) => [k, ms.reduce((a, x) => a + (x[k as keyof typeof x] as number), 0) / ms.length])) as unknown as PreserveMetrics & { wallS: number };
    console.log(`${name.padEnd(18)} | ${f(m.instanceHours, 2).padStart(10)} | ${pct(m.resourceVsReference).padStart(11)} | ${f(m.peakNormLatencyS).padStart(11)} | ${f(m.p99NormLatencyS).padStart(10)} | ${f(m.meanTtftS).padStart(11)} | ${pct(m.sloViolation).padStart(9)} | ${f(m.wallS, 1)}`);
  }
}

/** Per-decision router cost on real fleet states: the routing scenario is run with a timing wrapper. */
function overhead(): void {
  const { scenario, baseDir } = loadScenario({ file: ROUTING, sets: [] });
  console.log(`overhead: ${ROUTING} (4 instances, 10.5 req/s), fast engine`);
  console.log('router        | decisions | µs/decision | share of mean E2E');
  for (const name of ['preserve', 'llumnix', 'least-loaded', 'round-robin'] as RouterName[]) {
    const entry = routers[name];
    const orig = entry.make;
    let ns = 0;
    let n = 0;
    // Time only the router's own work: wrap `route` on the instance the simulator creates.
    (entry as { make: unknown }).make = (o: never, c: never) => {
      const r = orig(o, c);
      return {
        name: r.name,
        route(req: RequestView, view: FleetView) {
          const t0 = performance.now();
          const d = r.route(req, view);
          ns += (performance.now() - t0) * 1e6;
          n++;
          return d;
        },
      };
    };
    try {
      const res = simulate({ ...scenario, routing: { policy: name, options: {}, perPolicy: {} } }, baseDir, { mode: 'fast' });
      const m = preserveMetrics(res);
      const us = ns / n / 1000;
      console.log(`${name.padEnd(13)} | ${String(n).padStart(9)} | ${us.toFixed(2).padStart(11)} | ${((us * 1e-6) / m.meanE2eS * 100).toExponential(2)} %`);
    } finally {
      (entry as { make: unknown }).make = orig;
    }
  }
  // Anticipator update alone, on synthetic instances of 32 / 128 / 256 running requests.
  console.log('\nanticipator   | requests | µs/update (project + peakWith)');
  const rng = new Rng(1);
  for (const k of [32, 128, 256]) {
    const reqs = Array.from({ length: k }, (_, i) => ({
      id: i, arrivalS: 0, inputTokens: 1 + rng.int(500), predictedOutputTokens: 1 + rng.int(600), model: 'm', tier: '', region: '', app: '',
      deadlineS: Infinity, status: 'running', generated: 1 + rng.int(400), kvTokens: 0, prefillTarget: 1, prefilled: 1,
    }));
    const ant = new LoadAnticipator();
    const iters = 20000;
    let sink = 0;
    const t0 = performance.now();
    for (let i = 0; i < iters; i++) sink += peakWith(ant.projectRequests(reqs, 38000), 100, 200);
    const us = ((performance.now() - t0) * 1000) / iters;
    console.log(`${'100 steps'.padEnd(13)} | ${String(k).padStart(8)} | ${us.toFixed(2)}${sink < 0 ? '!' : ''}`);
  }
  // Output-length prediction per request (the paper's largest overhead: 35.9 ms for DistilBERT).
  console.log('\nlength predictor | µs/prediction (after 2,000 observations)');
  for (const name of ['noisy-oracle', 'online-regressor', 'key-quantiles'] as const) {
    const p = lengthPredictors[name](1);
    const reqs = Array.from({ length: 4000 }, (_, i) => ({ id: i, arrivalS: i, inputTokens: 1 + rng.int(900), outputTokens: 1 + rng.int(600) }));
    for (let i = 0; i < 2000; i++) p.observe(reqs[i]!);
    let sink = 0;
    const t0 = performance.now();
    for (let i = 2000; i < 4000; i++) sink += p.predict(reqs[i]!).point;
    const us = ((performance.now() - t0) * 1000) / 2000;
    console.log(`${name.padEnd(16)} | ${us.toFixed(2)}${sink < 0 ? '!' : ''}`);
  }
}

function probe(args: string[]): void {
  const file = args.find((a) => !a.startsWith('--')) ?? ROUTING;
  const { scenario, baseDir } = loadScenario({ file, sets: sets(args) });
  const p = probeCapacity(scenario, baseDir);
  console.log(`capacity probe on ${file} (one instance, SLO 0.2 s/token, ≥ 99% attainment)`);
  for (const t of p.trials) console.log(`  ${t.ratePerS.toFixed(3)} req/s → ${(100 * t.attainment).toFixed(2)}%`);
  console.log(`ratePerS ${p.ratePerS.toFixed(3)}  muPrefill ${p.muPrefill.toFixed(1)}  muDecode ${p.muDecode.toFixed(1)}  muTotal ${p.muTotal.toFixed(1)} tokens/s`);
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}
function sets(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === '--set') out.push(args[++i]!);
  return out;
}

const [mode = 'overhead', ...rest] = process.argv.slice(2);
switch (mode) {
  case 'overhead':
    overhead();
    break;
  case 'routing':
    routingTable(rest);
    break;
  case 'scaling':
    scalingTable(rest);
    break;
  case 'ablation':
    ablationTable(rest);
    break;
  case 'probe':
    probe(rest);
    break;
  default:
    console.error(`unknown mode ${mode}; expected overhead | routing | ablation | scaling | probe`);
    process.exitCode = 2;
}
