/**
 * Capacity search (`llmfleet capacity`): the highest load a fleet carries at an SLO attainment target, or the fewest
 * instances of a pool that carry a load at it — Vidur-Search's and DistServe's question, answered by simulation.
 * Each probe is one simulation; the search brackets the boundary by doubling (or halving) and then bisects it, so it
 * assumes attainment falls as load rises and rises with instances. Its own probes can never show otherwise (each
 * new one lies strictly between the highest miss and the lowest pass), so a noisy boundary is best checked with
 * `compare --sweep` around the answer, or over several seeds.
 */

/** One simulation of the search: the knob's value and what the run attained. */
export interface CapacityProbe {
  /** `rate`: the load factor (× the scenario's arrival rate); `count`: the pool's instances. */
  value: number;
  attainment: number;
  meets: boolean;
  requests: number;
  /** Requests per second the run offered: its requests over the span of their arrivals. */
  offeredRatePerS: number;
  gpus: number;
  ttftP99S: number;
  tpotP99S: number;
  costUsd: number;
}

export interface CapacitySearch {
  /** `rate`: the largest factor that met the target; `count`: the fewest instances that did. Unset: none did. */
  best?: CapacityProbe;
  /** The tightest bracket found: `meets` met the target, `fails` did not (either unset when never seen). */
  bracket: { meets?: number; fails?: number };
  /** Whether the bracket closed (rate: within the tolerance; count: adjacent integers, or 1 met). */
  converged: boolean;
  probes: CapacityProbe[];
}

export interface RateSearchOptions {
  /** Stop when fails / meets ≤ 1 + tolerance (default 0.05). */
  tolerance?: number;
  /** At most this many simulations (default 16). */
  maxRuns?: number;
  /** The factors the workload allows (default 1e-3 … 1e6). */
  min?: number;
  max?: number;
}

/** The largest load factor meeting the target: from 1, doubling or halving to a bracket, then geometric bisection. */
export function searchMaxRate(probe: (factor: number) => CapacityProbe, opts: RateSearchOptions = {}): CapacitySearch {
  const tolerance = opts.tolerance ?? 0.05;
  const maxRuns = opts.maxRuns ?? 16;
  const min = opts.min ?? 1e-3;
  const max = opts.max ?? 1e6;
  const probes: CapacityProbe[] = [];
  let meets: number | undefined;
  let fails: number | undefined;
  const tryAt = (f: number) => {
    const p = probe(f);
    probes.push(p);
    if (p.meets) meets = f;
    else fails = f;
  };
  tryAt(Math.min(max, Math.max(min, 1)));
  while (fails === undefined && probes.length < maxRuns && meets! < max) tryAt(Math.min(max, meets! * 2));
  while (meets === undefined && probes.length < maxRuns && fails! > min) tryAt(Math.max(min, fails! / 2));
  while (meets !== undefined && fails !== undefined && fails / meets > 1 + tolerance && probes.length < maxRuns) tryAt(Math.sqrt(meets * fails));
  const converged = meets !== undefined && fails !== undefined && fails / meets <= 1 + tolerance;
  return result(probes, meets, fails, converged);
}

export interface CountSearchOptions {
  /** The first count tried (the scenario's; at least 1). */
  start: number;
  /** At most this many simulations (default 16). */
  maxRuns?: number;
  /** The most instances tried (default 1,000,000, the scenario's limit). */
  max?: number;
}

/** The fewest instances meeting the target: from `start`, halving or doubling to a bracket, then integer bisection. */
export function searchMinCount(probe: (count: number) => CapacityProbe, opts: CountSearchOptions): CapacitySearch {
  const maxRuns = opts.maxRuns ?? 16;
  const max = opts.max ?? 1_000_000;
  const probes: CapacityProbe[] = [];
  let meets: number | undefined;
  let fails: number | undefined;
  const tryAt = (n: number) => {
    const p = probe(n);
    probes.push(p);
    if (p.meets) meets = n;
    else fails = n;
  };
  tryAt(Math.min(max, Math.max(1, Math.round(opts.start))));
  while (fails === undefined && probes.length < maxRuns && meets! > 1) tryAt(Math.max(1, Math.floor(meets! / 2)));
  while (meets === undefined && probes.length < maxRuns && fails! < max) tryAt(Math.min(max, fails! * 2));
  while (meets !== undefined && fails !== undefined && meets - fails > 1 && probes.length < maxRuns) tryAt(Math.floor((meets + fails) / 2));
  const converged = meets !== undefined && (meets === 1 || (fails !== undefined && meets - fails === 1));
  return result(probes, meets, fails, converged);
}

function result(probes: CapacityProbe[], meets: number | undefined, fails: number | undefined, converged: boolean): CapacitySearch {
  const best = meets === undefined ? undefined : probes.find((p) => p.value === meets);
  return { ...(best ? { best } : {}), bracket: { ...(meets !== undefined ? { meets } : {}), ...(fails !== undefined ? { fails } : {}) }, converged, probes };
}
