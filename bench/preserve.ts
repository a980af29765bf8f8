/**
 * PreServe (seed 001) benchmarks and experiments. `node --import tsx bench/preserve.ts [mode] [args]`:
 * - `overhead` (default): time per routing decision of each router and per anticipator update, as a share of
 *   the mean request latency (paper RQ4: 0.23 %), on the routing scenario.
 * - `routing [--seeds N] [--set PATH=VALUE ...]`: RQ3 table (preserve vs llumnix, round-robin, least-loaded) ×
 *   predictors (oracle, noisy, learned).
 * - `ablation [--seeds N] [--set ...]`: the preserve router's knobs (β = 0 removes the anticipator's penalty).
 * - `scaling [--seeds N] [--set ...]`: RQ2 table (preserve vs static 8, reactive) over days 3–4.
 * - `scaling-trace [--seeds N | --seed-list 1,4,...] [--windows] [--set ...]`: the preserve scaler's decisions on the
 *   scaling scenario, per seed: actions by reason, scale-outs cancelled while provisioning, the window with the
 *   most SLO violations, and with `--windows` one row per 150-s window of days 3–4 (ready/provisioning counts,
 *   adds/removes by rule, arrivals' mean normalised latency and SLO violations).
 * - `probe [scenario.yaml]`: the capacity probe (μ_p, μ_d, μ_pd per instance).
 * - `diagnose [--set ...]`: on the routing scenario with the preserve router, how often its choice differs from
 *   the same score with a 1-iteration horizon (no anticipation), from the Llumnix-like rule, and how far the
 *   100-iteration projection rises above current KV use.
 * - `paired [--a ROUTER] [--b ROUTER] [--rates ...] [--cvs ...] [--seeds N] [--set ...]`: per-seed paired
 *   differences a − b (same arrivals and lengths) of p99 normalised latency, SLO violations and mean TTFT, with
 *   ±2 standard errors and the number of seeds on which a is better.
 * - `balance [--routers a,b,...] [--seeds N] [--set ...]`: how evenly each router spreads memory, sampled at every
 *   routing decision: mean max − min across instances of KV use and of queued requests, and the share of
 *   decisions at which some instance has a queue while another has none.
 * - `bimodal-trace PATH`: writes a constructed length mix (15 % outputs of 800–1,600 tokens, 85 % of 10–60;
 *   prompts lognormal around 100) as a 3-column CSV, for `--set 'workload.synthetic.lengths={kind: empirical,
 *   path: PATH}'`: a case where future KV growth is hidden from current use, i.e. where anticipation should help.
 * - `sweep [--rates 9.5,10.5,...] [--cvs 1,2,4] [--routers a,b,...] [--seeds N] [--set ...]`: load × burstiness
 *   grid on the routing scenario (cv 1 = Poisson, else Gamma inter-arrivals with that CV); one row per cell and
 *   router, means over seeds. A router may carry options: `preserve{routing.options.beta=0}`.
 * Wall-clock timings go to stderr-free stdout tables; nothing here is a test.
 */
import { realpathSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { LoadAnticipator, peakWith } from '../src/policy/preserve/anticipator.ts';
import { probeCapacity } from '../src/policy/preserve/capacity-probe.ts';
import { preserveMetrics, type MetricsWindow, type PreserveMetrics } from '../src/policy/preserve/metrics.ts';
import { lengthPredictors } from '../src/forecast/length/registry.ts';
import { routers, type RouterName } from '../src/policy/routing/registry.ts';
import { scalers } from '../src/policy/scaling/registry.ts';
import type { ScaleAction, ScalingSignals } from '../src/policy/scaling/types.ts';
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
    ['llumnix dispatch only', ['routing.policy=llumnix', 'routing.options.migration.enabled=false'], false],
    ['llumnix kv-ratio', ['routing.policy=llumnix', 'routing.options.metric=kv-blocks-ratio'], false],
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
    ['admission = queue (router FIFO)', ['routing.options.admission=queue']],
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

/** The rows of the `scaling` table (RQ2): label and the overrides that select the variant on the scaling scenario. */
export const SCALING_VARIANTS: readonly (readonly [string, readonly string[]])[] = [
  ['preserve', []],
  ['preserve (noisy)', ['prediction.length=noisy']],
  ['preserve (learned)', ['prediction.length=learned']],
  ['static 8', ['scaling.policy=none', 'scaling.options={}']],
  ['reactive', ['scaling.policy=reactive', 'scaling.options={}', 'scaling.downCooldownS=150']],
  ['llumnix-like', ['routing.policy=llumnix', 'scaling.policy=reactive', 'scaling.options={}', 'scaling.downCooldownS=150']],
  ['llumnix-like, no migration', ['routing.policy=llumnix', 'routing.options.migration.enabled=false', 'scaling.policy=reactive', 'scaling.options={}', 'scaling.downCooldownS=150']],
  ['llumnix kv-ratio', ['routing.policy=llumnix', 'routing.options={metric: kv-blocks-ratio}', 'scaling.policy=reactive', 'scaling.options={}', 'scaling.downCooldownS=150']],
];

/**
 * The user's `--set` flags that apply to one `scaling` row. `scaling.options…` flags are the PreServe scaler's
 * options (`--set scaling.options.scaleDownDivisor=one`): they go to the rows that run the preserve scaler only,
 * since a baseline scaler's options are checked at load and it has none of PreServe's.
 */
export function scalingRowExtra(variant: readonly string[], extra: readonly string[]): string[] {
  const preserveScaler = !variant.some((s) => s.startsWith('scaling.policy=') && s !== 'scaling.policy=preserve');
  return preserveScaler ? [...extra] : extra.filter((s) => !/^scaling\.options(\.|=)/.test(s));
}

function scalingTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 1);
  const extra = sets(args);
  const w: MetricsWindow = { fromS: 7200, toS: 14400, referenceInstances: 8 };
  console.log(`scaling: ${SCALING} ${extra.join(' ')}, days 3–4 (7,200–14,400 s), seeds 1..${seeds}, means over seeds`);
  if (extra.some((s) => /^scaling\.options(\.|=)/.test(s))) console.log('(scaling.options overrides apply to the preserve rows only)');
  console.log('variant            | instance-h | vs static 8 | peak norm s | p99 norm s | mean TTFT s | SLO viol. | wall s');
  for (const [name, s] of SCALING_VARIANTS) {
    const ms: (PreserveMetrics & { wallS: number })[] = [];
    for (let seed = 1; seed <= seeds; seed++) ms.push(run(SCALING, [...s, `seed=${seed}`, ...scalingRowExtra(s, extra)], w));
    const m = Object.fromEntries(Object.keys(ms[0]!).map((k) => [k, ms.reduce((a, x) => a + (x[k as keyof typeof x] as number), 0) / ms.length])) as unknown as PreserveMetrics & { wallS: number };
    console.log(`${name.padEnd(18)} | ${f(m.instanceHours, 2).padStart(10)} | ${pct(m.resourceVsReference).padStart(11)} | ${f(m.peakNormLatencyS).padStart(11)} | ${f(m.p99NormLatencyS).padStart(10)} | ${f(m.meanTtftS).padStart(11)} | ${pct(m.sloViolation).padStart(9)} | ${f(m.wallS, 1)}`);
  }
}

