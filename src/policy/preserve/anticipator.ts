import { z } from 'zod';
import type { InstanceView, RequestProgress } from '../types.ts';

/**
 * PreServe's instance load anticipator (seed 001 §3.3): the projected KV-cache occupancy U[j] of one instance
 * for each of the next `horizonSteps` decode iterations, built from the predicted lengths of the requests on it.
 *
 * The paper keeps an event-driven ring buffer (add after prefill, advance every iteration, subtract the unrealised
 * tail on an early finish, +0.2·D̂ "virtual extension" when a request outlives its prediction). Policies here see
 * a snapshot (`InstanceView.requests()`), so the same map is rebuilt from the snapshot in O(requests · N / blockTokens + N):
 * - add: a request enters the map once its prefill has completed (`generated ≥ 1`); waiting requests that never
 *   ran are not in it (paper). After g emitted tokens its footprint is P + g − 1 tokens (the paper's P + i with
 *   i = g − 1), growing by one token per iteration.
 * - planned length: D̂ starts at the prediction D̂0; while the request has outrun it (g > D̂), D̂ grows by
 *   e = max(1, round(0.2·D̂0)) (fixed step, digest default) or by max(1, round(0.2·D̂)) (`compound`). A request
 *   with g tokens occupies slots j ∈ [0, D̂ − g + 1) of the window: j = 0 is the iteration in progress.
 * - early finish: a finished request is gone from the snapshot, which is exactly the paper's "subtract [D, D̂)".
 * - preemption: the paper's map ignores it (a preempted request stays in it); `includePreempted` keeps that
 *   default and can drop waiting requests that already emitted tokens instead.
 * - blocks: the engine (vLLM) allocates KV in blocks, so a footprint of f tokens occupies ceil(f / B)·B tokens of M
 *   (`blockTokens` B, 16 by default; 1 counts single tokens).
 * Worked example (M = 1000, N = 4, blockTokens 1): one request P = 100, D̂0 = 3, g = 1 → slots j = 0..2 hold 100,
 * 101, 102 → U = [0.100, 0.101, 0.102, 0]; with 16-token blocks 112, 112, 112 → U = [0.112, 0.112, 0.112, 0].
 */
export const anticipatorOptions = z
  .object({
    /** l: iterations projected (paper: 100). */
    horizonSteps: z.number().int().min(1).max(100_000).default(100),
    /** Virtual extension as a share of the prediction (paper prints "0.2D"). */
    extensionFraction: z.number().positive().max(10).default(0.2),
    /** `fixed`: each extension is 0.2·D̂0 (digest default); `compound`: 0.2 × the already-extended length. */
    extensionMode: z.enum(['fixed', 'compound']).default('fixed'),
    /** Keep preempted requests (waiting again after emitting tokens) in the map, as the paper's map does. */
    includePreempted: z.boolean().default(true),
    /**
     * [ours, off by default] Also map requests that have not finished their first prefill (queued, or mid-chunk),
     * as if it completed now (footprint P + j for j < D̂): the paper's map leaves them out, so a long queue is
     * invisible to it.
     */
    includeWaiting: z.boolean().default(false),
    /**
     * KV block size in tokens: a request holding f tokens is counted as ceil(f / blockTokens) blocks, as vLLM (and
     * the engine here) allocates them; the paper reasons in vLLM's KV occupancy. 16 is vLLM's default and the
     * engine's (`engine.blockTokens`); 1 counts tokens, the paper's (P + i)/M read literally (sessions 1–16).
     */
    blockTokens: z.number().int().min(1).max(1024).default(16),
  })
  .strict();
export type AnticipatorOptions = z.output<typeof anticipatorOptions>;
export const ANTICIPATOR_DEFAULTS: AnticipatorOptions = anticipatorOptions.parse({});

