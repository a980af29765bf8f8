import { z } from 'zod';
import { UserError } from '../../util/errors.ts';
import { parsePolicyOptions } from '../options.ts';
import { preserveScalerOptions } from '../scaling/preserve.ts';
import type { Scenario } from '../../scenario/schema.ts';
import { simulate } from '../../sim/simulator.ts';
import type { RequestLog } from '../../metrics/collector.ts';

export interface ProbeOptions {
  /**
   * Normalised-latency SLO, seconds per output token: a number (the paper's final value is 0.2), or
   * `isolated-3x`, the paper's rule behind that value: 3× the mean normalised latency of the mix's requests run
   * alone (measured here on the same instance; 0.190 on the routing scenario's mix).
   */
  sloS: number | 'isolated-3x';
  /** Share of requests that must meet it for a rate to count as sustained ("every request" is 1). */
  attainment: number;
  /** Seconds of Poisson arrivals per trial. */
  durationS: number;
  /** Rate bracket (req/s) and bisection steps. */
  loRatePerS: number;
  hiRatePerS: number;
  steps: number;
}

export const PROBE_DEFAULTS: ProbeOptions = { sloS: 0.2, attainment: 1, durationS: 600, loRatePerS: 0.1, hiRatePerS: 20, steps: 10 };

export interface CapacityProfile {
  /** Highest sustained request rate of one instance (req/s). */
  ratePerS: number;
  /** The normalised-latency SLO it was held to, s per output token. */
  sloS: number;
  /** Per-instance token rates at that load, tokens/s: prompt (μ_p), output (μ_d), both (μ_pd). */
  muPrefill: number;
  muDecode: number;
  muTotal: number;
  /** Trials run: rate → attainment. */
  trials: { ratePerS: number; attainment: number }[];
}

/**
 * PreServe's offline capacity profile (Alg. 1, seed 001 §3.1) done in simulation: one instance of the scenario's
 * first pool (same model, hardware, engine, perf model) receives Poisson arrivals with the scenario's synthetic
 * length mix at increasing rates; bisection finds the highest rate at which at least `attainment` of the requests
 * meet the normalised-latency SLO. μ are the prompt, output and total tokens per second that arrived at that rate
 * (measured from the trial's requests, so the length mix's sampling noise is included). With one fixed length mix
 * the three μ describe one operating point; they differ in use only when the forecast mix shifts.
 */
export function probeCapacity(base: Scenario, baseDir: string, o: Partial<ProbeOptions> = {}): CapacityProfile {
  const opts = { ...PROBE_DEFAULTS, ...o };
  const syn = probeWorkload(base);
  const pool = base.fleet.pools[0]!;
  const run = (rate: number, durationS: number, maxRequests?: number) => {
    const sc: Scenario = {
      ...base,
      workload: { synthetic: { ...syn, durationS, maxRequests, arrivals: { kind: 'poisson', ratePerS: rate } } },
      fleet: { ...base.fleet, pools: [{ ...pool, count: 1, minCount: 1, maxCount: 1 }] },
      routing: { policy: 'round-robin', options: {}, perPolicy: {}, dispatchDelayS: 0 }, // the instance's own capacity
      scaling: { ...base.scaling, policy: 'none', options: {}, actions: [] },
      endS: undefined,
    };
    return simulate(sc, baseDir, { mode: 'fast' }).log;
  };
  const servable = (log: RequestLog, i: number) => !(log.isDropped(i) && log.dropReasons[log.dropIdx[i]!] === 'context-length');
  let sloS: number;
  if (opts.sloS === 'isolated-3x') {
    // 300 requests ~100 s apart: each runs alone (a request takes seconds to tens of seconds).
    const log = run(0.01, 1e6, 300);
    let sum = 0;
    let n = 0;
    for (let i = 0; i < log.n; i++) {
      if (!servable(log, i) || !log.isDone(i)) continue;
      sum += log.e2e[i]! / Math.max(1, log.output[i]!);
      n++;
    }
    if (n === 0) throw new UserError(`capacity probe: no request of the mix completes on one instance; give scaling.options ${PRESERVE_MU_KEYS.join(', ')} yourself`);
    sloS = (3 * sum) / n;
  } else sloS = opts.sloS;
  const trial = (rate: number) => {
    const log = run(rate, opts.durationS);
    // Requests longer than the model's context are no capacity matter: left out of both the SLO share and μ.
    let p = 0;
    let d = 0;
    let n = 0;
    let met = 0;
    for (let i = 0; i < log.n; i++) {
      if (!servable(log, i)) continue;
      n++;
      p += log.input[i]!;
      d += log.output[i]!;
      if (log.isDone(i) && log.e2e[i]! / Math.max(1, log.output[i]!) <= sloS) met++;
    }
    const span = opts.durationS;
    return { attainment: n > 0 ? met / n : 0, muPrefill: p / span, muDecode: d / span };
  };
  const trials: { ratePerS: number; attainment: number }[] = [];
  let lo = opts.loRatePerS;
  let hi = opts.hiRatePerS;
  let best = trial(lo);
  trials.push({ ratePerS: lo, attainment: best.attainment });
  if (best.attainment < opts.attainment) throw new UserError(`capacity probe: even ${lo} req/s misses the ${sloS.toFixed(3)} s/token SLO on one instance; give scaling.options ${PRESERVE_MU_KEYS.join(', ')} yourself`);
  for (let s = 0; s < opts.steps; s++) {
    const mid = (lo + hi) / 2;
    const t = trial(mid);
    trials.push({ ratePerS: mid, attainment: t.attainment });
    if (t.attainment >= opts.attainment) {
      lo = mid;
      best = t;
    } else hi = mid;
  }
  return { ratePerS: lo, sloS, muPrefill: best.muPrefill, muDecode: best.muDecode, muTotal: best.muPrefill + best.muDecode, trials };
}

