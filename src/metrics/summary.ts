import type { SimResult } from '../sim/simulator.ts';
import { instanceHours } from '../sim/fleet.ts';
import { latencyBlock, type LatencyBlock, type SloTargets } from './collector.ts';
import type { SpotSummary } from '../policy/sageserve/spot.ts';
import { latencyBy3h, type SageServeStats } from '../policy/sageserve/stats.ts';
import type { MigrationSummary } from '../sim/migration.ts';

export interface Summary extends Omit<LatencyBlock, 'requests' | 'slo'> {
  scenario: string;
  seed: number;
  /**
   * `skippedInTrace`: trace rows never replayed, by reason (not in `total`); `dropReasons`: requests dropped. Only
   * with `endS`: `afterEnd`, requests of the workload arriving after it, never replayed (not in `total`), and
   * `afterEndComplete`, false when the workload goes on past more than that many (it was not read to its end).
   */
  requests: LatencyBlock['requests'] & {
    dropReasons: Record<string, number>;
    skippedInTrace: Record<string, number>;
    afterEnd?: number;
    afterEndComplete?: boolean;
    /** Only with `output.warmupS`: requests arriving before it, served but in no figure here (requests.csv has them). */
    warmup?: number;
  };
  /**
   * `attainment` etc. judge every request by the top-level targets. With tiers, `attainmentByTier` is the share of
   * all requests that met their own tier's targets (untiered ones: the top-level targets), the run's headline.
   */
  slo: LatencyBlock['slo'] & { attainmentByTier?: number };
  throughput: { requestsPerSecond: number; inputTokensPerSecond: number; outputTokensPerSecond: number };
  fleet: {
    /** Instances ever started. */
    instances: number;
    /** Most instances alive (provisioning, ready or draining) at once. */
    peakInstances: number;
    instanceHours: number;
    gpuHours: number;
    wastedGpuHours: number;
    /**
     * SageServe's instance-hours metric: per 15-minute bin up to the last arrival, the most instances alive
     * (provisioning, ready or draining) at any instant in it, × ¼ h. Penalises churn; exact, from each instance's
     * start and stop.
     */
    instanceHours15mMax: number;
    costUsd: number;
    pools: Record<string, { instances: number; instanceHours: number; gpuHours: number; costUsd: number }>;
  };
  /** `migrations` only with a router that migrates requests (Llumnix with `migration.enabled`). */
  engine: {
    iterations: number;
    preemptions: number;
    migrations?: MigrationSummary;
    /** With engine.prefixCache: the prompt tokens of every prefill started (whole run, warm-up included) and those the cache spared. */
    prefixCache?: { queryTokens: number; hitTokens: number; hitRate: number };
  };
  tiers?: Record<string, LatencyBlock>;
  /** Only with requests for more than one model: each model's requests, judged by the top-level targets. */
  models?: Record<string, LatencyBlock>;
  /**
   * Only with more than one pool: the requests each pool served or dropped (by the instance a request was last at),
   * judged by the top-level targets. A request never placed on an instance (dropped at the router, say) is in none.
   */
  pools?: Record<string, LatencyBlock>;
  /**
   * Only when the SLO sets a utility: what requests earned by meeting their targets (each its tier's utility,
   * or the top-level one), out of what all of them could (SageServe's per-request utility).
   */
  utility?: { earned: number; possible: number };
  /** Only with a spot pool (`fleet.spot`): donations, reclaims by source, spot instance-hours and revenue. */
  spot?: SpotSummary;
  /** Only with the `sageserve` router: p95 latencies per 3-hour bin and the released code's memory statistic. */
  sageserve?: SageServeStats;
  /** What the run decided that the scenario did not say (e.g. PreServe capacities from the probe). */
  notes: string[];
  sim: { simulatedSeconds: number; events: number; wallSeconds: number };
}

/**
 * The run's summary.json. Everything but `sim.wallSeconds` (and `sim.events`, which counts differently in
 * step and fast mode) depends only on the scenario and the seed; keys are in a fixed order.
 */
