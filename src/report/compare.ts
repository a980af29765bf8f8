import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Scenario } from '../scenario/schema.ts';
import { UserError } from '../util/errors.ts';
import type { RunDigest } from './digest.ts';
import { renderReportHtml } from './html.ts';
import type { VariantOutcome, VariantTask } from './run-variant.ts';
import { scenarioYaml } from './run-report.ts';
import { pairedBlock, requestsRange, seededFrontier, seededPoints, seededStats, seededTable, seedsIdentical, type SeededEntry } from './seeds.ts';
import { comparisonTable, costSloPoint, describeTarget, targetChoice, type ComparisonTable } from './table.ts';
import { comparisonWorkerScript } from './worker-bundle.ts';
import type { ComparisonSetup, PreparedVariant } from './variants.ts';

export interface CompareOptions {
  mode: 'fast' | 'step';
  /** Worker threads (default: one per variant, or per run with seeds, at most the number of CPUs). 0 runs the variants one after another in this thread. */
  workers?: number;
  /** Simulated time and arrivals so far of variant `index` (with seeds: job `index` of `seededJobs`), now and then from its worker. */
  onProgress?: (index: number, simTimeS: number, arrived: number) => void;
  /** Variant (with seeds: job) `index` has finished. */
  onDone?: (index: number) => void;
}

export interface VariantResult {
  name: string;
  overrides: string[];
  digest: RunDigest;
}

export function defaultWorkers(runs: number): number {
  return Math.max(1, Math.min(runs, availableParallelism()));
}

/**
 * Runs every variant on the same workload and seed, in parallel worker threads (piscina), and returns
 * the results in variant order. A variant failing on a user mistake ends the comparison with a UserError
 * naming the variant.
 */
export async function runComparison(setup: ComparisonSetup, opts: CompareOptions): Promise<VariantResult[]> {
  const outcomes = await runJobs(setup.variants, setup.baseDir, opts);
  return outcomes.map((o, i) => toResult(setup.variants[i]!, o));
}

/** One variant run on each of several seeds (`compare --seeds`); `perSeed[i]` ran on the comparison's `seeds[i]`. */
export interface SeededVariantResult {
  name: string;
  overrides: string[];
  perSeed: VariantResult[];
}

/**
 * The jobs of a comparison over `seeds`, seed-major (every variant on the first seed, then on the second, …):
 * job `j` is variant `j % variants` on seed `seeds[⌊j / variants⌋]`, the variant's scenario with its seed replaced
 * (a variant that sets its own seed gets each of the seeds too, so that every seed is a pair across variants; `compare`
 * refuses such a variant).
 */
export function seededJobs(setup: ComparisonSetup, seeds: readonly number[]): { variant: number; seed: number; scenario: Scenario }[] {
  return seeds.flatMap((seed) => setup.variants.map((v, variant) => ({ variant, seed, scenario: { ...v.scenario, seed } })));
}

/**
 * Runs every variant once per seed (variants × seeds jobs, through the same pool as `runComparison`: `onProgress` and
 * `onDone` get the job index of `seededJobs`). A failing run ends the comparison with a UserError naming the variant
 * and the seed.
 */
export async function runSeededComparison(setup: ComparisonSetup, seeds: readonly number[], opts: CompareOptions): Promise<SeededVariantResult[]> {
  const jobs = seededJobs(setup, seeds);
  const outcomes = await runJobs(jobs.map((j) => ({ name: setup.variants[j.variant]!.name, scenario: j.scenario })), setup.baseDir, opts);
  const results = setup.variants.map((v): SeededVariantResult => ({ name: v.name, overrides: v.overrides, perSeed: [] }));
  jobs.forEach((j, i) => {
    const v = setup.variants[j.variant]!;
    results[j.variant]!.perSeed.push(toResult(v, outcomes[i], j.seed));
  });
  return results;
}

/** One simulation of a comparison: a variant's scenario (on one seed). */
interface Job {
  name: string;
  scenario: Scenario;
}

