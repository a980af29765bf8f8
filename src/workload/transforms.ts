import { UserError } from '../util/errors.ts';
import type { Rng } from '../util/rng.ts';
import type { RequestSource, TraceRequest } from './types.ts';

/**
 * Streaming transforms over any RequestSource. Each one is lazy and re-iterable (a new pass re-reads its
 * input), yields NEW request objects (inputs are never mutated) and re-assigns ids 0.. in output order, so
 * any chain keeps the source contract: ids consecutive, arrivals non-decreasing.
 *
 * Deadlines move with their request: a window, a spread or a jitter shifts deadlineS by the same amount;
 * compression divides it by the same factor (the whole clock is rescaled).
 */

export interface TransformSpec {
  /**
   * Spread requests that share one arrival timestamp evenly over [t, t + spreadS) (trace seconds, > 0), clamped
   * to the next distinct timestamp; see `spreadTies`. For traces logged in whole seconds (BurstGPT, some Azure 2024).
   */
  spreadS?: number;
  /** Keep arrivals in [startS, endS) and re-base them so startS becomes 0. */
  window?: { startS: number; endS?: number };
  /** Divide every time by this factor (> 0): 2 ⇒ the trace plays twice as fast. */
  compress?: number;
  /** Multiply the request rate (> 0) by thinning or copying; see `rateScale`. */
  rateScale?: number;
  /** Jitter window for the copies made by rateScale > 1 (default 1 s). */
  rateScaleJitterS?: number;
  /** Keep at most this many requests. */
  limit?: number;
  /** Model labels: a name gives every request that model; a map renames the models it lists (others kept). */
  model?: string | Record<string, string>;
}

/**
 * Applies the transforms in a fixed order: model → spreadS → window → compress → rateScale → limit. The spread
 * comes first so that it works on the trace's own clock: `spreadS` is in trace seconds (like `window`), and a
 * `compress` after it shrinks the spread with every other time.
 */
export function applyTransforms(src: RequestSource, spec: TransformSpec, rng: Rng): RequestSource {
  let out = src;
  if (spec.model !== undefined) out = relabelModels(out, spec.model);
  if (spec.spreadS !== undefined) out = spreadTies(out, spec.spreadS);
  if (spec.window) out = timeWindow(out, spec.window.startS, spec.window.endS ?? Infinity);
  if (spec.compress !== undefined && spec.compress !== 1) out = compress(out, spec.compress);
  if (spec.rateScale !== undefined && spec.rateScale !== 1) out = rateScale(out, spec.rateScale, rng, spec.rateScaleJitterS);
  if (spec.limit !== undefined) out = limit(out, spec.limit);
  return out;
}

function retime(r: TraceRequest, id: number, arrivalS: number, deadlineS: number | undefined): TraceRequest {
  const o = { ...r, id, arrivalS };
  if (deadlineS !== undefined) o.deadlineS = deadlineS;
  return o;
}

function lazy(make: () => Iterator<TraceRequest>): RequestSource {
  return { [Symbol.iterator]: make };
}

/**
 * Sets request models: a name for every request, or a map from the trace's labels (BurstGPT's `ChatGPT`,
 * `GPT-4`) to the fleet's models. Requests whose label the map does not list keep it; unlabelled requests
 * stay unlabelled (the simulator gives them the first pool's model) unless `to` is a single name.
 */
export function relabelModels(src: RequestSource, to: string | Record<string, string>): RequestSource {
  const map = typeof to === 'string' ? undefined : new Map(Object.entries(to));
  return lazy(function* () {
    for (const r of src) {
      const model = map === undefined ? (to as string) : r.model === undefined ? undefined : (map.get(r.model) ?? r.model);
      yield model === undefined ? { ...r } : { ...r, model };
    }
  });
}

/**
 * Spreads ties: the k requests that share an arrival time t (a trace logged in whole seconds puts a second's
 * requests at one instant) arrive at t + j·span/k, j = 0..k-1 in trace order, where span = min(spreadS, gap to
 * the next distinct arrival time). Deterministic (no draws), order-preserving, and a lone request keeps its time.
 * The clamp keeps the output sorted: with spreadS larger than the gap (1 s ties 0.4 s before the next ones), an
 * unclamped group would overtake the next timestamp; clamped, its last request still lands before it
 * (t + (k-1)/k·span < t + span ≤ next). The last group has no next timestamp and takes the full spreadS.
 * Streaming: only the current group of equal times is held (with its first successor, which closes it), so a
 * file whose requests all share one time (an offline batch at 0) is held whole.
 */
