import cliProgress from 'cli-progress';
import { Option, type Command } from 'commander';
import { relative, resolve } from 'node:path';
import { defaultWorkers, resultsTable, runComparison, writeComparison } from '../../report/compare.ts';
import { describeRuns } from '../../report/format.ts';
import { formatCommand } from '../../report/run-report.ts';
import { formatComparisonTable, frontierNames } from '../../report/table.ts';
import { loadComparison } from '../../report/variants.ts';
import { UserError } from '../../util/errors.ts';
import { TRACE_FORMATS } from '../../workload/types.ts';
import { collect, formatDuration, keptTransformsNote, parseIntFlag, prepareOutDir, scenarioFlags } from '../util.ts';

interface CompareFlags {
  scenario?: string;
  set: string[];
  variant: string[];
  trace?: string;
  traceFormat?: string;
  engine: 'fast' | 'step';
  seed?: string;
  workers?: string;
  out: string;
  quiet?: boolean;
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description('Run variants of a scenario on the same workload and seed in parallel; print a comparison table and write report.html')
    .option('--scenario <file>', 'scenario YAML, may hold a variants: list (default: the bundled scenarios/compare-routers.yaml)')
    .option('--variant <name:path=value,...>', 'a variant: a name and scenario overrides, e.g. jsq:routing.policy=jsq (repeatable; replaces the scenario\'s variants)', collect, [])
    .option('--set <path=value>', 'override a field of the base scenario for every variant (repeatable)', collect, [])
    .option('--trace <file>', "replace the scenario's workload source with this trace (its transforms still apply)")
    .addOption(new Option('--trace-format <format>', 'format of --trace (default: detected from the header)').choices([...TRACE_FORMATS]))
    .addOption(new Option('--engine <mode>', 'fast: jump over unchanged decode runs; step: one event per iteration').choices(['fast', 'step']).default('fast'))
    .option('--seed <n>', 'random seed for every variant (overrides the scenario)')
    .option('--workers <n>', 'worker threads (default: one per variant, at most the CPU count; 0 = sequential in this thread)')
    .option('--out <dir>', 'output folder', 'out/compare')
    .option('--quiet', 'print nothing but errors')
    .action(async (o: CompareFlags) => {
      const out = prepareOutDir('--out', resolve(o.out));
      const setup = loadComparison({ ...scenarioFlags(o), variants: o.variant });
      keptTransformsNote(o, setup.base.workload);
      const workers = o.workers === undefined ? defaultWorkers(setup.variants.length) : parseIntFlag('--workers', o.workers);
      if (workers < 0) throw new UserError(`--workers: expected an integer ≥ 0, got '${o.workers}'`);
      const progress = compareProgress(setup.variants.map((v) => v.name), o.quiet ?? false);
      const t0 = performance.now();
      let results;
      try {
        results = await runComparison(setup, { mode: o.engine, workers, onProgress: progress.update, onDone: progress.done });
      } finally {
        progress.stop();
      }
      const wall = (performance.now() - t0) / 1000;
      const command = formatCommand(process.argv.slice(2));
      const paths = await writeComparison(out, setup, results, command);
      if (!o.quiet) {
        process.stdout.write(`compared ${results.length} variants of ${setup.base.name} (${describeRuns(results.map((r) => ({ name: r.name, summary: r.digest.summary })))})\n\n`);
        process.stdout.write(formatComparisonTable(resultsTable(results)));
        const front = frontierNames(results.map((r) => ({ name: r.name, summary: r.digest.summary })));
        process.stdout.write(`Pareto frontier on cost and SLO attainment: ${front.join(', ')}\n`);
        process.stdout.write(`\nwrote ${display(paths.json)}\nreport: ${display(paths.html)}\n`);
        const threads = Math.min(workers, results.length);
        const where = workers === 0 ? 'this thread' : `${threads} worker thread${threads === 1 ? '' : 's'}`;
        process.stderr.write(`${results.length} variant${results.length === 1 ? '' : 's'} in ${wall.toFixed(1)} s wall on ${where}\n`);
      }
    });
}

/** A path relative to the working folder when it is inside it (what a user can paste), else absolute. */
function display(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
}

/** One bar over all variants on a terminal (never in pipes or CI logs), with each variant's simulated time. */
function compareProgress(names: readonly string[], quiet: boolean) {
  const noop = { update: (_i: number, _t: number, _n: number) => {}, done: (_i: number) => {}, stop: () => {} };
  if (quiet || !process.stderr.isTTY) return noop;
  const simT = names.map(() => 0);
  const finished = names.map(() => false);
  const detail = () => names.map((n, i) => `${n} ${finished[i] ? 'done' : simT[i]! > 0 ? formatDuration(simT[i]!) : '…'}`).join(' · ');
  const bar = new cliProgress.SingleBar(
    { format: 'comparing |{bar}| {value}/{total} variants | {detail} | {duration_formatted}', stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let done = 0;
  bar.start(names.length, 0, { detail: detail() });
  return {
    update: (i: number, t: number) => {
      simT[i] = t;
      bar.update(done, { detail: detail() });
    },
    done: (i: number) => {
      finished[i] = true;
      bar.update(++done, { detail: detail() });
    },
    stop: () => bar.stop(),
  };
}