export function summarize(res: SimResult, wallSeconds: number): Summary {
  const { log, scenario: sc, endS } = res;
  // With a warm-up, every request figure below is over the requests arriving from warmupS on (`measured`).
  const warmupS = sc.output.warmupS;
  const measured = (i: number) => log.arrival[i]! >= warmupS;
  const block = (slo: SloTargets, keep: (i: number) => boolean) => latencyBlock(log, slo, warmupS > 0 ? (i) => measured(i) && keep(i) : keep);
  const all = block(sc.slo, () => true);
  const dropReasons: Record<string, number> = {};
  let inTok = 0;
  let outTok = 0;
  for (let i = 0; i < log.n; i++) {
    if (!measured(i)) continue;
    if (log.isDropped(i)) {
      const k = log.dropReasons[log.dropIdx[i]!]!;
      dropReasons[k] = (dropReasons[k] ?? 0) + 1;
    } else if (log.isDone(i)) {
      inTok += log.input[i]!;
      outTok += log.output[i]!;
    }
  }
  const pools: Summary['fleet']['pools'] = {};
  let instH = 0;
  let gpuH = 0;
  let wasted = 0;
  let cost = 0;
  for (const p of res.pools) pools[p.name] = { instances: 0, instanceHours: 0, gpuHours: 0, costUsd: 0 };
  for (const inst of res.fleet.instances) {
    const h = instanceHours(inst, endS);
    const p = pools[inst.pool]!;
    const devices = inst.poolRt.devices;
    p.instances++;
    p.instanceHours += h.instanceHours;
    p.gpuHours += h.instanceHours * devices;
    p.costUsd += h.instanceHours * devices * inst.poolRt.priceUsdPerDeviceHour;
    wasted += h.wastedHours * devices;
  }
  for (const k of Object.keys(pools).sort()) {
    instH += pools[k]!.instanceHours;
    gpuH += pools[k]!.gpuHours;
    cost += pools[k]!.costUsd;
  }
  const span = endS - warmupS > 0 ? endS - warmupS : 1;
  const summary: Summary = {
    scenario: sc.name,
    seed: sc.seed,
    requests: {
      ...all.requests,
      dropReasons: sortKeys(dropReasons),
      skippedInTrace: sortKeys(res.skippedInTrace),
      ...(res.afterEnd ? { afterEnd: res.afterEnd.requests, afterEndComplete: res.afterEnd.complete } : {}),
      ...(warmupS > 0 ? { warmup: log.n - all.requests.total } : {}),
    },
    ttft: all.ttft,
    tpot: all.tpot,
    tbt: all.tbt,
    e2e: all.e2e,
    queue: all.queue,
    normalizedE2e: all.normalizedE2e,
    slo: all.slo,
    throughput: { requestsPerSecond: all.requests.completed / span, inputTokensPerSecond: inTok / span, outputTokensPerSecond: outTok / span },
    fleet: {
      instances: res.fleet.instances.length,
      peakInstances: peakInstances(res),
      instanceHours: instH,
      gpuHours: gpuH,
      wastedGpuHours: wasted,
      instanceHours15mMax: binnedInstanceHours(res, 900),
      costUsd: cost,
      pools,
    },
    engine: {
      iterations: res.iterations,
      preemptions: res.preemptions,
      ...(res.migrations ? { migrations: res.migrations } : {}),
      ...(res.prefixCache ? { prefixCache: { ...res.prefixCache, hitRate: res.prefixCache.queryTokens > 0 ? res.prefixCache.hitTokens / res.prefixCache.queryTokens : 0 } } : {}),
    },
    notes: [...res.notes, ...unusedTierSlos(sc.slo.tiers, log.tiers), ...unservedModels(res), ...lateFirstArrival(res), ...longDrain(res), ...warmupNote(res, all.requests.total)],
    sim: { simulatedSeconds: endS, events: res.events, wallSeconds },
  };
  if (res.spot) {
    const sim = summary.sim;
    delete (summary as Partial<Summary>).sim; // re-added after `spot`: `sim` stays last
    summary.spot = res.spot;
    summary.sim = sim;
  }
  const tierNames = log.tiers.filter((t) => t !== '');
  const byUtility: LatencyBlock[] = [all];
  if (tierNames.length > 0) {
    // Tier names are trace labels: looked up as own keys and stored with fromEntries, so `__proto__` or
    // `constructor` is a tier like any other (plain indexing would read or set the prototype).
    const blocks = [...tierNames].sort().map((name): [string, LatencyBlock] => {
      const idx = log.tiers.indexOf(name);
      const slo = { ...sc.slo, ...(Object.hasOwn(sc.slo.tiers, name) ? sc.slo.tiers[name] : {}) };
      return [name, block(slo, (i) => log.tierIdx[i] === idx)];
    });
    summary.tiers = Object.fromEntries(blocks);
    // Each request is judged, and earns, by its own tier's targets: the tier blocks, plus the untiered requests if any.
    const untiered = log.tiers.indexOf('');
    byUtility.length = 0;
    byUtility.push(...blocks.map(([, b]) => b));
    if (untiered >= 0) byUtility.push(block(sc.slo, (i) => log.tierIdx[i] === untiered));
    delete summary.slo.utility;
    const met = byUtility.reduce((n, b) => n + Math.round(b.slo.attainment * b.requests.total), 0);
    summary.slo.attainmentByTier = all.requests.total > 0 ? met / all.requests.total : 0;
  }
  const earning = byUtility.filter((b) => b.slo.utility !== undefined);
  if (earning.length > 0) {
    summary.utility = { earned: 0, possible: 0 };
    for (const b of earning) {
      summary.utility.earned += b.slo.utility!.earned;
      summary.utility.possible += b.slo.utility!.possible;
    }
  }
  if (log.models.length > 1) {
    const models = [...log.models].sort();
    summary.models = Object.fromEntries(
      models.map((m): [string, LatencyBlock] => {
        const idx = log.models.indexOf(m);
        return [m, block(sc.slo, (i) => log.modelIdx[i] === idx)];
      }),
    );
  }
  if (res.pools.length > 1) {
    const names = res.pools.map((p) => p.name);
    const poolIdx = Int32Array.from(res.fleet.instances, (inst) => names.indexOf(inst.pool));
    summary.pools = Object.fromEntries(
      [...names].sort().map((name): [string, LatencyBlock] => {
        const idx = names.indexOf(name);
        return [name, block(sc.slo, (i) => log.instance[i]! >= 0 && poolIdx[log.instance[i]!] === idx)];
      }),
    );
  }
  if (sc.routing.policy === 'sageserve') summary.sageserve = { latencyBy3h: latencyBy3h(log), memoryUtil: res.timeline.endpointMemory.spread() };
  // Keep `sim` last so the deterministic part of the file reads first.
  const { sim, ...rest } = summary;
  return { ...rest, sim } as Summary;
}

