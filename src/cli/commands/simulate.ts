import { Option, type Command } from 'commander';
import { writeRunOutputs } from '../../metrics/write.ts';
import { summarize } from '../../metrics/summary.ts';
import { loadScenario } from '../../scenario/load.ts';
import { loadVariant } from '../../report/variants.ts';
import { simulate } from '../../sim/simulator.ts';
import { TRACE_FORMATS } from '../../workload/types.ts';
import { formatCommand, writeRunReport } from '../../report/run-report.ts';
import { printSummary } from '../print.ts';
import { collect, keptTransformsNote, nonEmptyFlag, outDirFlag, progressReporter, scenarioFlags } from '../util.ts';

export function registerSimulate(program: Command): void {
  program
    .command('simulate')
    .description('Replay a workload against a modelled fleet and report latency, SLO attainment and cost')
    .option('--scenario <file>', 'scenario YAML (default: the bundled scenarios/default.yaml)')
    .option('--set <path=value>', 'override a scenario field, e.g. routing.policy=jsq (repeatable)', collect, [])
    .option('--trace <file>', "replace the scenario's workload source with this trace (its transforms still apply)")
    .addOption(new Option('--trace-format <format>', 'format of --trace (default: detected from the header)').choices([...TRACE_FORMATS]))
    .addOption(new Option('--engine <mode>', 'fast: jump over unchanged decode runs; step: one event per iteration').choices(['fast', 'step']).default('fast'))
    .option('--seed <n>', 'random seed (overrides the scenario)')
    .option('--variant <name>', "run one variant of a scenario's variants: list, as compare runs it")
    .option('--out <dir>', 'output folder', 'out/simulate')
    .option('--no-report', 'skip report.html (charts take ≈0.5–1 s to render)')
    .option('--quiet', 'print nothing but errors')
    .action(async (o: { scenario?: string; set: string[]; trace?: string; traceFormat?: string; engine: 'fast' | 'step'; seed?: string; variant?: string; out: string; report: boolean; quiet?: boolean }) => {
      nonEmptyFlag('--variant', o.variant, 'variant name');
      const out = outDirFlag('--out', o.out);
      const { scenario, baseDir } = o.variant !== undefined ? loadVariant(scenarioFlags(o), o.variant) : loadScenario(scenarioFlags(o));
      const progress = progressReporter(o.quiet ?? false);
      const t0 = performance.now();
      const res = simulate(scenario, baseDir, { mode: o.engine, onProgress: progress.update });
      const wall = (performance.now() - t0) / 1000;
      progress.stop();
      // The --trace note once the run is through: a bad trace row or flag is then the run's one line on stderr.
      keptTransformsNote(o, scenario.workload);
      const summary = summarize(res, wall);
      await writeRunOutputs(out, summary, res);
      if (o.report) await writeRunReport(out, { scenario, summary, log: res.log, timeline: res.timeline, command: formatCommand(process.argv.slice(2)) });
      if (!o.quiet) {
        printSummary(summary);
        process.stdout.write(`\nwrote ${out}/summary.json, requests.csv, timeline.csv${res.scaling ? ', scaling.csv' : ''}${o.report ? ', report.html' : ''}\n`);
      }
    });
}

