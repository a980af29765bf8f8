import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { UserError } from '../util/errors.ts';
import type { RunDigest } from './digest.ts';
import { renderReportHtml } from './html.ts';
import type { VariantOutcome, VariantTask } from './run-variant.ts';
import { scenarioYaml } from './run-report.ts';
import { comparisonTable, type ComparisonTable } from './table.ts';
import { comparisonWorkerScript } from './worker-bundle.ts';
import type { ComparisonSetup, PreparedVariant } from './variants.ts';

export interface CompareOptions {
  mode: 'fast' | 'step';
  /** Worker threads (default: one per variant, at most the number of CPUs). 0 runs the variants one after another in this thread. */
  workers?: number;
  /** Simulated time and arrivals so far of variant `index` (arrives now and then from its worker). */
  onProgress?: (index: number, simTimeS: number, arrived: number) => void;
  /** Variant `index` has finished. */
  onDone?: (index: number) => void;
}

export interface VariantResult {
  name: string;
  overrides: string[];
  digest: RunDigest;
}

export function defaultWorkers(variants: number): number {
  return Math.max(1, Math.min(variants, availableParallelism()));
}

/**
 * Runs every variant on the same workload and seed, in parallel worker threads (piscina), and returns
 * the results in variant order. A variant failing on a user mistake ends the comparison with a UserError
 * naming the variant.
 */
export async function runComparison(setup: ComparisonSetup, opts: CompareOptions): Promise<VariantResult[]> {
  const workers = opts.workers ?? defaultWorkers(setup.variants.length);
  if (workers === 0) return runSequential(setup, opts);
  const threads = Math.min(workers, setup.variants.length);
  const pool = new Piscina({
    filename: await comparisonWorkerScript(),
    minThreads: threads,
    maxThreads: threads,
    // Tasks are whole simulations; a queue longer than the variant list never happens.
    maxQueue: setup.variants.length,
  });
  try {
    const outcomes = await Promise.all(
      setup.variants.map(async (v, i) => {
        const { port1, port2 } = new MessageChannel();
        port1.on('message', (m: { simTimeS: number; arrived: number }) => opts.onProgress?.(i, m.simTimeS, m.arrived));
        try {
          const task: VariantTask = { name: v.name, scenario: v.scenario, baseDir: setup.baseDir, mode: opts.mode, port: port2 };
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
    return outcomes.map((o, i) => toResult(setup.variants[i]!, o));
  } finally {
    await pool.destroy();
  }
}

async function runSequential(setup: ComparisonSetup, opts: CompareOptions): Promise<VariantResult[]> {
  // Imported here: a parallel comparison never runs the simulator in this thread.
  const { runVariant } = await import('./run-variant.ts');
  return setup.variants.map((v, i) => {
    const out = runVariant({ name: v.name, scenario: v.scenario, baseDir: setup.baseDir, mode: opts.mode }, (t, n) => opts.onProgress?.(i, t, n));
    opts.onDone?.(i);
    return toResult(v, out);
  });
}

function toResult(v: PreparedVariant, o: VariantOutcome): VariantResult {
  if (!o.ok) throw new UserError(`variant '${v.name}': ${o.message}`);
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
    variants: results.map((r) => ({ name: r.name, overrides: r.overrides, summary: r.digest.summary })),
  };
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
  });
}

/** Writes `dir/comparison.json` and `dir/report.html`; returns their paths. */
export async function writeComparison(
  dir: string,
  setup: ComparisonSetup,
  results: readonly VariantResult[],
  command: string,
): Promise<{ json: string; html: string }> {
  const html = await buildComparisonReport(setup, results, command);
  mkdirSync(dir, { recursive: true });
  const paths = { json: join(dir, 'comparison.json'), html: join(dir, 'report.html') };
  writeFileSync(paths.json, JSON.stringify(comparisonJson(setup, results, command), null, 2) + '\n');
  writeFileSync(paths.html, html);
  return paths;
}
