import type { MessagePort } from 'node:worker_threads';
import { summarize } from '../metrics/summary.ts';
import type { Scenario } from '../scenario/schema.ts';
import { simulate } from '../sim/simulator.ts';
import { UserError } from '../util/errors.ts';
import { digestRun, type RunDigest } from './digest.ts';

/** One variant to simulate; plain data so it can be posted to a worker thread. */
export interface VariantTask {
  name: string;
  scenario: Scenario;
  baseDir: string;
  mode: 'fast' | 'step';
  /** Progress messages `{ simTimeS, arrived }` go here when given (worker threads). */
  port?: MessagePort;
}

/** A user mistake found while running (an unknown model, a bad router option) comes back as a message. */
export type VariantOutcome = { ok: true; digest: RunDigest } | { ok: false; message: string };

/**
 * Simulates one variant and digests it (summary, CDFs, downsampled timeline), so only a few hundred KB
 * cross the thread boundary instead of the per-request log. The wall time goes into `summary.sim` only.
 */
export function runVariant(task: VariantTask, onProgress?: (simTimeS: number, arrived: number) => void): VariantOutcome {
  try {
    const t0 = performance.now();
    const res = simulate(task.scenario, task.baseDir, { mode: task.mode, onProgress });
    const summary = summarize(res, (performance.now() - t0) / 1000);
    return { ok: true, digest: digestRun(summary, res.log, res.timeline.rows, res.timeline.intervalS, res.scenario.output.warmupS) };
  } catch (e) {
    if (e instanceof UserError) return { ok: false, message: e.message };
    throw e;
  }
}

/** The worker thread's entry (see worker.mjs): runs the task, reporting progress through its port. */
export function runVariantTask(task: VariantTask): VariantOutcome {
  const port = task.port;
  try {
    return runVariant(task, port ? (simTimeS, arrived) => port.postMessage({ simTimeS, arrived }) : undefined);
  } finally {
    port?.close();
  }
}
