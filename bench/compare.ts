// Compare benchmark: N variants of the bundled router comparison, run one after another in this thread
// versus in a pool of worker threads (piscina), as `llmfleet compare --workers 0` and `--workers W` do.
//   node --import tsx bench/compare.ts [variants=4] [workers=2] [fast|step] [rateScale=8]
// The parallel time includes starting the pool (each worker loads tsx and the simulator) and digesting the
// runs. Same seed and workload ⇒ the summaries must agree, and the script checks that they do.
//
// Two ratios are printed. "wall speed-up" is the plain one and only means something on an otherwise idle
// machine. "critical-path speed-up" divides the busiest thread's CPU seconds (read from /proc/self/task on
// Linux) in the sequential run by the busiest thread's in the parallel run: the speed-up if every thread had
// a core of its own, which stays measurable while other processes share the cores.
//
// Then the same comparison end to end, as a user runs it: `llmfleet compare --workers 0` and `--workers W`, each
// in a fresh process (cold JIT on both sides, worker start-up included), wall and CPU seconds, best of two.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { runComparison, type VariantResult } from '../src/report/compare.ts';
import { loadComparison } from '../src/report/variants.ts';

const n = Number(process.argv[2] ?? 4);
const workers = Number(process.argv[3] ?? 2);
const mode = (process.argv[4] ?? 'fast') as 'fast' | 'step';
const scale = Number(process.argv[5] ?? 8);
// The first four cost about the same per request; jsq and the KV/token routers cost about twice as much
// (see the per-variant times printed), which leaves one worker idle at the end with N = 4.
const routers = ['round-robin', 'least-requests', 'power-of-two', 'random', 'jsq', 'least-kv', 'pending-tokens'];
// compare-routers.yaml (the conv trace's hour at 6× speed) with every request copied `scale` times (8 ⇒ ≈ 155k
// requests) on 3·scale instances, so each variant simulates for seconds and pool start-up is a small share.
const setup = loadComparison({
  sets: [`workload.transforms.rateScale=${scale}`, `fleet.pools.0.count=${3 * scale}`],
  variants: Array.from({ length: n }, (_, i) => `v${i}:routing.policy=${routers[i % routers.length]},seed=${1 + Math.floor(i / routers.length)}`),
});

/** CPU seconds (user + system) of each thread of this process, by thread id; empty off Linux. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync('/proc/self/task')) return out;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
      out.set(tid, (Number(f[11]) + Number(f[12])) / 100); // utime, stime in clock ticks (USER_HZ = 100)
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

interface Timed {
  wallS: number;
  /** CPU seconds of this process, all threads. */
  cpuS: number;
  /** CPU seconds of the busiest thread during the run. */
  criticalS: number;
  results: VariantResult[];
}

async function timed(w: number): Promise<Timed> {
  const before = threadCpu();
  const peak = new Map<string, number>();
  const sample = () => {
    for (const [tid, s] of threadCpu()) peak.set(tid, Math.max(peak.get(tid) ?? 0, s - (before.get(tid) ?? 0)));
  };
  // Worker threads exit when the pool is destroyed, so sample them while they live (the main thread is
  // idle then); the sequential run blocks this thread, and its totals are read once at the end.
  const timer = setInterval(sample, 20);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await runComparison(setup, { mode, workers: w, onDone: sample });
  const wallS = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  clearInterval(timer);
  sample();
  return { wallS, cpuS: (c.user + c.system) / 1e6, criticalS: Math.max(0, ...peak.values()), results };
}