/**
 * Per `binS` bin of the workload's span (from 0 to the bin holding the last arrival, as SageServe's script bins the
 * trace's day; the drain after the last arrival is not charged a bin of its own), the most instances alive at any
 * instant in it, summed, × `binS` in hours. Exact: a start or stop between two timeline rows counts in its bin.
 * E.g. 9 instances for a 1-hour trace: 4 bins × 9 × ¼ h = 9.0.
 */
function binnedInstanceHours(res: SimResult, binS: number): number {
  const changes = instanceChanges(res);
  const horizon = res.log.n > 0 ? res.log.arrival[res.log.n - 1]! : res.endS;
  const bins = Math.floor(horizon / binS) + 1;
  let s = 0;
  let alive = 0;
  let k = 0;
  for (let b = 0; b < bins; ) {
    // Alive at the bin's first instant (every change up to it), then after each change inside it.
    while (k < changes.length && changes[k]![0] <= b * binS) alive += changes[k++]![1];
    let peak = alive;
    while (k < changes.length && Math.floor(changes[k]![0] / binS) === b) peak = Math.max(peak, (alive += changes[k++]![1]));
    s += peak;
    b++;
    // Bins before the next change hold `alive` throughout: counted at once (a trace gap of years is O(1), not a loop).
    const next = k < changes.length ? Math.min(bins, Math.floor(changes[k]![0] / binS)) : bins;
    if (next > b) {
      s += alive * (next - b);
      b = next;
    }
  }
  return (s * binS) / 3600;
}

/** Exact, from each instance's start and stop (not the timeline's samples, which can miss a short peak). */
function peakInstances(res: SimResult): number {
  let alive = 0;
  let peak = 0;
  for (const [, d] of instanceChanges(res)) peak = Math.max(peak, (alive += d));
  return peak;
}