/** The planned length of a request that has emitted `generated` tokens against a prediction of `predicted`. */
export function plannedLength(predicted: number, generated: number, o: Pick<AnticipatorOptions, 'extensionFraction' | 'extensionMode'>): number {
  const d0 = Math.max(1, predicted);
  if (generated <= d0) return d0;
  if (o.extensionMode === 'fixed') {
    const e = Math.max(1, Math.round(o.extensionFraction * d0));
    // Smallest k ≥ 1 with d0 + k·e ≥ generated: e.g. d0 = 100, e = 20, g = 130 → k = 2, D̂ = 140.
    return d0 + Math.ceil((generated - d0) / e) * e;
  }
  let d = d0;
  while (d < generated) d += Math.max(1, Math.round(o.extensionFraction * d));
  return d;
}

/** One instance's projection: read it before the next `project` call on the same anticipator (buffers are reused). */
export interface Projection {
  /** U[j] for j ∈ [0, horizonSteps): projected KV tokens in use over the capacity M. */
  readonly u: Float64Array;
  readonly capacityTokens: number;
  /** Block size the footprints were rounded up to (1: tokens). */
  readonly blockTokens: number;
  /** L_p without the new request: prompt (or recompute) tokens still to prefill on the instance. */
  readonly queuedPrefillTokens: number;
  /** L_d without the new request: Σ max(0, D̂ − g) over the requests counted by `decodeOf` (extended D̂). */
  readonly remainingDecodeTokens: number;
  /** Requests in the map. */
  readonly mapped: number;
}

/**
 * Rebuilds projections from instance snapshots. One object can serve every instance: `project` overwrites its
 * buffers, so callers consume a projection (score it, count its overloaded steps) before projecting the next
 * instance. No state survives between calls except the buffers, so there is nothing to invalidate.
 */
export class LoadAnticipator {
  readonly opts: AnticipatorOptions;
  private readonly u: Float64Array;
  /** Counting tokens: ends[n] is Σ footprint and count of mapped requests whose last slot is n − 1. */
  private readonly endBase: Float64Array;
  private readonly endCount: Float64Array;
  /** With KV blocks: the change at slot j of the blocks held by mapped requests (a difference array). */
  private readonly blockDelta: Float64Array;
  private readonly proj: { u: Float64Array; capacityTokens: number; blockTokens: number; queuedPrefillTokens: number; remainingDecodeTokens: number; mapped: number };

  constructor(opts: Partial<AnticipatorOptions> = {}, readonly decodeOf: 'running' | 'all' = 'running') {
    this.opts = { ...ANTICIPATOR_DEFAULTS, ...opts };
    const n = this.opts.horizonSteps;
    this.u = new Float64Array(n);
    this.endBase = new Float64Array(n + 1);
    this.endCount = new Float64Array(n + 1);
    this.blockDelta = new Float64Array(n + 1);
    this.proj = { u: this.u, capacityTokens: 0, blockTokens: this.opts.blockTokens, queuedPrefillTokens: 0, remainingDecodeTokens: 0, mapped: 0 };
  }

  /** The projection of one instance from its current requests. O(requests · horizonSteps / blockTokens + horizonSteps). */
  project(inst: InstanceView): Projection {
    return this.projectRequests(inst.requests(), inst.kvCapacityTokens);
  }