export function spreadTies(src: RequestSource, spreadS: number): RequestSource {
  if (!(Number.isFinite(spreadS) && spreadS > 0)) throw new UserError(`spreadS: expected a number of seconds > 0, got ${spreadS}`);
  return lazy(function* () {
    let id = 0;
    const group: TraceRequest[] = [];
    const it = src[Symbol.iterator]();
    try {
      for (;;) {
        const step = it.next();
        const next = step.done ? undefined : step.value;
        if (group.length > 0 && (next === undefined || next.arrivalS !== group[0]!.arrivalS)) {
          const t = group[0]!.arrivalS;
          const k = group.length;
          const span = next === undefined ? spreadS : Math.min(spreadS, next.arrivalS - t);
          for (let j = 0; j < k; j++) {
            const r = group[j]!;
            const off = (j * span) / k;
            yield retime(r, id++, t + off, r.deadlineS === undefined ? undefined : r.deadlineS + off);
          }
          group.length = 0;
        }
        if (next === undefined) return;
        group.push(next);
      }
    } finally {
      it.return?.();
    }
  });
}

/** Requests with startS ≤ arrivalS < endS, re-based so that startS is time 0. Stops reading at endS. */
export function timeWindow(src: RequestSource, startS: number, endS = Infinity): RequestSource {
  if (!(Number.isFinite(startS) && startS >= 0) || !(endS > startS)) {
    throw new UserError(`time window: expected 0 ≤ startS < endS, got [${startS}, ${endS})`);
  }
  return lazy(function* () {
    let id = 0;
    for (const r of src) {
      if (r.arrivalS < startS) continue;
      if (r.arrivalS >= endS) break;
      yield retime(r, id++, r.arrivalS - startS, r.deadlineS === undefined ? undefined : r.deadlineS - startS);
    }
  });
}

/** Time compression: every time divided by `factor` (2 ⇒ twice the rate over half the duration). */
export function compress(src: RequestSource, factor: number): RequestSource {
  if (!(Number.isFinite(factor) && factor > 0)) throw new UserError(`compress: expected a factor > 0, got ${factor}`);
  return lazy(function* () {
    let id = 0;
    for (const r of src) {
      const t = r.arrivalS / factor;
      if (!Number.isFinite(t)) throw new UserError(`compress: factor ${factor} puts a request at t = ${r.arrivalS} s out of range (t / factor = ${t}); use a factor that keeps times finite`);
      yield retime(r, id++, t, r.deadlineS === undefined ? undefined : r.deadlineS / factor);
    }
  });
}

/**
 * Rate scaling by `factor` while keeping the arrival process's shape, seeded by `rng.fork('rate-scale')`
 * (each pass redraws the same stream, so a source is replayed identically).
 * - factor < 1: each request is kept with probability `factor` (Bernoulli thinning).
 * - factor > 1: each request is emitted ⌊factor⌋ times, plus once more with probability frac(factor)
 *   (1.5 ⇒ 1 or 2 copies, 1.5 on average). The original keeps its time; each extra copy lands at a uniform
 *   offset in [0, min(gap to the next request, jitterS)), offsets sorted, so order is kept without a buffer
 *   of more than one request. Copies of the last request share its time.
 */
export function rateScale(src: RequestSource, factor: number, rng: Rng, jitterS = 1): RequestSource {
  if (!(Number.isFinite(factor) && factor > 0)) throw new UserError(`rateScale: expected a factor > 0, got ${factor}`);
  if (!(jitterS >= 0)) throw new UserError(`rateScale: expected jitterS ≥ 0, got ${jitterS}`);
  if (factor < 1) {
    return lazy(function* () {
      const r0 = rng.fork('rate-scale');
      let id = 0;
      for (const r of src) if (r0.next() < factor) yield retime(r, id++, r.arrivalS, r.deadlineS);
    });
  }
  const whole = Math.floor(factor);
  const frac = factor - whole;
  return lazy(function* () {
    const r0 = rng.fork('rate-scale');
    const offsets: number[] = [];
    let id = 0;
    let held: TraceRequest | undefined;
    const it = src[Symbol.iterator]();
    try {
      for (;;) {
        const step = it.next();
        const next = step.done ? undefined : step.value;
        if (held !== undefined) {
          const copies = whole + (frac > 0 && r0.next() < frac ? 1 : 0);
          const span = next === undefined ? 0 : Math.min(next.arrivalS - held.arrivalS, jitterS);
          offsets.length = 0;
          for (let k = 1; k < copies; k++) offsets.push(r0.next() * span);
          offsets.sort((a, b) => a - b);
          yield retime(held, id++, held.arrivalS, held.deadlineS);
          for (const off of offsets) {
            yield retime(held, id++, held.arrivalS + off, held.deadlineS === undefined ? undefined : held.deadlineS + off);
          }
        }
        if (next === undefined) return;
        held = next;
      }
    } finally {
      it.return?.();
    }
  });
}

/** At most `n` requests (n ≥ 0 integer); stops reading its input after the n-th. */
export function limit(src: RequestSource, n: number): RequestSource {
  if (!(Number.isInteger(n) && n >= 0)) throw new UserError(`limit: expected an integer ≥ 0, got ${n}`);
  return lazy(function* () {
    if (n === 0) return;
    let id = 0;
    for (const r of src) {
      yield retime(r, id++, r.arrivalS, r.deadlineS);
      if (id >= n) return;
    }
  });
}
