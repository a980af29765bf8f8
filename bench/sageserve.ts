// SageServe ILP solve time (seed 000 §5; paper: 1.41 s for 4 models × 3 regions × 1 GPU type, 33 s for 20 × 20 × 5).
// Run: node --import tsx bench/sageserve.ts [--reps N]
// Also: node --import tsx bench/sageserve.ts --lt-gap [--set PATH=VALUE …]: the peak-day LT-UA vs Reactive
// breakdown per hour and region (docs/fidelity/sageserve.md, "Why LT uses more instance-hours"); two full-day
// simulations (≈ 1–2 min each on the development machine) plus an ARIMA fit per hour and region.
// Also: node --import tsx bench/sageserve.ts --week [--scale X] [--policy P] [--cache DIR] [--set PATH=VALUE …]: the one-week run
// (scenarios/sageserve-week.yaml) in this process: wall and CPU seconds of simulate() alone, requests per 30 s of
// each, the share spent in the hourly planner (ARIMA + ILP), ARIMA fits run and peaks read from the forecast
// cache (`--cache DIR` = scaling.options.forecastCacheDir), events, iterations, peak RSS, load average.
// Random instances (seeded): current counts 0–20, demand up to 40 instances' worth per (model, region), θ per
// (model, GPU) 2k–10k tokens/s, α per GPU type $30–$100/h, σ = α × start-up (5–15 min), ε = 0.8. Times are the
// median over reps of HiGHS (WebAssembly, one thread) and of the closed-form solver used in the simulator (g = 1).
import { greedySageServe, solveSageServeIlp, type IlpInput } from '../src/policy/sageserve/ilp.ts';
import { Rng } from '../src/util/rng.ts';
import { percentile } from '../src/metrics/stats.ts';
import { hourLoad, hourlyInstanceHours, planInstances, replayForecastPeak } from '../src/policy/sageserve/breakdown.ts';
import { thetaOf, sageserveScalingOptions } from '../src/policy/sageserve/options.ts';
import { selectedOptions } from '../src/scenario/schema.ts';
import { loadScenario } from '../src/scenario/load.ts';
import { simulate } from '../src/sim/simulator.ts';
import { openWorkload } from '../src/workload/schema.ts';
import { HourlyPlanner } from '../src/policy/sageserve/planner.ts';
import { loadavg } from 'node:os';
import { createHash } from 'node:crypto';

const args = process.argv.slice(2);
const reps = Number(args[args.indexOf('--reps') + 1] ?? 5) || 5;
if (args.includes('--week')) {
  week();
  process.exit(0);
}
if (args.includes('--lt-gap')) {
  ltGap(args.filter((_, i) => args[i - 1] === '--set'));
  process.exit(0);
}

function instance(L: number, R: number, G: number, seed: number): IlpInput {
  const rng = new Rng(seed);
  const alpha = Array.from({ length: G }, () => 30 + 70 * rng.next());
  const theta = Array.from({ length: L }, () => Array.from({ length: G }, () => 2000 + 8000 * rng.next()));
  return {
    models: Array.from({ length: L }, (_, i) => `m${i}`),
    regions: Array.from({ length: R }, (_, j) => `r${j}`),
    gpus: Array.from({ length: G }, (_, k) => `g${k}`),
    n: Array.from({ length: L }, () => Array.from({ length: R }, () => Array.from({ length: G }, () => rng.int(21)))),
    rho: Array.from({ length: L }, (_, i) => Array.from({ length: R }, () => rng.next() * 40 * theta[i]![0]!)),
    theta,
    alpha,
    sigma: Array.from({ length: L }, () => alpha.map((a) => (a * (5 + 10 * rng.next())) / 60)),
    epsilon: 0.8,
  };
}