/** What the preserve scaler did, tick by tick, and where the latency of days 3–4 went. */
function scalingTrace(args: string[]): void {
  const list = flag(args, '--seed-list');
  const seeds = list ? list.split(',').map(Number) : Array.from({ length: Number(flag(args, '--seeds') ?? 3) }, (_, i) => i + 1);
  const windows = args.includes('--windows');
  const extra = sets(args);
  const W = 150;
  const from = 7200;
  const to = 14400;
  const entry = scalers.preserve;
  const orig = entry.make;
  console.log(`scaling-trace: ${SCALING} ${extra.join(' ')}, preserve scaler`);
  for (const seed of seeds) {
    const ticks: { now: number; ready: number; prov: number; acts: ScaleAction[] }[] = [];
    (entry as { make: unknown }).make = (o: never, c: never) => {
      const r = orig(o, c);
      return {
        name: r.name,
        decide(sg: ScalingSignals) {
          const acts = r.decide(sg);
          const p = sg.pools[0]!;
          ticks.push({ now: sg.now, ready: p.ready, prov: p.provisioning, acts });
          return acts;
        },
      };
    };
    let res: ReturnType<typeof simulate>;
    try {
      const { scenario, baseDir } = loadScenario({ file: SCALING, sets: [`seed=${seed}`, ...extra] });
      res = simulate(scenario, baseDir, { mode: 'fast' });
    } finally {
      (entry as { make: unknown }).make = orig;
    }
    const m = preserveMetrics(res, { fromS: from, toS: to, referenceInstances: 8 });
    const count: Record<string, number> = {};
    for (const t of ticks) {
      if (t.now < from || t.now >= to) continue;
      for (const a of t.acts) if (a.kind !== 'hold') count[`${a.kind}:${a.reason}`] = (count[`${a.kind}:${a.reason}`] ?? 0) + a.count;
    }
    const cancelled = res.fleet.instances.filter((i) => i.stoppedS >= from && i.stoppedS < to && i.stoppedS < i.readyS).length;
    // Per 150-s window of arrival: requests, Σ normalised latency of the completed ones, SLO violations (> 0.2 s or unfinished).
    const log = res.log;
    const cells = new Map<number, { n: number; s: number; v: number }>();
    for (let w0 = from; w0 < to; w0 += W) cells.set(w0, { n: 0, s: 0, v: 0 });
    for (let i = 0; i < log.n; i++) {
      const a = log.arrival[i]!;
      if (a < from || a >= to) continue;
      const c = cells.get(from + Math.floor((a - from) / W) * W)!;
      const nl = log.isDone(i) ? log.e2e[i]! / Math.max(1, log.output[i]!) : Infinity;
      c.n++;
      if (Number.isFinite(nl)) c.s += nl;
      if (nl > 0.2) c.v++;
    }
    const total = [...cells.values()].reduce((a, c) => a + c.v, 0);
    const [worst, wc] = [...cells.entries()].sort((a, b) => b[1].v - a[1].v || a[0] - b[0])[0]!;
    console.log(`seed ${seed}: instance-h ${f(m.instanceHours, 2)}, peak ${f(m.peakNormLatencyS)}, p99 ${f(m.p99NormLatencyS)}, SLO viol. ${pct(m.sloViolation)}, preemptions ${m.preemptions}; ` +
      `${Object.entries(count).sort().map(([k, v]) => `${k} ${v}`).join(', ')}; cancelled while provisioning ${cancelled}; ` +
      `worst window ${worst}: ${wc.v} of ${total} violations`);
    if (!windows) continue;
    const tag: Record<string, string> = { 'tier1-target': 'A', 'anticipated-overload': 'B', 'anticipated-underload': 'C' };
    console.log('  window s | ready min–max | prov max | actions (+add −remove, rule A/B/C @ s into the window)     | norm s | viol.');
    for (const [w0, c] of cells) {
      const ts = ticks.filter((t) => t.now >= w0 && t.now < w0 + W);
      const acts = ts.flatMap((t) => t.acts.filter((a) => a.kind !== 'hold').map((a) => `${a.kind === 'add' ? '+' : '−'}${a.count}${tag[a.reason] ?? a.reason}@${t.now - w0}`));
      const rs = ts.map((t) => t.ready);
      console.log(`  ${String(w0).padStart(8)} | ${`${Math.min(...rs)}–${Math.max(...rs)}`.padStart(13)} | ${String(Math.max(...ts.map((t) => t.prov))).padStart(8)} | ${acts.join(' ').padEnd(56)} | ${f(c.s / Math.max(1, c.n))} | ${c.v}/${c.n}`);
    }
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
      const res = simulate({ ...scenario, routing: { ...scenario.routing, policy: name, options: {}, perPolicy: {} } }, baseDir, { mode: 'fast' });
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

/** Load × burstiness grid: where (if anywhere) PreServe's router beats the Llumnix-like and other baselines. */
function sweepTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 3);
  const rates = (flag(args, '--rates') ?? '9.5,10.5,11.5,12.5').split(',').map(Number);
  const cvs = (flag(args, '--cvs') ?? '1,2,4').split(',').map(Number);
  const names = (flag(args, '--routers') ?? 'preserve,llumnix,llumnix{routing.options.metric=kv-blocks-ratio},least-loaded,least-requests').split(/,(?![^{]*\})/);
  const extra = sets(args);
  console.log(`sweep: ${ROUTING} ${extra.join(' ')}, seeds 1..${seeds}, means over seeds`);
  console.log('rate | cv | router                                   | mean TTFT s | p99 norm s | SLO viol. | preempt/run');
  for (const rate of rates) {
    for (const cv of cvs) {
      const arrivals = cv === 1 ? `{kind: poisson, ratePerS: ${rate}}` : `{kind: gamma, ratePerS: ${rate}, cv: ${cv}}`;
      for (const name of names) {
        const m = /^([^{]+)(?:\{(.*)\})?$/.exec(name)!;
        const own = m[2] ? m[2].split(';') : [];
        const ms: PreserveMetrics[] = [];
        for (let seed = 1; seed <= seeds; seed++) {
          ms.push(run(ROUTING, [`routing.policy=${m[1]}`, ...own, `workload.synthetic.arrivals=${arrivals}`, `seed=${seed}`, ...extra], {}));
        }
        const avg = (k: keyof PreserveMetrics) => ms.reduce((a, x) => a + (x[k] as number), 0) / ms.length;
        console.log(`${f(rate, 1).padStart(4)} | ${String(cv).padStart(2)} | ${name.padEnd(40)} | ${f(avg('meanTtftS')).padStart(11)} | ${f(avg('p99NormLatencyS')).padStart(10)} | ${pct(avg('sloViolation')).padStart(9)} | ${f(avg('preemptions'), 0)}`);
      }
    }
  }
}

/** Paired comparison of two routers over seeds: is the difference larger than the seed noise? */
function pairedTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 10);
  const a = flag(args, '--a') ?? 'preserve';
  const b = flag(args, '--b') ?? 'llumnix';
  const rates = (flag(args, '--rates') ?? '10.5,11,11.5,12').split(',').map(Number);
  const cvs = (flag(args, '--cvs') ?? '1').split(',').map(Number);
  const extra = sets(args);
  const own = (name: string) => {
    const m = /^([^{]+)(?:\{(.*)\})?$/.exec(name)!;
    return [`routing.policy=${m[1]}`, ...(m[2] ? m[2].split(';') : [])];
  };
  console.log(`paired: a = ${a}, b = ${b}; ${ROUTING} ${extra.join(' ')}, seeds 1..${seeds}; mean of a − b ± 2 SE, seeds where a is better`);
  console.log('rate | cv | Δ p99 norm s       | a better | Δ SLO viol. (points) | a better | Δ mean TTFT s      | a better');
  for (const rate of rates) {
    for (const cv of cvs) {
      const arrivals = cv === 1 ? `{kind: poisson, ratePerS: ${rate}}` : `{kind: gamma, ratePerS: ${rate}, cv: ${cv}}`;
      const d: Record<'p99' | 'viol' | 'ttft', number[]> = { p99: [], viol: [], ttft: [] };
      for (let seed = 1; seed <= seeds; seed++) {
        const common = [`workload.synthetic.arrivals=${arrivals}`, `seed=${seed}`, ...extra];
        const ma = run(ROUTING, [...own(a), ...common], {});
        const mb = run(ROUTING, [...own(b), ...common], {});
        d.p99.push(ma.p99NormLatencyS - mb.p99NormLatencyS);
        d.viol.push(100 * (ma.sloViolation - mb.sloViolation));
        d.ttft.push(ma.meanTtftS - mb.meanTtftS);
      }
      const cell = (xs: number[], dig: number) => {
        const mean = xs.reduce((x, y) => x + y, 0) / xs.length;
        const sd = Math.sqrt(xs.reduce((x, y) => x + (y - mean) ** 2, 0) / Math.max(1, xs.length - 1));
        const se = sd / Math.sqrt(xs.length);
        return `${(mean >= 0 ? '+' : '') + mean.toFixed(dig)} ± ${(2 * se).toFixed(dig)}`.padEnd(18) + ` | ${String(xs.filter((x) => x < 0).length).padStart(4)}/${xs.length}`;
      };
      console.log(`${f(rate, 1).padStart(4)} | ${String(cv).padStart(2)} | ${cell(d.p99, 3)} | ${cell(d.viol, 2).padEnd(27)} | ${cell(d.ttft, 3)}`);
    }
  }
}