const strip = (r: VariantResult[]) => JSON.stringify(r.map((x) => ({ ...x.digest, summary: { ...x.digest.summary, sim: null } })));
// Fill tsx's compile cache in a throwaway worker, so neither side pays first-time compilation; the
// main thread's JIT stays cold, as in a real `llmfleet compare`. Best of two rounds each, interleaved.
const tiny = loadComparison({ sets: ['workload.transforms.limit=10'], variants: ['warm'] });
await runComparison(tiny, { mode, workers: 1 });
const best = (a: Timed, b: Timed) => (a.wallS <= b.wallS ? a : b);
const seq1 = await timed(0);
const par1 = await timed(workers);
const seq = best(seq1, await timed(0));
const par = best(par1, await timed(workers));
if (strip(seq.results) !== strip(par.results)) throw new Error('sequential and parallel runs disagree');
const perVariant = seq.results.map((r) => r.digest.summary.sim.wallSeconds);

const rows = [
  ['run', 'variants', 'threads', 'wall s', 'CPU s', 'busiest thread CPU s', 'wall speed-up', 'critical-path speed-up'],
  ['sequential (main thread)', String(n), '1', seq.wallS.toFixed(2), seq.cpuS.toFixed(2), seq.criticalS.toFixed(2), '1.00×', '1.00×'],
  [
    'piscina pool',
    String(n),
    String(Math.min(workers, n)),
    par.wallS.toFixed(2),
    par.cpuS.toFixed(2),
    par.criticalS.toFixed(2),
    `${(seq.wallS / par.wallS).toFixed(2)}×`,
    par.criticalS > 0 ? `${(seq.criticalS / par.criticalS).toFixed(2)}×` : 'n/a',
  ],
];
const widths = rows[0]!.map((_, j) => Math.max(...rows.map((r) => r[j]!.length)));
for (const r of rows) console.log(r.map((c, j) => (j === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  '));
console.log(
  `\n${setup.variants[0]!.scenario.name}: ${seq.results[0]!.digest.summary.requests.total.toLocaleString('en-US')} requests per variant, ${mode} engine; ` +
    `sequential simulation ${perVariant.map((s) => s.toFixed(2)).join(' + ')} s; ` +
    `${availableParallelism()} CPUs, load average ${loadavg()[0]!.toFixed(1)} at the end (above ~1 other processes share the cores and the wall ratio means little).`,
);

/** One `llmfleet compare` in a fresh process: wall seconds and the CPU seconds of it and its threads (bash `times`). */
function cliRun(w: number): { wallS: number; cpuS: number } {
  const sets = [`workload.transforms.rateScale=${scale}`, `fleet.pools.0.count=${3 * scale}`].map((x) => `--set ${x}`).join(' ');
  const variants = setup.variants.map((v) => `--variant ${v.name}:${v.overrides.join(',')}`).join(' ');
  const cmd = `${process.execPath} bin/llmfleet.js compare --quiet --engine ${mode} ${sets} ${variants} --workers ${w} --out out/bench-compare-${w}; times`;
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`llmfleet compare failed: ${r.stderr}`);
  // `times` prints the shell's own user/sys line, then its children's: "0m9.540s 0m0.800s".
  const kids = r.stdout.trim().split('\n').at(-1)!.match(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/)!;
  const cpuS = Number(kids[1]) * 60 + Number(kids[2]) + Number(kids[3]) * 60 + Number(kids[4]);
  return { wallS, cpuS };
}
const fastest = (a: { wallS: number; cpuS: number }, b: { wallS: number; cpuS: number }) => (a.wallS <= b.wallS ? a : b);
const cliSeq = fastest(cliRun(0), cliRun(0));
const cliPar = fastest(cliRun(workers), cliRun(workers));
console.log(
  `\nend to end (fresh process each, best of 2): --workers 0 ${cliSeq.wallS.toFixed(2)} s wall / ${cliSeq.cpuS.toFixed(2)} s CPU; ` +
    `--workers ${workers} ${cliPar.wallS.toFixed(2)} s wall / ${cliPar.cpuS.toFixed(2)} s CPU; ` +
    `wall speed-up ${(cliSeq.wallS / cliPar.wallS).toFixed(2)}×, CPU ratio ${(cliPar.cpuS / cliSeq.cpuS).toFixed(2)}×`,
);
