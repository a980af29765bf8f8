import type { SimRequest } from '../engine/request.ts';
import { selectDist, type Dist } from './stats.ts';

/** Latency targets a request must meet to count as attaining its SLO. */
export interface SloTargets {
  ttftS: number;
  tpotS: number;
  /**
   * PreServe's SLO (seed 001 §4): when set, a request meets its SLO when E2E / output tokens is at most this, and
   * the TTFT and TPOT targets are reported (`ttftAttainment`, `tpotAttainment`) but not judged.
   */
  normalizedE2eS?: number;
  /** Utility a request earns when it meets both targets. */
  utility?: number;
}

/** The targets a request is judged by, as printed: "TTFT ≤ 2 s, TPOT ≤ 0.2 s" or "E2E/token ≤ 0.2 s". */
export function sloTargetsText(slo: Pick<SloTargets, 'ttftS' | 'tpotS' | 'normalizedE2eS'>): string {
  return slo.normalizedE2eS === undefined ? `TTFT ≤ ${slo.ttftS} s, TPOT ≤ ${slo.tpotS} s` : `E2E/token ≤ ${slo.normalizedE2eS} s`;
}

/** Status codes of a request's final record. */
const DONE = 1;
const DROPPED = 2;

/**
 * Per-request outcomes in compact columns indexed by request id (about 60 bytes a request, so a 1 M-request
 * run keeps ~60 MB instead of the request objects). Requests neither finished nor dropped are "unfinished" at the
 * end; `settleUnfinished` records what is known of them then (instance, queue time, TTFT, preemptions).
 */
export class RequestLog {
  private cap = 1024;
  n = 0;
  arrival = new Float64Array(this.cap);
  /** NaN until known (`hasQueue`, `hasTtft`). */
  queue = new Float64Array(this.cap).fill(NaN);
  ttft = new Float64Array(this.cap).fill(NaN);
  e2e = new Float64Array(this.cap);
  input = new Int32Array(this.cap);
  output = new Int32Array(this.cap);
  instance = new Int32Array(this.cap);
  preemptions = new Int32Array(this.cap);
  status = new Uint8Array(this.cap);
  tierIdx = new Uint16Array(this.cap);
  modelIdx = new Uint16Array(this.cap);
  dropIdx = new Uint16Array(this.cap);
  readonly tiers: string[] = [];
  readonly models: string[] = [];
  readonly dropReasons: string[] = [];
  private readonly tierIndex = new Map<string, number>();
  private readonly modelIndex = new Map<string, number>();
  private readonly dropIndex = new Map<string, number>();
  /**
   * Requests arrived and not yet finished or dropped, for `settleUnfinished` (only the ones in flight), when the
   * log tracks them: a run cut at `endS` (the only way a simulation leaves requests unfinished) does.
   */
  private readonly open: Map<number, SimRequest> | null;

  /** `trackUnfinished`: keep the requests in flight, so that `settleUnfinished` can record what they got to. */
  constructor(trackUnfinished = false) {
    this.open = trackUnfinished ? new Map() : null;
  }

  /** Registers an arrived request (its id must be the next one). */
  arrive(r: SimRequest): void {
    if (r.id >= this.cap) this.grow(r.id + 1);
    const i = r.id;
    this.n = Math.max(this.n, i + 1);
    this.arrival[i] = r.arrivalS;
    this.input[i] = r.inputTokens;
    this.output[i] = r.outputTokens;
    this.instance[i] = -1;
    this.tierIdx[i] = intern(this.tierIndex, this.tiers, r.tier);
    this.modelIdx[i] = intern(this.modelIndex, this.models, r.model);
    this.open?.set(i, r);
  }

  finish(r: SimRequest): void {
    const i = r.id;
    this.open?.delete(i);
    this.status[i] = DONE;
    this.instance[i] = r.instance;
    this.queue[i] = r.firstScheduledS - r.arrivalS;
    this.ttft[i] = r.firstTokenS - r.arrivalS;
    this.e2e[i] = r.finishS - r.arrivalS;
    this.preemptions[i] = r.preemptions;
  }

  drop(r: SimRequest, reason: string): void {
    const i = r.id;
    this.open?.delete(i);
    this.status[i] = DROPPED;
    this.instance[i] = r.instance;
    this.dropIdx[i] = intern(this.dropIndex, this.dropReasons, reason);
  }

