import cliProgress from 'cli-progress';
import { Option, type Command } from 'commander';
import { relative } from 'node:path';
import {
  defaultWorkers,
  resultsTable,
  runComparison,
  runSeededComparison,
  seededEntries,
  writeComparison,
  writeSeededComparison,
  type SeededComparison,
} from '../../report/compare.ts';
import { describeRuns, describeRunsParts } from '../../report/format.ts';
import { formatCommand } from '../../report/run-report.ts';
import { baselineIndex, formatPairedBlock, IDENTICAL_SEEDS_NOTE, pairedBlock, parseSeedsFlag, requestsRange, seededFrontier, seededPoints, seededTable, seedsIdentical } from '../../report/seeds.ts';
import { costSloPoint, describeFrontier, describeTarget, formatComparisonTable, frontierNames } from '../../report/table.ts';
import { loadComparison, type ComparisonSetup } from '../../report/variants.ts';
import { UserError } from '../../util/errors.ts';
import { TRACE_FORMATS } from '../../workload/types.ts';
import { collect, formatDuration, keptTransformsNote, nonEmptyFlag, outDirFlag, parseIntFlag, parseTargetFlag, scenarioFlags } from '../util.ts';

interface CompareFlags {
  scenario?: string;
  set: string[];
  variant: string[];
  sweep: string[];
  target?: string;
  trace?: string;
  traceFormat?: string;
  engine: 'fast' | 'step';
  seed?: string;
  seeds?: string;
  baseline?: string;
  workers?: string;
  out: string;
  quiet?: boolean;
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('Run variants of a scenario on the same workload and seed in parallel; print a comparison table and write report.html')
    .option('--scenario <file>', 'scenario YAML, may hold a variants: list (default: the bundled scenarios/compare-routers.yaml)')
    .option('--variant <name:path=value,...>', 'a variant: a name and scenario overrides, e.g. jsq:routing.policy=jsq (repeatable; replaces the scenario\'s variants); a bare NAME picks the scenario\'s variant of that name (else the base scenario under that name)', collect, [])
    .option('--sweep <path=v1,v2,...>', 'run every variant (or the base scenario) once per value, e.g. fleet.pools.0.count=2,4,8 (repeatable: every combination); variants are named like count-4', collect, [])
    .option('--target <attainment>', "name the cheapest variant whose SLO attainment is at least this (0.99 or 99%)")
    .option('--set <path=value>', 'override a field of the base scenario for every variant (repeatable)', collect, [])
    .option('--trace <file>', "replace the scenario's workload source with this trace (its transforms still apply)")
    .addOption(new Option('--trace-format <format>', 'format of --trace (default: detected from the header)').choices([...TRACE_FORMATS]))
    .addOption(new Option('--engine <mode>', 'fast: jump over unchanged decode runs; step: one event per iteration').choices(['fast', 'step']).default('fast'))
    .option('--seed <n>', 'random seed for every variant (overrides the scenario)')
    .option('--seeds <list>', 'run every variant once per seed: a comma list (1,2,3) or a count N ≥ 2 (seeds S, S+1, …, S+N−1 with S --seed or the scenario seed); the table shows means ± 95 % CI')
    .option('--baseline <name>', 'with --seeds: the variant the others are compared to seed by seed (default: the first)')
    .option('--workers <n>', 'worker threads (default: one per variant, at most the CPU count; 0 = sequential in this thread)')
    .option('--out <dir>', 'output folder', 'out/compare')
    .option('--quiet', 'print nothing but errors')
    .action(async (o: CompareFlags) => {
      nonEmptyFlag('--baseline', o.baseline, 'variant name');
      const out = outDirFlag('--out', o.out);
      const target = o.target === undefined ? undefined : parseTargetFlag(o.target);
      const setup = loadComparison({ ...scenarioFlags(o), variants: o.variant, sweeps: o.sweep, ...(target !== undefined ? { target } : {}) });
      if (!o.quiet) for (const n of setup.notes) process.stderr.write(`note: ${n}\n`);
      if (o.seed !== undefined && o.seeds?.includes(',')) throw new UserError(`--seed ${o.seed}: --seeds ${o.seeds} lists every seed; give one of the two (or --seeds N, N seeds from --seed)`);
      const seeds = o.seeds === undefined ? undefined : parseSeedsFlag(o.seeds, setup.base.seed);
      // Every run of --seeds takes its seed from the list: a variant's own seed would be silently replaced.
      const ownSeed = seeds ? setup.variants.find((v) => v.scenario.seed !== setup.base.seed) : undefined;
      if (ownSeed) throw new UserError(`variant '${ownSeed.name}' sets its own seed (${ownSeed.scenario.seed}): --seeds runs every variant on each seed of its list; remove the variant's seed or --seeds`);
      if (o.baseline !== undefined && seeds === undefined) throw new UserError(`--baseline ${o.baseline}: applies only with --seeds (the paired comparison is over seeds)`);
      const baseline = baselineIndex(o.baseline, setup.variants.map((v) => v.name));
      const jobs = setup.variants.length * (seeds?.length ?? 1);
      const workers = o.workers === undefined ? defaultWorkers(jobs) : parseIntFlag('--workers', o.workers, 0);
      if (workers < 0) throw new UserError(`--workers: expected an integer ≥ 0, got '${o.workers}'`);
      if (seeds) return compareSeeds(o, out, setup, seeds, baseline, workers);
      const progress = compareProgress(setup.variants.map((v) => v.name), o.quiet ?? false);
      const t0 = performance.now();
      let results;
      try {
        results = await runComparison(setup, { mode: o.engine, workers, onProgress: progress.update, onDone: progress.done });
      } finally {
        progress.stop();
      }
      // The --trace note once the run is through: a bad trace row or flag is then the run's one line on stderr.
      keptTransformsNote(o, setup.base.workload);
      const wall = (performance.now() - t0) / 1000;
      const command = formatCommand(process.argv.slice(2));
      const paths = await writeComparison(out, setup, results, command);
      if (!o.quiet) {
        process.stdout.write(`compared ${results.length} variants of ${setup.base.name} (${describeRuns(results.map((r) => ({ name: r.name, summary: r.digest.summary })))})\n\n`);
        process.stdout.write(formatComparisonTable(resultsTable(results)));
        const front = frontierNames(results.map((r) => ({ name: r.name, summary: r.digest.summary })));
        process.stdout.write(`Pareto frontier on cost and SLO attainment: ${describeFrontier(front)}\n`);
        if (setup.target !== undefined) process.stdout.write(`${describeTarget(results.map((r) => r.name), results.map((r) => costSloPoint(r.digest.summary)), setup.target)}\n`);
        process.stdout.write(`\nwrote ${display(paths.json)}\nreport: ${display(paths.html)}\n`);
        const threads = Math.min(workers, results.length);
        const where = workers === 0 ? 'this thread' : `${threads} worker thread${threads === 1 ? '' : 's'}`;
        process.stderr.write(`${results.length} variant${results.length === 1 ? '' : 's'} in ${wall.toFixed(1)} s wall on ${where}\n`);
      }
    });
}