/**
 * Every instance's start (+1) and stop (−1), in time order; at the same instant a stop comes before a start: the
 * two never run together (so the count after each change is never above the count at that instant).
 */
function instanceChanges(res: SimResult): [number, number][] {
  const changes: [number, number][] = [];
  for (const inst of res.fleet.instances) {
    changes.push([inst.createdS, 1]);
    if (inst.stoppedS >= 0) changes.push([inst.stoppedS, -1]);
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return changes;
}

/** The SLO attainment a run is judged by: each request by its own tier's targets when there are tiers. */
export function headlineAttainment(s: Summary): number {
  return s.slo.attainmentByTier ?? s.slo.attainment;
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Names the models of requests dropped as `unknown-model` (BurstGPT's ChatGPT, say) and how to map them. */
function unservedModels(res: SimResult): string[] {
  const { log } = res;
  const reason = log.dropReasons.indexOf('unknown-model');
  if (reason < 0) return [];
  const count = new Map<string, number>();
  for (let i = 0; i < log.n; i++) {
    if (log.isDropped(i) && log.dropIdx[i] === reason) {
      const m = log.models[log.modelIdx[i]!]!;
      count.set(m, (count.get(m) ?? 0) + 1);
    }
  }
  const served = [...new Set(res.pools.map((p) => p.model))];
  const names = [...count].sort((a, b) => b[1] - a[1]);
  const listed = names.slice(0, 5).map(([m, n]) => `${m} (${n})`).join(', ') + (names.length > 5 ? `, and ${names.length - 5} more` : '');
  return [
    `requests naming models no pool serves were dropped: ${listed}; the pools serve ${served.join(', ')}. ` +
      `Map them with --set workload.transforms.model=${served[0]} (every request) or --set 'workload.transforms.model={${names[0]![0]}: ${served[0]}}'`,
  ];
}

/** A trace whose clock starts long before its first request (canonical files keep absolute times) bills the idle fleet. */
function lateFirstArrival(res: SimResult): string[] {
  const first = res.log.n > 0 ? res.log.arrival[0]! : 0;
  if (first < 60 || first < 0.1 * res.endS) return [];
  return [
    `the first request arrives at ${first.toFixed(0)} s; the fleet runs, and is billed, from 0 s. ` +
      `--set workload.transforms.window.startS=${Math.floor(first)} starts the run there`,
  ];
}

/**
 * A fleet that falls behind runs on after the last arrival until its backlog is done, and is billed for it: costs of
 * runs that differ mostly in how long they drained compare the drain, not the serving. Say so when it is a large part.
 */
function longDrain(res: SimResult): string[] {
  if (res.log.n === 0) return [];
  const last = res.log.arrival[res.log.n - 1]!;
  const drain = res.endS - last;
  if (drain < 60 || drain < 0.1 * res.endS) return [];
  return [
    `the run went on ${drain.toFixed(0)} s after the last arrival (at ${last.toFixed(0)} s) to finish the requests in flight: ` +
      `${((drain / res.endS) * 100).toFixed(0)}% of the billed time, which the cost includes`,
  ];
}

/** A warm-up that leaves no request to measure is most likely in the wrong unit or longer than the workload. */
function warmupNote(res: SimResult, measured: number): string[] {
  const w = res.scenario.output.warmupS;
  if (w === 0 || measured > 0 || res.log.n === 0) return [];
  return [`output.warmupS = ${w} s leaves no request to measure: the last of the ${res.log.n} requests arrives at ${res.log.arrival[res.log.n - 1]!.toFixed(0)} s`];
}

/** A per-tier SLO that no request carried is most likely a misspelt tier name: say so instead of ignoring it. */
function unusedTierSlos(slos: Record<string, unknown>, seen: readonly string[]): string[] {
  const unused = Object.keys(slos).filter((t) => !seen.includes(t));
  if (unused.length === 0) return [];
  const tiers = seen.filter((t) => t !== '');
  return [`slo.tiers ${unused.map((t) => `'${t}'`).join(', ')}: no request carried ${unused.length === 1 ? 'this tier' : 'these tiers'} (tiers seen: ${tiers.length > 0 ? tiers.join(', ') : 'none'})`];
}