/** What the anticipator changes in PreServe's decisions, measured on the fleet states of one run. */
function diagnose(args: string[]): void {
  const extra = sets(args);
  const { scenario, baseDir } = loadScenario({ file: ROUTING, sets: ['routing.policy=preserve', ...extra] });
  const entry = routers.preserve;
  const orig = entry.make;
  const opts = scenario.routing.options as Record<string, unknown>;
  const short = orig(routers.preserve.options.parse({ ...opts, anticipator: { ...(opts.anticipator as object), horizonSteps: 1 } }));
  const llum = routers.llumnix.make(routers.llumnix.options.parse({}));
  const ant = new LoadAnticipator(routers.preserve.options.parse(opts).anticipator);
  let n = 0;
  let diffShort = 0;
  let diffLlumnix = 0;
  let anyPenalty = 0;
  let allPenalty = 0;
  let rise = 0;
  let riseMax = 0;
  let nowGap = 0;
  (entry as { make: unknown }).make = (o: never) => {
    const r = orig(o);
    return {
      name: r.name,
      route(req: RequestView, view: FleetView) {
        const d = r.route(req, view);
        if (d.kind !== 'send') return d;
        n++;
        const s = short.route(req, view);
        const l = llum.route(req, view);
        if (s.kind === 'send' && s.to !== d.to) diffShort++;
        if (l.kind === 'send' && l.to !== d.to) diffLlumnix++;
        let pen = 0;
        const c = view.routable(req.model);
        for (const inst of c) {
          const p = ant.project(inst);
          nowGap += p.u[0]! - inst.kvUsedFraction;
          const u0 = p.u[0]! + req.inputTokens / Math.max(1, p.capacityTokens);
          const pk = peakWith(p, req.inputTokens, req.predictedOutputTokens);
          if (pk > 0.8) pen++;
          rise += pk - u0;
          if (pk - u0 > riseMax) riseMax = pk - u0;
        }
        if (pen > 0) anyPenalty++;
        if (pen === c.length) allPenalty++;
        return d;
      },
    };
  };
  try {
    const res = simulate(scenario, baseDir, { mode: 'fast' });
    const m = preserveMetrics(res);
    const k = scenario.fleet.pools[0]!.count;
    console.log(`diagnose: ${ROUTING} ${extra.join(' ')} (preserve router, ${n} decisions)`);
    console.log(`SLO violations ${pct(m.sloViolation)}, p99 norm ${f(m.p99NormLatencyS)} s, preemptions ${m.preemptions}`);
    console.log(`choice differs from the same score with a 1-iteration horizon: ${pct(diffShort / n)}`);
    console.log(`choice differs from the Llumnix-like rule (remaining steps):   ${pct(diffLlumnix / n)}`);
    console.log(`decisions where some / every instance's peak exceeds 0.8:      ${pct(anyPenalty / n)} / ${pct(allPenalty / n)}`);
    console.log(`100-iteration peak minus current KV (with the request): mean ${f(rise / (n * k))}, max ${f(riseMax)} of capacity`);
    console.log(`U[0] minus the engine's KV use (its blocks), before the request: mean ${f(nowGap / (n * k), 4)} of capacity`);
  } finally {
    (entry as { make: unknown }).make = orig;
  }
}