const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
console.log('(models,regions,gpus)  vars  HiGHS median s  status     objective  closed-form s  closed-form objective');
for (const [L, R, G] of [[4, 3, 1], [20, 20, 5]] as const) {
  const hs: number[] = [];
  const gs: number[] = [];
  let last = { status: '', objective: NaN };
  let gObj = NaN;
  for (let rep = 0; rep < reps; rep++) {
    const p = instance(L, R, G, 100 + rep);
    const t0 = performance.now();
    const h = await solveSageServeIlp(p, { timeLimitS: 120 });
    hs.push((performance.now() - t0) / 1000);
    last = h;
    if (G === 1) {
      const t1 = performance.now();
      gObj = greedySageServe(p).objective;
      gs.push((performance.now() - t1) / 1000);
    }
  }
  console.log(
    `(${L},${R},${G})`.padEnd(22), String(2 * L * R * G).padStart(5), median(hs).toFixed(4).padStart(15), last.status.padStart(8),
    last.objective.toFixed(2).padStart(13), (gs.length ? median(gs).toFixed(6) : '-').padStart(14), (Number.isNaN(gObj) ? '-' : gObj.toFixed(2)).padStart(22),
  );
}

/** Per hour and region: instance-hours of Reactive and LT-UA, the workload, and the plans an hourly planner makes. */
function ltGap(sets: string[]): void {
  const file = 'scenarios/sageserve-peak-day.yaml';
  const { scenario: sc, baseDir } = loadScenario({ file, sets: [...sets, 'scaling.policy=lt-ua'] });
  const o = sageserveScalingOptions.parse(selectedOptions(sc.scaling));
  // Per-minute input tokens/s per region, IW and NIW apart (the same stream the simulator reads).
  const series = { iw: new Map<string, number[]>(), niw: new Map<string, number[]>() };
  let model = '';
  let lastS = 0;
  for (const r of openWorkload(sc.workload, new Rng(sc.seed).fork('workload'), baseDir)) {
    const arr = series[r.tier === 'niw' ? 'niw' : 'iw'];
    const key = r.region ?? '';
    let a = arr.get(key);
    if (!a) arr.set(key, (a = []));
    const m = Math.floor(r.arrivalS / 60);
    while (a.length <= m) a.push(0);
    a[m]! += r.inputTokens / 60;
    model ||= r.model ?? '';
    lastS = r.arrivalS;
  }
  const hours = Math.ceil(lastS / 3600);
  const regions = [...series.iw.keys()].sort();
  const theta = thetaOf(o, model);
  const runs: Record<string, Map<string, number[]>> = {};
  for (const policy of ['sageserve-reactive', 'lt-ua']) {
    const { scenario } = loadScenario({ file, sets: [...sets, `scaling.policy=${policy}`] });
    const t0 = performance.now();
    const res = simulate(scenario, baseDir, { mode: 'fast' });
    runs[policy] = hourlyInstanceHours(res.fleet.instances, res.endS, hours, (i) => (i.pool.endsWith(o.niwPoolSuffix) ? `${i.region}${o.niwPoolSuffix}` : i.region));
    console.error(`${policy}: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  const ih = (policy: string, region: string, h: number) => runs[policy]!.get(region)?.[h] ?? 0;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  console.log(`theta ${theta} input tokens/s per instance (${model}); min per endpoint from the scenario`);
  console.log('region    hour  reactive   lt-ua   IW mean  IW peak  NIW mean  forecast/peak  plan(true peak)  plan(ARIMA)  plan(mean load)');
  const totals = { re: 0, lt: 0, oracle: 0, arima: 0, mean: 0 };
  for (const region of regions) {
    const min = sc.fleet.pools.find((p) => p.region === region && !(p.name ?? '').endsWith(o.niwPoolSuffix))?.minCount ?? 0;
    const iw = series.iw.get(region)!;
    const niw = series.niw.get(region) ?? [];
    for (let h = 0; h < hours; h++) {
      const load = hourLoad(iw, h);
      const nl = hourLoad(niw, h);
      const beta = o.niwBuffer * hourLoad(niw, h - 1).meanTps;
      const fc = replayForecastPeak(iw, h, o.arimaOrder, o.historyMin);
      const oracle = planInstances(load.peakTps + beta, theta, min);
      const planned = planInstances((Number.isNaN(fc) ? load.peakTps : fc) + beta, theta, min);
      const mean = planInstances(load.meanTps + nl.meanTps, theta, min);
      const re = ih('sageserve-reactive', region, h);
      const lt = ih('lt-ua', region, h);
      totals.re += re;
      totals.lt += lt;
      totals.oracle += oracle;
      totals.arima += planned;
      totals.mean += mean;
      console.log(
        region.padEnd(8), String(h).padStart(5), re.toFixed(2).padStart(9), lt.toFixed(2).padStart(7), load.meanTps.toFixed(0).padStart(9),
        load.peakTps.toFixed(0).padStart(8), nl.meanTps.toFixed(0).padStart(9), (fc / load.peakTps).toFixed(2).padStart(14),
        String(oracle).padStart(16), String(planned).padStart(12), String(mean).padStart(16),
      );
    }
    console.log(`${region}: reactive ${sum(runs['sageserve-reactive']!.get(region) ?? []).toFixed(1)} instance-h, lt-ua ${sum(runs['lt-ua']!.get(region) ?? []).toFixed(1)}`);
  }
  console.log(`total instance-h: reactive ${totals.re.toFixed(1)}, lt-ua ${totals.lt.toFixed(1)}; hourly plans: true peak ${totals.oracle}, ARIMA ${totals.arima}, mean load ${totals.mean}`);
}

/** The week run's throughput; the planner is timed by wrapping `HourlyPlanner.prototype.plan`. */
function week(): void {
  const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const sets = args.filter((_, i) => args[i - 1] === '--set');
  if (flag('--scale')) sets.push(`workload.o365.scale=${flag('--scale')}`);
  if (flag('--policy')) sets.push(`scaling.policy=${flag('--policy')}`);
  if (flag('--cache')) sets.push(`scaling.options.forecastCacheDir=${flag('--cache')}`);
  const { scenario, baseDir } = loadScenario({ file: 'scenarios/sageserve-week.yaml', sets });
  const plan = HourlyPlanner.prototype.plan;
  let planWall = 0;
  let planCpu = 0;
  let plans = 0;
  let planner: HourlyPlanner | null = null;
  HourlyPlanner.prototype.plan = function (this: HourlyPlanner, ...a: Parameters<typeof plan>) {
    planner = this;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    try {
      return plan.apply(this, a);
    } finally {
      planWall += (performance.now() - t0) / 1000;
      const c = process.cpuUsage(c0);
      planCpu += (c.user + c.system) / 1e6;
      plans++;
    }
  };
  const load0 = loadavg()[0]!;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const res = simulate(scenario, baseDir, { mode: 'fast' });
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  HourlyPlanner.prototype.plan = plan;
  const requests = res.log.n;
  // Fingerprint of the outcome (per-request times, instance, status; instance lifetimes): equal fingerprints
  // across code versions or cache states mean the same run.
  const h = createHash('sha256');
  const L = res.log;
  for (const a of [L.queue, L.ttft, L.e2e, L.instance, L.status]) h.update(new Uint8Array(a.buffer, 0, requests * a.BYTES_PER_ELEMENT));
  h.update(JSON.stringify(res.fleet.instances.map((i) => [i.pool, i.createdS, i.readyS, i.stoppedS])));
  const per30 = (s: number) => Math.round((requests / s) * 30).toLocaleString('en-US');
  console.log(`scenario sageserve-week, ${sets.length ? sets.join(' ') : 'as written'}`);
  const fits = (planner as HourlyPlanner | null)?.fits ?? 0;
  const hits = (planner as HourlyPlanner | null)?.cacheHits ?? 0;
  console.log('requests   events      iterations    wall s  CPU s  req/30 s wall  req/30 s CPU  planner calls  fits  cached  planner wall s  planner CPU s  peak RSS MB  load avg (start→end)');
  console.log(
    requests.toLocaleString('en-US').padEnd(10), res.events.toLocaleString('en-US').padEnd(11), res.iterations.toLocaleString('en-US').padEnd(13),
    wall.toFixed(1).padStart(6), cpu.toFixed(1).padStart(6), per30(wall).padStart(14), per30(cpu).padStart(13), String(plans).padStart(14),
    String(fits).padStart(5), String(hits).padStart(7),
    planWall.toFixed(1).padStart(15), planCpu.toFixed(1).padStart(14), (process.resourceUsage().maxRSS / 1024).toFixed(0).padStart(12),
    `  ${load0.toFixed(1)}→${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`outcome fingerprint ${h.digest('hex').slice(0, 16)} (${res.fleet.instances.length} instances started)`);
}