/** `compare --seeds`: every variant once per seed; the table of means ± 95 % CI and the paired block. */
async function compareSeeds(o: CompareFlags, out: string, setup: ComparisonSetup, seeds: number[], baseline: number, workers: number): Promise<void> {
  const progress = compareProgress(setup.variants.map((v) => v.name), o.quiet ?? false, seeds.length);
  const t0 = performance.now();
  let variants;
  try {
    variants = await runSeededComparison(setup, seeds, { mode: o.engine, workers, onProgress: progress.update, onDone: progress.done });
  } finally {
    progress.stop();
  }
  keptTransformsNote(o, setup.base.workload); // once the runs are through (see compare's own)
  const wall = (performance.now() - t0) / 1000;
  const c: SeededComparison = { seeds, baseline, variants };
  const paths = await writeSeededComparison(out, setup, c, formatCommand(process.argv.slice(2)));
  if (o.quiet) return;
  const entries = seededEntries(c);
  const first = variants.map((v) => ({ name: v.name, summary: v.perSeed[0]!.digest.summary }));
  const requests = requestsRange(entries);
  // describeRuns on the first seed's runs, for the SLO part (its seed and request parts are replaced).
  const slo = describeRunsParts(first).slice(2).join('; ');
  process.stdout.write(`compared ${variants.length} variants of ${setup.base.name} on ${seeds.length} seeds (seeds ${seeds.join(', ')}; requests ${requests}; ${slo})\n\n`);
  process.stdout.write(formatComparisonTable(seededTable(entries), true));
  process.stdout.write(`± half-width of the two-sided 95 % Student-t interval of the mean over the ${seeds.length} seeds${seedsIdentical(entries) ? `; ${IDENTICAL_SEEDS_NOTE}` : ''}\n`);
  process.stdout.write(`Pareto frontier of the means on cost and SLO attainment: ${describeFrontier(seededFrontier(entries))}\n`);
  if (setup.target !== undefined) process.stdout.write(`${describeTarget(entries.map((e) => e.name), seededPoints(entries), setup.target)} (means over the seeds)\n`);
  process.stdout.write('\n');
  process.stdout.write(formatPairedBlock(pairedBlock(entries, baseline), seeds.length));
  process.stdout.write(`\nwrote ${display(paths.json)}\nreport: ${display(paths.html)}\n`);
  const runs = variants.length * seeds.length;
  const threads = Math.min(workers, runs);
  const where = workers === 0 ? 'this thread' : `${threads} worker thread${threads === 1 ? '' : 's'}`;
  process.stderr.write(`${runs} runs (${variants.length} variant${variants.length === 1 ? '' : 's'} × ${seeds.length} seeds) in ${wall.toFixed(1)} s wall on ${where}\n`);
}

/** A path relative to the working folder when it is inside it (what a user can paste), else absolute. */
function display(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
}

/**
 * One bar over all runs on a terminal (never in pipes or CI logs): with one seed, each variant's simulated time;
 * with several (`seeds` > 1), jobs are counted (variants × seeds, job `j` being variant `j % variants`) and each
 * variant shows how many of its seeds are done.
 */
function compareProgress(names: readonly string[], quiet: boolean, seeds = 1) {
  const noop = { update: (_i: number, _t: number, _n: number) => {}, done: (_i: number) => {}, stop: () => {} };
  if (quiet || !process.stderr.isTTY) return noop;
  const simT = names.map(() => 0);
  const finished = names.map(() => 0);
  const detail = () =>
    seeds > 1
      ? names.map((n, i) => `${n} ${finished[i]}/${seeds}`).join(' · ')
      : names.map((n, i) => `${n} ${finished[i]! > 0 ? 'done' : simT[i]! > 0 ? formatDuration(simT[i]!) : '…'}`).join(' · ');
  const bar = new cliProgress.SingleBar(
    { format: `comparing |{bar}| {value}/{total} ${seeds > 1 ? 'runs' : 'variants'} | {detail} | {duration_formatted}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let done = 0;
  bar.start(names.length * seeds, 0, { detail: detail() });
  return {
    update: (j: number, t: number) => {
      simT[j % names.length] = t;
      bar.update(done, { detail: detail() });
    },
    done: (j: number) => {
      finished[j % names.length]!++;
      bar.update(++done, { detail: detail() });
    },
    stop: () => bar.stop(),
  };
}