  projectRequests(reqs: readonly RequestProgress[], capacityTokens: number): Projection {
    const n = this.opts.horizonSteps;
    const endBase = this.endBase;
    const endCount = this.endCount;
    const bt = this.opts.blockTokens;
    const blockDelta = this.blockDelta;
    endBase.fill(0);
    endCount.fill(0);
    blockDelta.fill(0);
    let base = 0;
    let count = 0;
    let prefill = 0;
    let decode = 0;
    let mapped = 0;
    for (let k = 0; k < reqs.length; k++) {
      const r = reqs[k]!;
      prefill += r.prefillTarget - r.prefilled;
      const g = r.generated;
      const started = g >= 1 && (r.status === 'running' || this.opts.includePreempted);
      const d = started ? plannedLength(r.predictedOutputTokens, g, this.opts) : Math.max(1, r.predictedOutputTokens);
      if (this.decodeOf === 'all' || r.status === 'running') decode += Math.max(0, d - g);
      let f0: number;
      let slots: number;
      if (started) {
        f0 = r.inputTokens + g - 1;
        slots = d - g + 1;
      } else if (this.opts.includeWaiting && g === 0) {
        f0 = r.inputTokens;
        slots = d;
      } else continue;
      mapped++;
      if (bt > 1) {
        addBlocks(blockDelta, f0, slots, bt);
        continue;
      }
      base += f0;
      count++;
      if (slots < n) {
        endBase[slots] += f0;
        endCount[slots] += 1;
      }
    }
    // Division (not × 1/M) keeps thresholds exact: 950 tokens of 1,000 is 0.95, not 0.9500000000000001.
    const m = capacityTokens > 0 ? capacityTokens : Infinity;
    const u = this.u;
    let blocks = 0;
    for (let j = 0; j < n; j++) {
      base -= endBase[j]!;
      count -= endCount[j]!;
      blocks += blockDelta[j]!;
      u[j] = (base + j * count + blocks * bt) / m;
    }
    const p = this.proj;
    p.capacityTokens = capacityTokens;
    p.queuedPrefillTokens = prefill;
    p.remainingDecodeTokens = decode;
    p.mapped = mapped;
    return p;
  }
}

/** Tokens allocated for a footprint of `tokens`: whole blocks of `blockTokens`. */
export function blockRounded(tokens: number, blockTokens: number): number {
  return Math.ceil(tokens / blockTokens) * blockTokens;
}

/**
 * Adds the KV blocks of a request with footprint f0 + j over its slots j ∈ [0, slots) to the difference array
 * `delta`: ceil(f0 / B) at j = 0, one more each time its last block fills (at j = free + 1, free + 1 + B, … with
 * `free` tokens left in that block at j = 0), all released after its last slot. E.g. B = 16, f0 = 30, 5 slots →
 * 2 blocks, a 3rd from j = 3 (33 tokens), 3 released at j = 5.
 */
function addBlocks(delta: Float64Array, f0: number, slots: number, blockTokens: number): void {
  const n = delta.length - 1;
  const held = Math.ceil(f0 / blockTokens);
  delta[0] += held;
  const free = held * blockTokens - f0;
  for (let j = free + 1; j < Math.min(slots, n); j += blockTokens) delta[j] += 1;
  if (slots < n) delta[slots] -= Math.ceil((f0 + slots - 1) / blockTokens);
}

/** max_j U[j] over the window. */
export function peak(p: Projection): number {
  let m = 0;
  for (let j = 0; j < p.u.length; j++) if (p.u[j]! > m) m = p.u[j]!;
  return m;
}

/**
 * PreServe's `peakWith`: the peak of the window if a request with P prompt tokens and D̂ predicted output tokens
 * were added now: max_j (U[j] + (P + j)/M · [j < D̂]), P + j rounded up to whole blocks as in the projection.
 */
export function peakWith(p: Projection, promptTokens: number, predictedOutput: number): number {
  const cap = p.capacityTokens > 0 ? p.capacityTokens : Infinity;
  const d = Math.max(1, predictedOutput);
  let m = 0;
  for (let j = 0; j < p.u.length; j++) {
    const v = p.u[j]! + (j < d ? blockRounded(promptTokens + j, p.blockTokens) / cap : 0);
    if (v > m) m = v;
  }
  return m;
}

/** How many of the window's iterations are projected above `threshold` (paper: 0.95). */
export function stepsAbove(p: Projection, threshold: number): number {
  let c = 0;
  for (let j = 0; j < p.u.length; j++) if (p.u[j]! > threshold) c++;
  return c;
}