/** The synthetic workload whose length mix the probe replays: the scenario's own, or a trace's (input, output) pairs. */
function probeWorkload(base: Scenario): NonNullable<Scenario['workload']['synthetic']> {
  const w = base.workload;
  if (w.synthetic) return w.synthetic;
  if (w.trace) {
    const lengths = { kind: 'empirical' as const, path: w.trace.path, format: w.trace.format, maxPairs: 1_000_000 };
    return { durationS: PROBE_DEFAULTS.durationS, arrivals: { kind: 'poisson', ratePerS: 1 }, lengths };
  }
  throw new UserError(`capacity probe: the scenario needs a synthetic or trace workload (its length mix is probed), or give scaling.options ${PRESERVE_MU_KEYS.join(', ')}`);
}

/** PreServe's per-instance capacities: all three given, or none (then probed). */
export const PRESERVE_MU_KEYS = ['muPrefill', 'muDecode', 'muTotal'] as const;

/**
 * PreServe's scaler needs μ; when its options give none, they are probed here on the scenario (same pool, engine,
 * perf model and length mix), so a new model, GPU or trace needs no manual probe. Returns the options to use and,
 * when it probed, a one-line note for the user. Giving some but not all three μ is an error.
 */
export function withProbedCapacity(sc: Scenario, baseDir: string, options: Record<string, unknown>): { options: Record<string, unknown>; note?: string } {
  const given = PRESERVE_MU_KEYS.filter((k) => options[k] !== undefined);
  if (given.length === PRESERVE_MU_KEYS.length) return { options };
  if (given.length > 0) {
    throw new UserError(`scaling.options: give all of ${PRESERVE_MU_KEYS.join(', ')} or none (then they are probed); got only ${given.join(', ')}`);
  }
  // The scaler's own field validates it (the scaler itself parses the rest later).
  const shape = preserveScalerOptions.shape;
  const { probeSloS, probeAttainment } = parsePolicyOptions(z.object({ probeSloS: shape.probeSloS, probeAttainment: shape.probeAttainment }), options, ['scaling', 'options']);
  const p = probeCapacity(sc, baseDir, { sloS: probeSloS, attainment: probeAttainment });
  const note =
    `preserve: probed one ${sc.fleet.pools[0]!.model} instance at ${p.sloS.toFixed(3)} s/token: ${p.ratePerS.toFixed(2)} req/s sustained, ` +
    `muPrefill ${p.muPrefill.toFixed(1)}, muDecode ${p.muDecode.toFixed(1)}, muTotal ${p.muTotal.toFixed(1)} tokens/s (set them in scaling.options to skip the probe)`;
  return { options: { ...options, muPrefill: p.muPrefill, muDecode: p.muDecode, muTotal: p.muTotal }, note };
}