  /**
   * At the end of a run, records what is known of every request still in flight (unfinished; only with
   * `trackUnfinished`, else nothing is known of them): the instance it is
   * at (-1 when none, e.g. on its way over the network), its queue time once first scheduled, its TTFT once its
   * first token came, and its preemptions. Unknown times stay NaN (`hasQueue`, `hasTtft`); E2E and TPOT stay unknown.
   */
  settleUnfinished(): void {
    if (!this.open) return;
    for (const [i, r] of this.open) {
      this.instance[i] = r.instance;
      this.queue[i] = r.firstScheduledS >= 0 ? r.firstScheduledS - r.arrivalS : NaN;
      this.ttft[i] = r.firstTokenS >= 0 ? r.firstTokenS - r.arrivalS : NaN;
      this.preemptions[i] = r.preemptions;
    }
    this.open.clear();
  }

  /**
   * A request measured outside the simulator (a live replay, src/live/replay.ts): `outcome` gives its client-side
   * TTFT and E2E and the output tokens received (queue time is not observable there: 0), or why it failed.
   */
  measured(
    r: { id: number; arrivalS: number; inputTokens: number; outputTokens: number; model?: string; tier?: string },
    outcome: { ttftS: number; e2eS: number; outputTokens: number } | { failed: string },
  ): void {
    if (r.id >= this.cap) this.grow(r.id + 1);
    const i = r.id;
    this.n = Math.max(this.n, i + 1);
    this.arrival[i] = r.arrivalS;
    this.input[i] = r.inputTokens;
    this.instance[i] = -1;
    this.tierIdx[i] = intern(this.tierIndex, this.tiers, r.tier ?? '');
    this.modelIdx[i] = intern(this.modelIndex, this.models, r.model ?? '');
    if ('failed' in outcome) {
      this.output[i] = r.outputTokens;
      this.status[i] = DROPPED;
      this.dropIdx[i] = intern(this.dropIndex, this.dropReasons, outcome.failed);
      return;
    }
    this.output[i] = outcome.outputTokens;
    this.status[i] = DONE;
    this.queue[i] = 0;
    this.ttft[i] = outcome.ttftS;
    this.e2e[i] = outcome.e2eS;
  }

  isDone(i: number): boolean {
    return this.status[i] === DONE;
  }
  isDropped(i: number): boolean {
    return this.status[i] === DROPPED;
  }

  /** Whether the queue time is known: completed, or unfinished and already scheduled when the run ended. */
  hasQueue(i: number): boolean {
    return !this.isDropped(i) && !Number.isNaN(this.queue[i]!);
  }

  /** Whether the TTFT is known: completed, or unfinished with its first token when the run ended. */
  hasTtft(i: number): boolean {
    return !this.isDropped(i) && !Number.isNaN(this.ttft[i]!);
  }

  /** A completed request with more than one output token: only these have a TPOT (the time between tokens). */
  hasTpot(i: number): boolean {
    return this.isDone(i) && this.output[i]! > 1;
  }

  /**
   * Time per output token after the first. A one-token output has none (`hasTpot` is false); it is 0 here so
   * that such a request meets any TPOT target (the SLO check), never as a sample of the TPOT distribution.
   */
  tpot(i: number): number {
    return this.output[i]! > 1 ? (this.e2e[i]! - this.ttft[i]!) / (this.output[i]! - 1) : 0;
  }

  private grow(min: number): void {
    let cap = this.cap;
    while (cap < min) cap *= 2;
    const g = <T extends Float64Array | Int32Array | Uint8Array | Uint16Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(cap);
      b.set(a);
      return b;
    };
    this.arrival = g(this.arrival);
    const old = this.queue.length;
    this.queue = g(this.queue).fill(NaN, old);
    this.ttft = g(this.ttft).fill(NaN, old);
    this.e2e = g(this.e2e);
    this.input = g(this.input);
    this.output = g(this.output);
    this.instance = g(this.instance);
    this.preemptions = g(this.preemptions);
    this.status = g(this.status);
    this.tierIdx = g(this.tierIdx);
    this.modelIdx = g(this.modelIdx);
    this.dropIdx = g(this.dropIdx);
    this.cap = cap;
  }
}

