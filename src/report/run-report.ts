import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { RequestLog } from '../metrics/collector.ts';
import type { Summary } from '../metrics/summary.ts';
import type { Scenario } from '../scenario/schema.ts';
import type { Timeline, TimelineRow } from '../sim/timeline.ts';
import { digestRun } from './digest.ts';
import { renderReportHtml } from './html.ts';

export interface RunReportInput {
  scenario: Scenario;
  summary: Summary;
  log: RequestLog;
  /** The run's timeline (or its rows). */
  timeline: Timeline | readonly TimelineRow[];
  /** The exact command that reproduces the run, e.g. `formatCommand(process.argv.slice(2))`. */
  command: string;
}

/** The single-run report.html as a string. */
export function buildRunReport(input: RunReportInput): Promise<string> {
  const rows = 'rows' in input.timeline ? input.timeline.rows : input.timeline;
  return renderReportHtml({
    kind: 'run',
    scenarioName: input.scenario.name,
    seed: input.scenario.seed,
    command: input.command,
    scenarioYaml: scenarioYaml(input.scenario),
    variants: [],
    runs: [{ name: input.scenario.name, digest: digestRun(input.summary, input.log, rows, input.scenario.output.timelineIntervalS, input.scenario.output.warmupS) }],
  });
}

/** Writes `dir/report.html` for one simulation run and returns its path. */
export async function writeRunReport(dir: string, input: RunReportInput): Promise<string> {
  const html = await buildRunReport(input);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'report.html');
  writeFileSync(path, html);
  return path;
}

export function scenarioYaml(sc: Scenario): string {
  return stringify(sc, { lineWidth: 0 });
}

/**
 * The command line that reruns this one, quoted for a POSIX shell: `node bin/llmfleet.js …` when run from the project
 * folder (the usual case), else prefixed with `cd` to where it ran, since the file arguments are relative to that
 * folder. `formatCommand(['simulate', '--set', 'routing.policy=jsq'])` ⇒ `node bin/llmfleet.js simulate --set routing.policy=jsq`.
 */
export function formatCommand(args: readonly string[], script = process.argv[1] ?? '', cwd = process.cwd()): string {
  // Anything but this CLI's script (a test, a library caller) is described as run from the project folder.
  const fromRoot = !/llmfleet\.js$/.test(script) || resolve(script) === resolve(cwd, 'bin', 'llmfleet.js');
  const line = ['node', fromRoot ? 'bin/llmfleet.js' : resolve(script), ...args].map(shellQuote).join(' ');
  return fromRoot ? line : `cd ${shellQuote(cwd)} && ${line}`;
}

function shellQuote(a: string): string {
  return /^[A-Za-z0-9_\-./:=,@%+]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}