/** Memory balance each router achieves, read from the fleet at its own decisions. */
function balanceTable(args: string[]): void {
  const seeds = Number(flag(args, '--seeds') ?? 3);
  const names = (flag(args, '--routers') ?? 'preserve,llumnix,least-loaded').split(/,(?![^{]*\})/);
  const extra = sets(args);
  console.log(`balance: ${ROUTING} ${extra.join(' ')}, seeds 1..${seeds}, sampled at every decision`);
  console.log('router                                   | KV spread | queued-requests spread | queue here, none there | SLO viol.');
  for (const name of names) {
    const m = /^([^{]+)(?:\{(.*)\})?$/.exec(name)!;
    const policy = m[1] as RouterName;
    const entry = routers[policy];
    const orig = entry.make;
    let n = 0;
    let kvSpread = 0;
    let qSpread = 0;
    let uneven = 0;
    let viol = 0;
    (entry as { make: unknown }).make = (o: never, c: never) => {
      const r = (orig as (o: never, c: never) => ReturnType<typeof orig>)(o, c);
      return {
        name: r.name,
        route(req: RequestView, view: FleetView) {
          const c = view.routable(req.model);
          let kMin = Infinity;
          let kMax = -Infinity;
          let qMin = Infinity;
          let qMax = -Infinity;
          for (const i of c) {
            kMin = Math.min(kMin, i.kvUsedFraction);
            kMax = Math.max(kMax, i.kvUsedFraction);
            qMin = Math.min(qMin, i.numWaiting);
            qMax = Math.max(qMax, i.numWaiting);
          }
          if (c.length > 0) {
            n++;
            kvSpread += kMax - kMin;
            qSpread += qMax - qMin;
            if (qMin === 0 && qMax > 0) uneven++;
          }
          return r.route(req, view);
        },
      };
    };
    try {
      for (let seed = 1; seed <= seeds; seed++) {
        viol += run(ROUTING, [`routing.policy=${policy}`, ...(m[2] ? m[2].split(';') : []), `seed=${seed}`, ...extra], {}).sloViolation / seeds;
      }
    } finally {
      (entry as { make: unknown }).make = orig;
    }
    console.log(`${name.padEnd(40)} | ${f(kvSpread / n).padStart(9)} | ${f(qSpread / n, 2).padStart(22)} | ${pct(uneven / n).padStart(22)} | ${pct(viol).padStart(9)}`);
  }
}

function bimodalTrace(args: string[]): void {
  const path = args[0];
  if (!path) throw new Error('bimodal-trace needs an output path');
  const rng = new Rng(7);
  const rows = ['TIMESTAMP,ContextTokens,GeneratedTokens'];
  for (let k = 0; k < 20_000; k++) {
    const p = Math.max(1, Math.min(2048, Math.round(rng.lognormal(Math.log(100), 1))));
    const d = rng.next() < 0.15 ? 800 + rng.int(801) : 10 + rng.int(51);
    rows.push(`2023-11-16 18:00:00.0000000,${p},${d}`);
  }
  writeFileSync(path, rows.join('\n') + '\n');
  console.log(`wrote ${rows.length - 1} rows to ${path}`);
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

// Run only as a script (`node --import tsx bench/preserve.ts …`), so that tests can import the helpers above.
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
const [mode = 'overhead', ...rest] = isMain ? process.argv.slice(2) : ['none'];
switch (mode) {
  case 'none':
    break;
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
  case 'scaling-trace':
    scalingTrace(rest);
    break;
  case 'probe':
    probe(rest);
    break;
  case 'diagnose':
    diagnose(rest);
    break;
  case 'paired':
    pairedTable(rest);
    break;
  case 'balance':
    balanceTable(rest);
    break;
  case 'bimodal-trace':
    bimodalTrace(rest);
    break;
  case 'sweep':
    sweepTable(rest);
    break;
  default:
    console.error(`unknown mode ${mode}; expected overhead | routing | ablation | scaling | scaling-trace | probe | sweep | paired | diagnose | balance | bimodal-trace`);
    process.exitCode = 2;
}
