import { Option, type Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { headlineAttainment, summarize } from '../../metrics/summary.ts';
import { searchMaxRate, searchMinCount, type CapacityProbe, type CapacitySearch } from '../../report/capacity.ts';
import { formatCommand } from '../../report/run-report.ts';
import { formatAmount, formatAttainment, formatLatency as ms } from '../../report/format.ts';
import { loadScenario } from '../../scenario/load.ts';
import { poolName, type Scenario } from '../../scenario/schema.ts';
import { simulate } from '../../sim/simulator.ts';
import { UserError } from '../../util/errors.ts';
import { COMPRESS_RANGE } from '../../workload/schema.ts';
import { TRACE_FORMATS } from '../../workload/types.ts';
import { collect, keptTransformsNote, nonEmptyFlag, outDirFlag, parseIntFlag, parseTargetFlag, progressReporter, scenarioFlags } from '../util.ts';

interface CapacityFlags {
  scenario?: string;
  set: string[];
  trace?: string;
  traceFormat?: string;
  engine: 'fast' | 'step';
  seed?: string;
  target: string;
  pool?: string;
  tolerance: string;
  maxRuns: string;
  out: string;
  quiet?: boolean;
}

export function registerCapacity(program: Command): void {
  program
    .command('capacity')
    .description("Find by simulation the highest load a fleet serves at an SLO attainment target (or, with --pool, the fewest instances of a pool that serve the scenario's load)")
    .option('--scenario <file>', 'scenario YAML (default: the bundled scenarios/default.yaml)')
    .option('--set <path=value>', 'override a scenario field, e.g. fleet.pools.0.count=4 (repeatable)', collect, [])
    .option('--trace <file>', "replace the scenario's workload source with this trace (its transforms still apply)")
    .addOption(new Option('--trace-format <format>', 'format of --trace (default: detected from the header)').choices([...TRACE_FORMATS]))
    .addOption(new Option('--engine <mode>', 'fast: jump over unchanged decode runs; step: one event per iteration').choices(['fast', 'step']).default('fast'))
    .option('--seed <n>', 'random seed (overrides the scenario)')
    .option('--target <attainment>', 'the SLO attainment to hold (0.99 or 99%), judged as simulate judges it', '99%')
    .option('--pool <name>', "search this pool's instance count at the scenario's load instead of the load factor")
    .option('--tolerance <fraction>', 'load search: stop when the failing factor is within this fraction above the passing one', '0.05')
    .option('--max-runs <n>', 'at most this many simulations', '16')
    .option('--out <dir>', 'output folder (capacity.json)', 'out/capacity')
    .option('--quiet', 'print nothing but errors')
    .action((o: CapacityFlags) => {
      nonEmptyFlag('--pool', o.pool, 'pool name');
      const out = outDirFlag('--out', o.out);
      const target = parseTargetFlag(o.target);
      const tolerance = Number(o.tolerance);
      if (o.tolerance.trim() === '' || !(tolerance > 0 && tolerance <= 1)) throw new UserError(`--tolerance: expected a fraction in (0, 1], e.g. 0.05, got '${o.tolerance}'`);
      const maxRuns = parseIntFlag('--max-runs', o.maxRuns, 1, 1000);
      if (maxRuns < 1 || maxRuns > 1000) throw new UserError(`--max-runs: expected an integer from 1 to 1000, got '${o.maxRuns}'`);
      const { scenario, baseDir } = loadScenario(scenarioFlags(o));
      const pool = o.pool === undefined ? undefined : poolIndex(scenario, o.pool);
      const say = (t: string) => void (o.quiet ? undefined : process.stderr.write(t));
      const run = (sc: Scenario, value: number, label: string): CapacityProbe => {
        const progress = progressReporter(o.quiet ?? false);
        const res = simulate(sc, baseDir, { mode: o.engine, onProgress: progress.update });
        progress.stop();
        const s = summarize(res, 0);
        const { arrival, n } = res.log;
        const spanS = n > 1 ? arrival[n - 1]! - arrival[0]! : 0;
        const attainment = s.requests.total > 0 ? headlineAttainment(s) : 0;
        const p: CapacityProbe = {
          value,
          attainment,
          meets: s.requests.total > 0 && attainment >= target,
          requests: s.requests.total,
          offeredRatePerS: spanS > 0 ? n / spanS : 0,
          gpus: sc.fleet.pools.reduce((g, q) => g + q.count * q.tp * q.pp, 0),
          ttftP99S: s.ttft.p99,
          tpotP99S: s.tpot.p99,
          costUsd: s.fleet.costUsd,
        };
        say(`probe ${label}: ${describeProbe(p)}\n`);
        return p;
      };
      const t0 = performance.now();
      let search: CapacitySearch;
      if (pool === undefined) {
        const transforms = scenario.workload.transforms ?? { rateScaleJitterS: 1 };
        const c0 = transforms.compress ?? 1;
        const atFactor = (f: number): Scenario => ({ ...scenario, workload: { ...scenario.workload, transforms: { ...transforms, compress: c0 * f } } });
        search = searchMaxRate((f) => run(atFactor(f), f, `load ×${f.toPrecision(4)}`), { tolerance, maxRuns, min: COMPRESS_RANGE.min / c0, max: COMPRESS_RANGE.max / c0 });
      } else {
        const withCount = (k: number): Scenario => ({
          ...scenario,
          fleet: { ...scenario.fleet, pools: scenario.fleet.pools.map((q, i) => (i === pool.index ? { ...q, count: k, minCount: Math.min(q.minCount, k), maxCount: Math.max(q.maxCount, k) } : q)) },
        });
        search = searchMinCount((k) => run(withCount(k), k, `${pool.name} × ${k}`), { start: scenario.fleet.pools[pool.index]!.count, maxRuns });
      }
      keptTransformsNote(o, scenario.workload);
      const wall = (performance.now() - t0) / 1000;
      const file = join(out, 'capacity.json');
      mkdirSync(out, { recursive: true });
      const knob = pool === undefined ? { knob: 'load' as const } : { knob: 'count' as const, pool: pool.name };
      writeFileSync(file, JSON.stringify({ scenario: scenario.name, seed: scenario.seed, command: formatCommand(process.argv.slice(2)), target, ...knob, ...search, wallSeconds: wall }, null, 2) + '\n');
      if (o.quiet) return;
      process.stdout.write(`${answer(search, target, pool?.name)}\n`);
      process.stdout.write(`\n${search.probes.length} simulations in ${wall.toFixed(1)} s; wrote ${file}\n`);
    });
}

/** The pool `--pool` names, by its name (or `poolN`); the scenario must hold its count (no scaling policy moves it). */
function poolIndex(sc: Scenario, name: string): { index: number; name: string } {
  const names = sc.fleet.pools.map((p, i) => poolName(p, i));
  const index = names.indexOf(name);
  if (index < 0) throw new UserError(`--pool ${name}: expected a pool of the scenario: ${names.join(', ')}`);
  if (sc.scaling.policy !== 'none') throw new UserError(`--pool ${name}: scaling.policy is ${sc.scaling.policy}, which moves the count the search sets; add --set scaling.policy=none`);
  return { index, name };
}

function describeProbe(p: CapacityProbe): string {
  return (
    `${p.offeredRatePerS.toFixed(2)} req/s offered, ${p.gpus} GPU${p.gpus === 1 ? '' : 's'}: ${formatAttainment(p.attainment)} attained (${p.meets ? 'meets' : 'misses'}), ` +
    `TTFT p99 ${ms(p.ttftP99S)}, TPOT p99 ${ms(p.tpotP99S)}, $${p.requests > 0 ? formatAmount((p.costUsd / p.requests) * 1000) : '–'} per 1,000 requests`
  );
}

/** The one-paragraph answer: what met the target, and how sure the search is. */
function answer(s: CapacitySearch, target: number, pool: string | undefined): string {
  const t = formatAttainment(target);
  const b = s.best;
  if (pool !== undefined) {
    if (!b) return `no count of ${pool} up to ${s.bracket.fails} met ${t} (the most tried); the load may need another pool, or a longer --max-runs`;
    const exact = s.converged ? '' : ` (not converged: ${s.bracket.fails ?? 'no'} instances missed it; raise --max-runs)`;
    return `${pool} needs ${b.value} instance${b.value === 1 ? '' : 's'} (${b.gpus} GPUs in the fleet) to hold ${t}: ${describeProbe(b)}${exact}`;
  }
  if (!b) return `the fleet misses ${t} even at ×${s.bracket.fails} of the scenario's load (the least tried)`;
  const perGpu = b.gpus > 0 ? `, ${(b.offeredRatePerS / b.gpus).toFixed(3)} req/s per GPU` : '';
  const fails = s.bracket.fails;
  const where = fails === undefined ? ' (it met the target at the most load tried)' : s.converged ? ` (×${fails.toPrecision(4)} missed it)` : ` (not converged: ×${fails.toPrecision(4)} missed it; raise --max-runs)`;
  return `capacity at ${t}: ×${b.value.toPrecision(4)} the scenario's load, ${b.offeredRatePerS.toFixed(2)} req/s${perGpu}${where}\n  ${describeProbe(b)}`;
}