/** Runs the jobs (in worker threads, or one after another in this thread with `workers: 0`); outcomes in order. */
async function runJobs(jobs: readonly Job[], baseDir: string, opts: CompareOptions): Promise<VariantOutcome[]> {
  const workers = opts.workers ?? defaultWorkers(jobs.length);
  if (workers === 0) return runSequential(jobs, baseDir, opts);
  const threads = Math.min(workers, jobs.length);
  const pool = new Piscina({
    filename: await comparisonWorkerScript(),
    minThreads: threads,
    maxThreads: threads,
    // Tasks are whole simulations; a queue longer than the job list never happens.
    maxQueue: jobs.length,
  });
  try {
    return await Promise.all(
      jobs.map(async ({ name, scenario }, i) => {
        const { port1, port2 } = new MessageChannel();
        port1.on('message', (m: { simTimeS: number; arrived: number }) => opts.onProgress?.(i, m.simTimeS, m.arrived));
        try {
          const task: VariantTask = { name, scenario, baseDir, mode: opts.mode, port: port2 };
          let out: VariantOutcome;
          try {
            out = (await pool.run(task, { transferList: [port2] })) as VariantOutcome;
          } catch (e) {
            // The worker itself died (out of memory): the variant's failure, said in one line, not a stack.
            if ((e as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw e;
            out = { ok: false, message: 'its simulation ran out of memory in the worker thread (a smaller workload or timeline, or --workers 0 to run in the main thread)' };
          }
          opts.onDone?.(i);
          return out;
        } finally {
          port1.close();
        }
      }),
    );
  } finally {
    await pool.destroy();
  }
}

async function runSequential(jobs: readonly Job[], baseDir: string, opts: CompareOptions): Promise<VariantOutcome[]> {
  // Imported here: a parallel comparison never runs the simulator in this thread.
  const { runVariant } = await import('./run-variant.ts');
  const outcomes: VariantOutcome[] = [];
  for (const [i, { name, scenario }] of jobs.entries()) {
    const out = runVariant({ name, scenario, baseDir, mode: opts.mode }, (t, n) => opts.onProgress?.(i, t, n));
    opts.onDone?.(i);
    // A user mistake stops here, as it did before any later variant ran.
    outcomes.push(out);
    if (!out.ok) break;
  }
  return outcomes;
}

function toResult(v: PreparedVariant, o: VariantOutcome | undefined, seed?: number): VariantResult {
  if (!o) throw new Error(`variant '${v.name}': no outcome`);
  if (!o.ok) throw new UserError(`variant '${v.name}'${seed === undefined ? '' : ` (seed ${seed})`}: ${o.message}`);
  return { name: v.name, overrides: v.overrides, digest: o.digest };
}

export function resultsTable(results: readonly VariantResult[]): ComparisonTable {
  return comparisonTable(results.map((r) => ({ name: r.name, summary: r.digest.summary })));
}

/** The comparison.json object: the command, the base scenario and, per variant, its overrides and summary. */
export function comparisonJson(setup: ComparisonSetup, results: readonly VariantResult[], command: string) {
  return {
    scenario: setup.base.name,
    seed: setup.base.seed,
    command,
    ...targetJson(setup.target, results.map((r) => r.name), results.map((r) => costSloPoint(r.digest.summary))),
    variants: results.map((r) => ({ name: r.name, overrides: r.overrides, summary: r.digest.summary })),
  };
}

type CostSlo = { costUsd: number; attainment: number };

/** `--target`'s answer for comparison.json: the cheapest variant attaining it (`meets`), else the closest. */
function targetJson(target: number | undefined, names: readonly string[], points: readonly CostSlo[]) {
  if (target === undefined) return {};
  const c = targetChoice(points, target);
  return { target: { attainment: target, meets: c.meets, variant: names[c.index]! } };
}

/** `--target`'s sentence for report.html (`describeTarget`), or nothing. */
function targetText(target: number | undefined, names: readonly string[], points: readonly CostSlo[]) {
  return target === undefined ? {} : { target: describeTarget(names, points, target) };
}

export function buildComparisonReport(setup: ComparisonSetup, results: readonly VariantResult[], command: string): Promise<string> {
  return renderReportHtml({
    kind: 'comparison',
    scenarioName: setup.base.name,
    seed: setup.base.seed,
    command,
    scenarioYaml: scenarioYaml(setup.base),
    variants: results.map((r) => ({ name: r.name, overrides: r.overrides })),
    runs: results.map((r) => ({ name: r.name, digest: r.digest })),
    ...targetText(setup.target, results.map((r) => r.name), results.map((r) => costSloPoint(r.digest.summary))),
  });
}

/** Writes `dir/comparison.json` and `dir/report.html`; returns their paths. */
export async function writeComparison(
  dir: string,
  setup: ComparisonSetup,
  results: readonly VariantResult[],
  command: string,
): Promise<{ json: string; html: string }> {
  return writeFiles(dir, comparisonJson(setup, results, command), await buildComparisonReport(setup, results, command));
}

function writeFiles(dir: string, json: object, html: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const paths = { json: join(dir, 'comparison.json'), html: join(dir, 'report.html') };
  writeFileSync(paths.json, JSON.stringify(json, null, 2) + '\n');
  writeFileSync(paths.html, html);
  return paths;
}

/** A comparison over several seeds: the seeds, the baseline variant of the paired block, and every variant's runs. */
export interface SeededComparison {
  seeds: number[];
  /** Index of the variant the paired block compares against (`--baseline`, default the first). */
  baseline: number;
  variants: SeededVariantResult[];
}

/** Each variant's summaries in the order of the seeds. */
export function seededEntries(c: SeededComparison): SeededEntry[] {
  return c.variants.map((v) => ({ name: v.name, summaries: v.perSeed.map((r) => r.digest.summary) }));
}

/** The first seed's run of every variant (what report.html's charts show). */
export function firstSeedResults(c: SeededComparison): VariantResult[] {
  return c.variants.map((v) => v.perSeed[0]!);
}

/**
 * comparison.json over several seeds. As without `--seeds`, plus: `seeds`; per variant `mean` and `ci95` (the 95 %
 * t-interval half-width) of each table column by key, in the summary's units, `nWithValue` (on how many seeds the
 * column had a value: `null` for a mean means no value, some seed having none), and `perSeed` (`{ seed, summary }`
 * per seed); `paired`, the differences against the baseline (`n` seeds, `nWithValue` with both values). `seed` and each variant's `summary` are the first
 * seed's run (what report.html's charts show).
 */
export function seededComparisonJson(setup: ComparisonSetup, c: SeededComparison, command: string) {
  const entries = seededEntries(c);
  const table = seededTable(entries);
  const paired = pairedBlock(entries, c.baseline);
  return {
    scenario: setup.base.name,
    seed: c.seeds[0]!,
    seeds: c.seeds,
    command,
    ...targetJson(setup.target, entries.map((e) => e.name), seededPoints(entries)),
    variants: c.variants.map((v, i) => ({
      name: v.name,
      overrides: v.overrides,
      summary: v.perSeed[0]!.digest.summary,
      ...seededStats(table, i),
      perSeed: v.perSeed.map((r, k) => ({ seed: c.seeds[k]!, summary: r.digest.summary })),
    })),
    paired: {
      baseline: paired.baseline,
      metrics: paired.metrics.map((m) => m.key),
      variants: paired.rows.map((r) => ({
        name: r.name,
        diff: Object.fromEntries(
          r.cells.map((x, j) => [paired.metrics[j]!.key, { mean: x.mean, ci95: x.ci95, n: x.n, nWithValue: x.nWithValue, wins: x.wins, excludesZero: x.excludesZero }]),
        ),
      })),
    },
  };
}

export function buildSeededComparisonReport(setup: ComparisonSetup, c: SeededComparison, command: string): Promise<string> {
  const results = firstSeedResults(c);
  const entries = seededEntries(c);
  return renderReportHtml({
    kind: 'comparison',
    scenarioName: setup.base.name,
    seed: c.seeds[0]!,
    command,
    scenarioYaml: scenarioYaml(setup.base),
    variants: results.map((r) => ({ name: r.name, overrides: r.overrides })),
    runs: results.map((r) => ({ name: r.name, digest: r.digest })),
    seeded: {
      seeds: c.seeds,
      table: seededTable(entries),
      paired: pairedBlock(entries, c.baseline),
      frontier: seededFrontier(entries),
      requests: requestsRange(entries),
      identical: seedsIdentical(entries),
    },
    ...targetText(setup.target, entries.map((e) => e.name), seededPoints(entries)),
  });
}

/** `writeComparison` over several seeds. */
export async function writeSeededComparison(dir: string, setup: ComparisonSetup, c: SeededComparison, command: string): Promise<{ json: string; html: string }> {
  return writeFiles(dir, seededComparisonJson(setup, c, command), await buildSeededComparisonReport(setup, c, command));
}