function intern(index: Map<string, number>, list: string[], s: string): number {
  let i = index.get(s);
  if (i === undefined) {
    i = list.length;
    list.push(s);
    index.set(s, i);
  }
  return i;
}

/**
 * TPOT over the requests that have one: completed with more than one output token (`count` of them). With
 * `count` 0 (every completed request had one output token, or none completed) there is no TPOT: the statistics
 * are then written as 0 and mean "no value" (tables print `–`).
 */
export type TpotDist = { count: number } & Dist;

export interface LatencyBlock {
  requests: { total: number; completed: number; dropped: number; unfinished: number };
  ttft: Dist;
  tpot: TpotDist;
  /** SplitwiseSim's time between tokens: (E2E − TTFT) / output tokens (all of them, unlike TPOT). */
  tbt: Dist;
  e2e: Dist;
  queue: Dist;
  normalizedE2e: Dist;
  slo: {
    ttftS: number;
    tpotS: number;
    /** Set when the SLO is on normalised latency (then `attainment` is judged on it alone). */
    normalizedE2eS?: number;
    attainment: number;
    ttftAttainment: number;
    tpotAttainment: number;
    /** With a utility per request: what the requests that met their targets earned, out of what all could. */
    utility?: { perRequest: number; earned: number; possible: number };
  };
}

/**
 * Latency distributions and SLO attainment over the requests that pass `filter`. Attainment counts every
 * request in the denominator: a dropped or unfinished request misses its SLO.
 */
export function latencyBlock(log: RequestLog, slo: SloTargets, filter: (i: number) => boolean): LatencyBlock {
  // Indices of the completed requests first, then one exact-size column per metric, sorted in place and
  // dropped before the next: a 20 M-request week then peaks at one column (160 MB), not six growing arrays.
  let done = new Int32Array(1024);
  let completed = 0;
  let multiToken = 0;
  let total = 0;
  let dropped = 0;
  let okSlo = 0;
  let okTtft = 0;
  let okTpot = 0;
  for (let i = 0; i < log.n; i++) {
    if (!filter(i)) continue;
    total++;
    if (log.isDropped(i)) dropped++;
    if (!log.isDone(i)) continue;
    if (completed === done.length) {
      const grown = new Int32Array(done.length * 2);
      grown.set(done);
      done = grown;
    }
    done[completed++] = i;
    if (log.hasTpot(i)) multiToken++;
    const a = log.ttft[i]! <= slo.ttftS;
    const b = log.tpot(i) <= slo.tpotS;
    if (a) okTtft++;
    if (b) okTpot++;
    if (slo.normalizedE2eS === undefined ? a && b : log.e2e[i]! / log.output[i]! <= slo.normalizedE2eS) okSlo++;
  }
  const column = (value: (i: number) => number, keep: (i: number) => boolean = () => true, size = completed): Dist => {
    const a = new Float64Array(size);
    let k = 0;
    for (let j = 0; j < completed; j++) {
      const i = done[j]!;
      if (keep(i)) a[k++] = value(i);
    }
    return selectDist(a);
  };
  const ttft = column((i) => log.ttft[i]!);
  const tpot: TpotDist = { count: multiToken, ...column((i) => log.tpot(i), (i) => log.hasTpot(i), multiToken) };
  const tbt = column((i) => (log.e2e[i]! - log.ttft[i]!) / log.output[i]!);
  const e2e = column((i) => log.e2e[i]!);
  const queue = column((i) => log.queue[i]!);
  const norm = column((i) => log.e2e[i]! / log.output[i]!);
  const frac = (x: number) => (total ? x / total : 0);
  return {
    requests: { total, completed, dropped, unfinished: total - completed - dropped },
    ttft,
    tpot,
    tbt,
    e2e,
    queue,
    normalizedE2e: norm,
    slo: {
      ttftS: slo.ttftS,
      tpotS: slo.tpotS,
      ...(slo.normalizedE2eS === undefined ? {} : { normalizedE2eS: slo.normalizedE2eS }),
      attainment: frac(okSlo),
      ttftAttainment: frac(okTtft),
      tpotAttainment: frac(okTpot),
      ...(slo.utility === undefined ? {} : { utility: { perRequest: slo.utility, earned: okSlo * slo.utility, possible: total * slo.utility } }),
    },
  };
}
