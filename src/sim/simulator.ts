import { resolve } from 'node:path';
import type { EngineConfig } from '../engine/engine.ts';
import { vllmAutoLimits } from '../engine/vllm-defaults.ts';
import { SimRequest } from '../engine/request.ts';
import { RequestLog } from '../metrics/collector.ts';
import { BUILTIN_CATALOG, getHardware, getModel, loadCatalogFile, type Catalog } from '../model/catalog.ts';
import { kvBlocksFor, kvBytesPerToken, makePerfModel } from '../perf/index.ts';
import type { PerfModel } from '../perf/types.ts';
import { createRouter } from '../policy/routing/registry.ts';
import { Governor } from '../policy/scaling/governor.ts';
import { createScaler } from '../policy/scaling/registry.ts';
import { withProbedCapacity } from '../policy/preserve/capacity-probe.ts';
import type { PoolStatus } from '../policy/scaling/types.ts';
import { queueOrders, type QueueOrderName } from '../policy/scheduling/registry.ts';
import { parseQueueOrderOptions } from '../policy/scheduling/tier-queue.ts';
import type { QueueOrderFactory } from '../policy/scheduling/types.ts';
import { checkScenarioNames, tpExpected } from '../scenario/names.ts';
import { poolName, resolvedScaling, selectedOptions, type Scenario } from '../scenario/schema.ts';
import { ConfigError, UserError, invariant } from '../util/errors.ts';
import { Rng, hash32 } from '../util/rng.ts';
import { lengthPredictors } from '../forecast/length/registry.ts';
import { openWorkload } from '../workload/schema.ts';
import type { TraceRequest } from '../workload/types.ts';
import { EventQueue } from './event-queue.ts';
import { Fleet, instanceHours, type Instance, type PoolRuntime } from './fleet.ts';
import { Migrations, type MigrationSummary } from './migration.ts';
import { Timeline } from './timeline.ts';
import { SpotPool, type SpotSource, type SpotSummary } from '../policy/sageserve/spot.ts';
import { own } from '../util/own.ts';
import { tickDecisions, type ScalingDecision } from '../metrics/scaling-log.ts';
import { sampleLeadTime } from '../policy/sageserve/lead-time.ts';

export interface SimOptions {
  mode: 'fast' | 'step';
  /** Called now and then with the simulated time and the requests seen so far (for a progress bar). */
  onProgress?: (simTimeS: number, arrived: number) => void;
  /** Replaces every pool's step-time model (tests use one with hand-computable times). */
  perf?: PerfModel;
}

export interface SimResult {
  scenario: Scenario;
  log: RequestLog;
  timeline: Timeline;
  fleet: Fleet;
  pools: PoolRuntime[];
  endS: number;
  events: number;
  iterations: number;
  preemptions: number;
  /** With `engine.prefixCache` on some pool: prompt tokens of the prefills started there, and those the cache spared. */
  prefixCache?: { queryTokens: number; hitTokens: number };
  /** Trace rows read but not replayed, by reason (e.g. BurstGPT failures); empty for generated workloads. */
  skippedInTrace: Record<string, number>;
  /**
   * Only with `endS`: requests of the workload arriving after it, never replayed (not in the log). `complete` is
   * false when the workload goes on past the first `AFTER_END_LOOKAHEAD` of them: it is not read to its end.
   */
  afterEnd?: { requests: number; complete: boolean };
  /** What the run decided for the user that the scenario did not say (e.g. probed PreServe capacities). */
  notes: string[];
  /** The spot pool's accounts (only with `fleet.spot`). */
  spot?: SpotSummary;
  /** Live migrations (only with a router that migrates, e.g. Llumnix with `migration.enabled`). */
  migrations?: MigrationSummary;
  /** Every scaling request and what the governor let through, in time order (only with a scaling policy). */
  scaling?: ScalingDecision[];
}

/** Builds the runtime of every pool: catalog entries, perf model, KV capacity, engine settings. */
export function resolvePools(sc: Scenario, baseDir: string, mode: 'fast' | 'step', catalog: Catalog, perf?: PerfModel): PoolRuntime[] {
  const names = new Set<string>();
  return sc.fleet.pools.map((p, i) => {
    const name = poolName(p, i);
    if (names.has(name)) throw new ConfigError({ path: `fleet.pools[${i}].name`, expected: 'a name no other pool has', got: name });
    names.add(name);
    const at = <T>(fn: () => T): T => {
      try {
        return fn();
      } catch (err) {
        if (err instanceof UserError) err.message = `fleet.pools[${i}] (${name}): ${err.message}`;
        throw err;
      }
    };
    const model = at(() => getModel(p.model, catalog));
    const hardware = at(() => getHardware(p.hardware, catalog));
    // Also checked at load (checkScenarioNames, with the file line or flag); this covers callers that skip it.
    if (model.heads % p.tp !== 0) throw new ConfigError({ path: `fleet.pools[${i}].tp`, expected: tpExpected(p.model, model.heads), got: p.tp });
    const dep = { model, hardware, tp: p.tp, pp: p.pp };
    const e = { ...sc.engine, ...p.engine };
    if (e.kvCapacityTokens !== undefined && e.kvCapacityTokens < e.blockTokens) {
      throw new ConfigError({ path: `fleet.pools[${i}] engine.kvCapacityTokens`, expected: `at least one KV block (blockTokens = ${e.blockTokens})`, got: e.kvCapacityTokens });
    }
    const kvBlocks = at(() => kvBlocksFor(dep, e));
    const contextLength = p.contextLength ?? model.contextLength;
    const given = (key: 'maxNumSeqs' | 'maxBatchedTokens'): number | undefined => (e[key] === 'auto' ? undefined : e[key]);
    const auto =
      e.scheduler === 'splitwise'
        ? undefined
        : vllmAutoLimits(
            e.scheduler,
            hardware,
            { maxModelLen: contextLength, chunkedPrefill: e.chunkedPrefill, worldSize: p.tp * p.pp },
            { maxNumSeqs: given('maxNumSeqs'), maxBatchedTokens: given('maxBatchedTokens') },
          );
    const limit = (key: 'maxNumSeqs' | 'maxBatchedTokens'): number => {
      const v = e[key];
      if (v !== 'auto') return v;
      if (!auto) throw new ConfigError({ path: `fleet.pools[${i}] engine.${key}`, expected: "a number with scheduler splitwise ('auto' is vLLM's own default)", got: v });
      return auto[key];
    };
    const engine: EngineConfig = {
      scheduler: e.scheduler,
      maxNumSeqs: limit('maxNumSeqs'),
      maxBatchedTokens: limit('maxBatchedTokens'),
      chunkedPrefill: e.chunkedPrefill,
      blockTokens: e.blockTokens,
      kvBlocks,
      mode,
      prefixCache: e.prefixCache,
    };
    return {
      name,
      model: p.model,
      hardware: p.hardware,
      tp: p.tp,
      pp: p.pp,
      region: p.region,
      devices: p.tp * p.pp,
      priceUsdPerDeviceHour: hardware.priceUsdPerHour,
      perf: perf ?? at(() => makePerfModel(p.perf ?? sc.perf, dep, baseDir)),
      engine,
      queueOrder: bindQueueOrder(p.engine?.queueOrder ?? sc.scheduling?.policy ?? sc.engine.queueOrder, sc.scheduling?.options),
      provisioning: { ...sc.fleet.provisioning, ...p.provisioning },
      contextLength,
      kvBytesPerToken: kvBytesPerToken(model, p.tp),
    };
  });
}

/**
 * The queue order a pool's instances use: a pool's own `engine.queueOrder` wins, then the scenario's
 * `scheduling.policy`, then the top-level `engine.queueOrder`. `scheduling.options` are validated here, once.
 */
function bindQueueOrder(name: QueueOrderName, options: Record<string, unknown> | undefined): QueueOrderFactory {
  const order = queueOrders[name];
  const parsed = parseQueueOrderOptions(name, options ?? {});
  return (ctx) => order({ now: ctx?.now ?? (() => 0), options: parsed });
}

/** Requests in the system (arrived, not finished or dropped) beyond which a run stops: about 1 KB each. */
const MAX_IN_FLIGHT = 2_000_000;

/**
 * Most ticks of one periodic event a run takes: scaling, Llumnix's migration polls, the gateway's signal to held
 * requests (a week of scaling at 1 s is 604,800; the SageServe week at 15 s is 40,320). Like the timeline's row cap:
 * a period far shorter than the run would otherwise loop (for ever once t + period rounds to t).
 */
const MAX_TICKS = 5_000_000;

/** Idle migration polls stepped one addition at a time before a jump (`firstPollFrom`). */
const IDLE_POLL_STEPS = 100_000;

/**
 * The first poll at or after t on the grid last + k·period, by the same float additions as polling every period
 * (so a run's polls do not depend on whether it skipped an idle stretch); past IDLE_POLL_STEPS of them (a long gap
 * in a trace), the rest in one multiplication.
 */
function firstPollFrom(last: number, periodS: number, t: number): number {
  let next = last + periodS;
  for (let i = 0; next < t && i < IDLE_POLL_STEPS; i++) next += periodS;
  if (next < t) next += Math.ceil((t - next) / periodS) * periodS;
  return next;
}

/** Counts one periodic event's ticks; past MAX_TICKS, a UserError naming the setting. */
function tickCap(field: string, periodS: number, what: string): (now: number) => void {
  let ticks = 0;
  return (now) => {
    if (++ticks <= MAX_TICKS) return;
    throw new UserError(
      `${field}: ${periodS} s gives more than ${MAX_TICKS.toLocaleString('en-US')} ${what} by t = ${now.toFixed(0)} s; use a longer interval for a run this long`,
    );
  };
}

/**
 * The first point of the grid k·period strictly after t. floor(t / period) + 1 alone can land on t itself (4.3 / 0.1
 * = 42.99…, and 43 × 0.1 = 4.3), which rescheduled the event at the same time for ever.
 */
export function nextGridPoint(t: number, periodS: number): number {
  const k = Math.floor(t / periodS) + 1;
  const next = k * periodS;
  if (next > t) return next;
  const after = (k + 1) * periodS;
  return after > t ? after : t + periodS;
}

/** Requests past `endS` a run reads to count them (`SimResult.afterEnd`); a longer workload is not read to its end. */
export const AFTER_END_LOOKAHEAD = 100_000;

/** Latest first arrival a run accepts (a year): the fleet is up and billed from t = 0. */
const MAX_LEAD_IN_S = 365 * 86400;

/** One FIFO of held requests: `seq[i]` is `items[i]`'s place in the hold order across every FIFO. */
interface HeldFifo {
  items: SimRequest[];
  seq: number[];
  head: number;
}
/** A model's held FIFOs, by the router's `queue` key ('' for none), and in creation order. */
interface HeldModel {
  byKey: Map<string, HeldFifo>;
  fifos: HeldFifo[];
}

/** Runs one scenario to the end (or to `endS`) and returns what was measured. */
export function simulate(sc: Scenario, baseDir: string, opts: SimOptions): SimResult {
  const catalog = sc.catalog ? loadCatalogFile(resolve(baseDir, sc.catalog)) : BUILTIN_CATALOG;
  const rng = new Rng(sc.seed);
  const pools = resolvePools(sc, baseDir, opts.mode, catalog, opts.perf);
  const poolByName = new Map(pools.map((p) => [p.name, p]));
  for (const [i, a] of sc.scaling.actions.entries()) {
    if (!poolByName.has(a.pool)) {
      throw new ConfigError({ path: `scaling.actions[${i}].pool`, expected: `one of ${[...poolByName.keys()].join(', ')}`, got: a.pool });
    }
  }
  // Per model, the longest request any of its pools accepts (checked at arrival; each pool's own limit is checked
  // at the instance a router picks, like the KV capacity).
  const contextLimit = new Map<string, number>();
  for (const p of pools) contextLimit.set(p.model, Math.max(p.contextLength, contextLimit.get(p.model) ?? 0));
  const router = createRouter(sc.routing.policy, selectedOptions(sc.routing), { rng: rng.fork('router') });
  const scaling = resolvedScaling(sc);
  const notes: string[] = [];
  sc.fleet.pools.forEach((p, i) => {
    // A profile keyed to another model or tp may be meant (an anonymised or scaled-down table); say so, once.
    const perf = p.perf ?? sc.perf;
    if (perf.kind !== 'profile') return;
    const other = [perf.model !== undefined && perf.model !== p.model ? `model ${perf.model}` : '', perf.tp !== undefined && perf.tp !== p.tp ? `tp ${perf.tp}` : ''].filter(Boolean);
    if (other.length > 0) notes.push(`fleet.pools[${i}] (${p.model} tp ${p.tp}): timed with the profile rows of ${other.join(', ')}`);
  });
  let scalerOptions = selectedOptions(scaling);
  if (scaling.policy === 'preserve') {
    // PreServe's μ: probed on this scenario when it gives none (simulation only; the live autoscaler needs them set).
    const probed = withProbedCapacity(sc, baseDir, scalerOptions);
    scalerOptions = probed.options;
    if (probed.note) notes.push(probed.note);
  }
  const scaler = scaling.policy === 'none' || scaling.policy === 'scheduled' ? null : createScaler(scaling.policy, scalerOptions, { rng: rng.fork('scaler') });
  const governor = new Governor({ upCooldownS: scaling.upCooldownS, downCooldownS: scaling.downCooldownS, maxStep: scaling.maxStep, downStabilizationS: scaling.downStabilizationS });
  const scalingLog: ScalingDecision[] = [];
  // Output-length prediction: what policies see at arrival; it learns from each completion.
  const predictor = lengthPredictors[sc.prediction.length](hash32(`${sc.seed}/prediction`), sc.prediction.noisy);
  const arrivalsByKey = new Map<string, { model: string; region: string; tier: string; requests: number; inputTokens: number; predictedOutputTokens: number; outputTokens: number }>();
  checkScenarioNames(sc, catalog);
  const workload = openWorkload(sc.workload, rng.fork('workload'), baseDir);
  const source: Iterator<TraceRequest> = workload[Symbol.iterator]();
  // Closed however the run ends (endS reached, an error thrown): a trace reader holds its file open until then.
  try {
    // Requests are left unfinished only when the run is cut at endS: only then does the log keep those in flight.
    const log = new RequestLog(sc.endS !== undefined);
    const q = new EventQueue();
    const endLimit = sc.endS ?? Infinity;

    const netDelay = networkDelay(sc.network);
    let inflight = 0;
    let events = 0;
    const scaleTick = tickCap('scaling.intervalS', scaling.intervalS, 'scaling ticks');
    const rebalanceTick = tickCap('routing.options.migration.intervalS', router.migrateIntervalS ?? NaN, 'migration polls');
    /** The last migration poll's time while polling is stopped for an idle fleet (see the 'rebalance' event). */
    let parkedPollS: number | null = null;
    const timeline = new Timeline(sc.output.timelineIntervalS);
    const fleet: Fleet = new Fleet({
      onFinish(r) {
        predictor.observe(r);
        log.finish(r);
        timeline.completed++;
        inflight--;
        if (heldCount > 0) signalHeld(r.model, fleet.instances[r.instance]!.region);
      },
    });
    for (const p of pools) {
      const spec = sc.fleet.pools[pools.indexOf(p)]!;
      for (let i = 0; i < spec.count; i++) fleet.add(p, 0, true);
    }

    let sourceDone = false;
    let arrived = 0;
    const pullArrival = () => {
      const n = source.next();
      if (n.done) {
        sourceDone = true;
        return;
      }
      pending = n.value;
      q.push({ kind: 'arrival', t: n.value.arrivalS });
    };
    let pending: TraceRequest | null = null;
    pullArrival();
    if (pending !== null && (pending as TraceRequest).arrivalS > MAX_LEAD_IN_S) {
      // The fleet runs (and is billed) from t = 0: a first arrival years later is a clock mix-up, not a workload.
      const t = (pending as TraceRequest).arrivalS;
      const where = sc.workload.trace ? `${sc.workload.trace.path}: ` : '';
      throw new UserError(`${where}the first request arrives at t = ${t} s (${(t / (365 * 86400)).toFixed(1)} years after the run starts at 0): arrival times look absolute (Unix time?); re-base them with workload.transforms.window.startS = ${t}`);
    }
    const deferred: SimRequest[] = [];
    // Requests a router holds at the gateway (`defer` with `hold: true`, e.g. SageServe's NIW queue manager):
    // FIFOs per model (one per `queue` key the router gives, one when it gives none), offered to the router again
    // whenever a request of that model finishes or an instance of it becomes ready (a signal from that region's
    // endpoint) and every `heldSignalIntervalS`, if the router gives one, while any is held (a periodic signal from every endpoint); the
    // router is told who signalled (`endpointSignal`). At an offer the model's FIFOs are tried oldest head first
    // (hold order); a refused head ends its own FIFO's turn only. Unlike `deferred`, they are not dropped after
    // `maxDeferS`; whatever is still held when the run ends is dropped as 'held'. No router holds by default.
    const held = new Map<string, HeldModel>();
    /** Hold order across all FIFOs (a request's `seq` entry), so that the oldest head goes first. */
    let holdSeq = 0;
    /** The `queue` key of the last `defer` with `hold` that `dispatch` saw ('' when it gave none). */
    let holdQueue = '';
    // Signals since the held requests were last offered: model → the regions whose endpoints signalled.
    const offerModels = new Map<string, Set<string>>();
    const signalHeld = (model: string, region: string) => {
      let regions = offerModels.get(model);
      if (!regions) offerModels.set(model, (regions = new Set()));
      regions.add(region);
    };
    let heldCount = 0;
    /** A periodic `signal` event is in the queue; none is scheduled once held requests are known to be stuck. */
    let signalPending = false;
    let heldStuck = false;
    const signalTick = tickCap('routing.options.niwSignalIntervalS', router.heldSignalIntervalS ?? NaN, 'signals to held requests');
    const scheduleSignal = (t: number) => {
      const iv = router.heldSignalIntervalS;
      // A router without a periodic signal (PreServe's router queue) has its held requests offered at completions
      // and ready instances only.
      if (signalPending || heldStuck || iv === undefined) return;
      invariant(iv > 0, `router ${router.name} gives heldSignalIntervalS ${iv}`);
      signalTick(t);
      q.push({ kind: 'signal', t: nextGridPoint(t, iv) });
      signalPending = true;
    };
    /** Holds `r` in the FIFO `holdQueue` names (set by the `dispatch` that returned 'held'). */
    const hold = (r: SimRequest, t: number) => {
      let m = held.get(r.model);
      if (!m) held.set(r.model, (m = { byKey: new Map(), fifos: [] }));
      let h = m.byKey.get(holdQueue);
      if (!h) {
        m.byKey.set(holdQueue, (h = { items: [], seq: [], head: 0 }));
        m.fifos.push(h);
      }
      h.items.push(r);
      h.seq.push(holdSeq++);
      heldCount++;
      scheduleSignal(t);
    };
    // The FIFOs with a head still to try at this offer (reused: an offer runs at every completion).
    const open: HeldFifo[] = [];
    const offerHeld = (model: string, t: number, regions: ReadonlySet<string> | null) => {
      const m = held.get(model);
      if (!m) return;
      router.endpointSignal?.(model, regions, t);
      for (const h of m.fifos) if (h.head < h.items.length) open.push(h);
      // Oldest head first; a head the router does not send closes its FIFO for this offer (head-of-line
      // blocking within a FIFO only). With one FIFO: its heads in order until one is refused.
      while (open.length > 0) {
        let k = 0;
        for (let i = 1; i < open.length; i++) if (open[i]!.seq[open[i]!.head]! < open[k]!.seq[open[k]!.head]!) k = i;
        const h = open[k]!;
        if (dispatch(h.items[h.head]!, t) === 'sent') {
          h.items[h.head++] = undefined as unknown as SimRequest;
          heldCount--;
          if (h.head < h.items.length) continue;
        }
        open[k] = open[open.length - 1]!;
        open.pop();
      }
      for (const h of m.fifos) {
        if (h.head > 1024 && h.head * 2 > h.items.length) {
          h.items = h.items.slice(h.head);
          h.seq = h.seq.slice(h.head);
          h.head = 0;
        }
      }
    };

    const drop = (r: SimRequest, reason: string) => {
      r.status = 'dropped';
      r.dropReason = reason;
      log.drop(r, reason);
      timeline.dropped++;
      inflight--;
    };

    /** Routes one request: sent to an instance (or dropped there), deferred for a retry, or held at the gateway. */
    const dispatch = (r: SimRequest, t: number): 'sent' | 'deferred' | 'held' => {
      fleet.now = t;
      const d = router.route(r, fleet);
      if (d.kind === 'defer') {
        if (d.hold !== true) return 'deferred';
        holdQueue = d.queue ?? '';
        return 'held';
      }
      const inst = fleet.instances[d.to];
      invariant(inst !== undefined && inst.state === 'ready' && inst.model === r.model, `router ${router.name} chose an instance that cannot take the request`);
      if (r.inputTokens + r.outputTokens > inst.poolRt.contextLength) {
        r.instance = inst.id;
        drop(r, 'context-length');
        return 'sent';
      }
      if (!inst.engine.canEverFit(r)) {
        r.instance = inst.id;
        drop(r, 'exceeds-kv-capacity');
        return 'sent';
      }
      const delay = netDelay(r.region, inst.region) + sc.routing.dispatchDelayS;
      if (delay > 0) q.push({ kind: 'deliver', t: t + delay, instance: inst.id, req: r });
      else enqueueOn(inst, r, t);
      return 'sent';
    };
    /** Routes a request that has no instance yet: sent, or deferred for a retry, or held at the gateway. */
    const admit = (r: SimRequest, t: number) => {
      const d = dispatch(r, t);
      if (d === 'held') hold(r, t);
      else if (d === 'deferred') deferred.push(r);
    };
    const enqueueOn = (inst: Instance, r: SimRequest, t: number) => {
      const next = inst.engine.enqueue(r, t);
      if (!Number.isNaN(next)) q.push({ kind: 'boundary', t: next, instance: inst.id, gen: inst.engine.gen });
    };

    const retryDeferred = (t: number) => {
      let w = 0;
      for (const r of deferred) {
        if (t - r.arrivalS > sc.maxDeferS) drop(r, 'no-instance');
        else {
          const d = dispatch(r, t);
          if (d === 'held') hold(r, t);
          else if (d === 'deferred') deferred[w++] = r;
        }
      }
      deferred.length = w;
    };

    // With a spot pool, a new instance reclaims a donated one (same model first) and a stopped one is donated.
    const spot = sc.fleet.spot ? new SpotPool(sc.fleet.spot, rng.fork('spot-lead')) : null;
    if (spot) fleet.onStop = (inst, t) => spot.donate(inst.poolRt, t);
    // Where each scale-out's capacity came from (with a spot pool), for its provisioning time at the end.
    const spotSources = new Map<Instance, SpotSource>();
    // Draws only for provisioning times given as distributions: fixed ones leave every random stream as it was.
    const provisioningRng = rng.fork('provisioning');
    // A new ready instance: deferred requests retry, and held ones for its model and region are offered to it.
    const onReady = (inst: Instance, t: number) => {
      retryDeferred(t);
      if (heldCount > 0) signalHeld(inst.model, inst.region);
    };
    const startInstance = (pool: PoolRuntime, t: number) => {
      const acquireS = sampleLeadTime(pool.provisioning.vmAcquireS, provisioningRng);
      const loadS = sampleLeadTime(pool.provisioning.modelLoadS, provisioningRng);
      const claim = spot ? spot.reclaim(pool, t, { acquireS, loadS }) : null;
      const lead = claim ? claim.leadS : acquireS + loadS;
      const inst = fleet.add(pool, t, lead === 0, lead);
      if (claim) spotSources.set(inst, claim.source);
      if (lead === 0) onReady(inst, t);
      else q.push({ kind: 'ready', t: t + lead, instance: inst.id });
    };

    // Live migration, when the router rebalances running requests (Llumnix).
    const migrations = router.migrate ? new Migrations(sc.migration, fleet, {
      at: (t, req) => q.push({ kind: 'migration', t, req }),
      boundary: (inst, t) => q.push({ kind: 'boundary', t, instance: inst.id, gen: inst.engine.gen }),
      reroute: admit,
    }) : null;
    if (migrations) {
      sc.fleet.pools.forEach((p, i) => {
        if ((p.engine?.scheduler ?? sc.engine.scheduler) === 'splitwise') {
          throw new ConfigError({ path: `fleet.pools[${i}].engine.scheduler`, expected: `vllm or vllm-v0 (router ${router.name} migrates requests; the splitwise builder reserves KV differently)`, got: 'splitwise' });
        }
      });
      q.push({ kind: 'rebalance', t: router.migrateIntervalS ?? 1 });
    }

    // In time order, each with its index in the scenario (notes name it by that).
    const actions = sc.scaling.actions.map((a, i) => ({ ...a, i })).sort((a, b) => a.atS - b.atS);
    let nextAction = 0;
    if (actions.length > 0) q.push({ kind: 'control', t: actions[0]!.atS });
    if (scaler) q.push({ kind: 'scale', t: scaling.intervalS });
    q.push({ kind: 'sample', t: 0 });

    let now = 0;
    let endS = -1;
    const workLeft = () => !sourceDone || inflight > 0;
    while (q.size > 0) {
      const ev = q.pop()!;
      if (ev.t > endLimit) {
        endS = endLimit;
        break;
      }
      // The periodic signal left in the queue when held requests were found stuck: it cannot change anything, and
      // the run ends at the sample that found them.
      if (ev.kind === 'signal' && heldStuck) continue;
      invariant(ev.t >= now, 'the clock went back');
      now = ev.t;
      events++;
      switch (ev.kind) {
        case 'arrival': {
          if (parkedPollS !== null) {
            q.push({ kind: 'rebalance', t: firstPollFrom(parkedPollS, router.migrateIntervalS!, now) });
            parkedPollS = null;
          }
          const r = new SimRequest(pending!, pools[0]!.model);
          r.predictedOutputTokens = predictor.predict(r).point;
          arrived++;
          if (++inflight > MAX_IN_FLIGHT) {
            throw new UserError(
              `the fleet cannot keep up: ${MAX_IN_FLIGHT.toLocaleString('en-US')} requests are in the system at t = ${now.toFixed(0)} s ` +
                `(${arrived.toLocaleString('en-US')} arrived); simulating a backlog that grows without bound would exhaust memory, so add instances or lower the load`,
            );
          }
          log.arrive(r);
          timeline.arrived++;
          if (scaler) {
            const key = `${r.model}\u0000${r.region}\u0000${r.tier}`;
            const a = arrivalsByKey.get(key);
            if (a) {
              a.requests++;
              a.inputTokens += r.inputTokens;
              a.predictedOutputTokens += r.predictedOutputTokens;
              a.outputTokens += r.outputTokens;
            } else {
              arrivalsByKey.set(key, {
                model: r.model, region: r.region, tier: r.tier, requests: 1, inputTokens: r.inputTokens,
                predictedOutputTokens: r.predictedOutputTokens, outputTokens: r.outputTokens,
              });
            }
          }
          const limit = contextLimit.get(r.model);
          if (limit === undefined) drop(r, 'unknown-model');
          else if (r.inputTokens + r.outputTokens > limit) drop(r, 'context-length');
          else admit(r, now);
          pullArrival();
          if (opts.onProgress && (arrived & 0x3fff) === 0) opts.onProgress(now, arrived);
          break;
        }
        case 'deliver': {
          // A request that crossed regions reaches its instance; one stopped meanwhile sends it back to the router.
          const inst = fleet.instances[ev.instance]!;
          fleet.now = now;
          if (inst.state === 'ready' || inst.state === 'draining') enqueueOn(inst, ev.req, now);
          else admit(ev.req, now);
          break;
        }
        case 'boundary': {
          const inst = fleet.instances[ev.instance]!;
          if (ev.gen !== inst.engine.gen) {
            events--; // a superseded event: the run it ended was cut short
            break;
          }
          fleet.now = now; // deadline-aware queue orders read the clock while the engine builds the batch
          const detaching = migrations !== null && migrations.detaching(inst);
          const next = inst.engine.onBoundary(now);
          if (!Number.isNaN(next)) q.push({ kind: 'boundary', t: next, instance: inst.id, gen: inst.engine.gen });
          else if (inst.state === 'draining') fleet.stopIfDrained(inst, now);
          if (detaching) migrations.afterBoundary(inst, now);
          break;
        }
        case 'migration': {
          fleet.now = now;
          migrations!.onTimer(ev.req, now);
          break;
        }
        case 'rebalance': {
          fleet.now = now;
          for (const o of router.migrate!(fleet, migrations!.busy())) migrations!.start(o, now);
          if (workLeft()) {
            rebalanceTick(now);
            // Nothing in flight: until the next arrival every poll finds no instance running anything, so no source.
            // Polling stops there and the arrival resumes it on the same grid (not an event per poll through a gap).
            if (inflight === 0 && migrations!.busy().size === 0) parkedPollS = now;
            else q.push({ kind: 'rebalance', t: now + router.migrateIntervalS! });
          }
          break;
        }
        case 'ready': {
          const inst = fleet.instances[ev.instance]!;
          fleet.markReady(inst, now);
          onReady(inst, now);
          break;
        }
        case 'signal': {
          signalPending = false;
          if (heldCount > 0) for (const m of [...held.keys()].sort()) offerHeld(m, now, null);
          if (heldCount > 0) scheduleSignal(now);
          break;
        }
        case 'sample': {
          if (deferred.length > 0) retryDeferred(now);
          timeline.sample(now, fleet, deferred.length + heldCount);
          // An idle engine holding requests would never be woken again (and the run would sample forever).
          for (const inst of fleet.instances) {
            const e = inst.engine;
            invariant(e.isBusy || e.numRunning + e.numWaiting === 0 || e.migrationBlocks > 0, `instance ${inst.id} stalled idle with ${e.numRunning + e.numWaiting} requests`);
          }
          // Requests held at the gateway with no instance of their model to go to, and no other event pending (no
          // arrival, iteration, start-up, scheduled action or scaling tick) that could ever bring one: they would be
          // held, and the run sampled, for ever. The run ends here instead; they are dropped as 'held' below.
          // (The periodic signal, if one is pending, is no such event: it cannot bring an instance.)
          const heldForever = heldCount > 0 && deferred.length === 0 && q.size === (signalPending ? 1 : 0) && [...held.entries()].every(([m, h]) => h.fifos.every((f) => f.head === f.items.length) || fleet.routable(m).length === 0);
          if (heldForever) heldStuck = true;
          if (workLeft() && !heldForever) {
            const iv = sc.output.timelineIntervalS;
            let next = now + iv;
            // Nothing in the system and no event before the next sample: nothing can change until the next event,
            // so jump to the last sample point before it instead of writing the empty stretch row by row (a long
            // gap in a trace would otherwise cost a row and an event per interval).
            const upcoming = q.peekTime();
            if (inflight === 0 && upcoming > next) next = now + Math.floor((upcoming - now) / iv) * iv;
            q.push({ kind: 'sample', t: next });
          }
          break;
        }
        case 'control': {
          while (nextAction < actions.length && actions[nextAction]!.atS <= now) {
            const a = actions[nextAction++]!;
            const i = a.i;
            const pool = poolByName.get(a.pool)!;
            // The pool's bounds hold for scheduled actions too (the governor's clamp, without its cooldowns): minCount
            // bounds the ready and provisioning instances, maxCount those and the draining ones.
            const spec = sc.fleet.pools[pools.indexOf(pool)]!;
            const current = fleet.instances.filter((x) => x.pool === pool.name && (x.state === 'ready' || x.state === 'provisioning')).length;
            const draining = fleet.instances.filter((x) => x.pool === pool.name && x.state === 'draining').length;
            const count = a.action === 'add' ? Math.min(a.count, Math.max(0, spec.maxCount - current - draining)) : Math.min(a.count, Math.max(0, current - spec.minCount));
            if (count < a.count) {
              const bound = a.action === 'add' ? `maxCount ${spec.maxCount} bounds it${draining > 0 ? ` (${draining} still draining)` : ''}` : `minCount ${spec.minCount} bounds it`;
              notes.push(`scaling.actions[${i}] (${a.action} ${a.count} on ${a.pool} at ${a.atS} s): ${count} done, the pool's ${bound}`);
            }
            const ready = fleet.instances.filter((x) => x.pool === pool.name && x.state === 'ready').length;
            const sign = a.action === 'add' ? 1 : -1;
            scalingLog.push({ tS: now, pool: pool.name, ready, provisioning: current - ready, asked: sign * a.count, applied: sign * count, reason: 'scheduled' });
            if (a.action === 'add') for (let k = 0; k < count; k++) startInstance(pool, now);
            else drainSome(fleet, pool.name, count, now, scaling.drainOrder);
          }
          if (nextAction < actions.length) q.push({ kind: 'control', t: actions[nextAction]!.atS });
          break;
        }
        case 'scale': {
          fleet.now = now;
          scaleTick(now);
          // Requests at the gateway (deferred, held) per model: no instance's `waiting` has them (PoolStatus.queued).
          const queued = new Map<string, number>();
          for (const r of deferred) queued.set(r.model, (queued.get(r.model) ?? 0) + 1);
          for (const [m, h] of held) for (const f of h.fifos) queued.set(m, (queued.get(m) ?? 0) + f.items.length - f.head);
          const status = poolStatus(fleet, pools, sc, now, queued);
          const arrivals = [...arrivalsByKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
          const wanted = scaler!.decide({ now, intervalS: scaling.intervalS, pools: status, arrivals, view: fleet });
          const governed = governor.apply(wanted, status, now);
          scalingLog.push(...tickDecisions(now, status, wanted, governed));
          for (const a of governed) {
            if (a.kind === 'hold') continue;
            const pool = poolByName.get(a.pool);
            invariant(pool !== undefined, `scaler ${scaler!.name} named an unknown pool ${a.pool}`);
            if (a.kind === 'add') for (let i = 0; i < a.count; i++) startInstance(pool, now);
            else drainSome(fleet, pool.name, a.count, now, scaling.drainOrder);
          }
          arrivalsByKey.clear();
          if (workLeft()) q.push({ kind: 'scale', t: now + scaling.intervalS });
          break;
        }
        default: {
          const never: never = ev;
          throw new Error(`unknown event ${JSON.stringify(never)}`);
        }
      }
      if (offerModels.size > 0) {
        for (const m of [...offerModels.keys()].sort()) offerHeld(m, now, offerModels.get(m)!);
        offerModels.clear();
      }
      if (!workLeft()) break;
    }
    // A run cut at endS leaves what still waits for an instance unfinished, as it does what instances hold (with
    // instance −1): it might have been served later. A run that ended on its own left it with nothing to come.
    const cut = endS >= 0;
    if (!cut) {
      for (const r of deferred) drop(r, 'no-instance');
      for (const m of [...held.keys()].sort()) {
        // In hold order across the model's FIFOs.
        const left: { r: SimRequest; seq: number }[] = [];
        for (const h of held.get(m)!.fifos) for (let i = h.head; i < h.items.length; i++) left.push({ r: h.items[i]!, seq: h.seq[i]! });
        left.sort((a, b) => a.seq - b.seq);
        for (const { r } of left) drop(r, 'held');
      }
    }
    if (endS < 0) endS = now;
    migrations?.settle(endS);
    timeline.finish(endS, fleet, cut ? deferred.length + heldCount : 0);
    // What the requests still in flight got to (instance, queue time, first token, preemptions).
    log.settleUnfinished();
    let iterations = 0;
    let preemptions = 0;
    const prefixCache = pools.some((p) => p.engine.prefixCache) ? { queryTokens: 0, hitTokens: 0 } : undefined;
    for (const inst of fleet.instances) {
      iterations += inst.engine.iterations;
      preemptions += inst.engine.preemptions;
      if (prefixCache) {
        prefixCache.queryTokens += inst.engine.prefixQueryTokens;
        prefixCache.hitTokens += inst.engine.prefixHitTokens;
      }
    }
    // Taken before reading past endS below: skipped rows after the last request replayed are not counted.
    const skippedInTrace = { ...workload.traceStats?.skipped };
    notes.push(...(workload.notes?.() ?? []));
    if (scaler?.notes) notes.push(...scaler.notes());
    for (const a of actions.slice(nextAction)) notes.push(`scaling.actions[${a.i}] (${a.action} ${a.count} on ${a.pool} at ${a.atS} s): not done, the run ended at ${+endS.toFixed(1)} s`);
    const res: SimResult = { scenario: sc, log, timeline, fleet, pools, endS, events, iterations, preemptions, skippedInTrace, notes };
    if (prefixCache) res.prefixCache = prefixCache;
    if (scaling.policy !== 'none') res.scaling = scalingLog;
    if (sc.endS !== undefined) {
      // Requests that would arrive after endS: the one taken from the stream but not arrived (`pending`), and what
      // the stream still holds, read up to a bound (a week-long trace is not read to its end to count it).
      let requests = 0;
      let complete = true;
      // A bad trace row past endS never failed a run that stops before it; it only ends the count.
      let unreadable = '';
      if (!sourceDone) {
        requests = 1;
        try {
          while (!source.next().done) {
            requests++;
            if (requests > AFTER_END_LOOKAHEAD) {
              complete = false;
              break;
            }
          }
        } catch (err) {
          if (!(err instanceof UserError)) throw err;
          complete = false;
          unreadable = err.message;
        }
      }
      res.afterEnd = { requests, complete };
      if (unreadable) {
        notes.push(`endS = ${sc.endS} s: at least ${requests} request${requests === 1 ? '' : 's'} of the workload arrive after it (not replayed, not in requests.total); counting stopped at a row it could not read: ${unreadable}`);
      } else if (!complete) {
        notes.push(
          `endS = ${sc.endS} s: the workload continues past it (more than ${AFTER_END_LOOKAHEAD.toLocaleString('en-US')} requests arrive later; ` +
            'not read to its end): they were not replayed and are not in requests.total',
        );
      } else if (requests > 0) {
        notes.push(`endS = ${sc.endS} s: ${requests} request${requests === 1 ? '' : 's'} of the workload arrive${requests === 1 ? 's' : ''} after it: not replayed, not in requests.total (requests.afterEnd)`);
      }
    }
    if (spot) {
      // The time actually spent provisioning: until ready, until a scale-in cancelled it, or until the end.
      for (const [inst, source] of spotSources) spot.provisioned(source, instanceHours(inst, endS).wastedHours);
      res.spot = spot.summary(endS);
    }
    if (migrations) res.migrations = migrations.summary();
    return res;
  } finally {
    source.return?.();
  }
}

/**
 * Seconds a request from region `from` takes to reach an instance in region `to` (`network` in the scenario):
 * the pair's `latencyS` entry, else `crossRegionS` between two different non-empty regions, else 0.
 */
export function networkDelay(net: Scenario['network']): (from: string, to: string) => number {
  if (!net) return () => 0;
  const { crossRegionS, latencyS } = net;
  return (from, to) => {
    const pair = own(own(latencyS, from), to);
    if (pair !== undefined) return pair;
    return from !== '' && to !== '' && from !== to ? crossRegionS : 0;
  };
}

/** The per-pool snapshot a scaling policy reads at a tick. */
function poolStatus(fleet: Fleet, pools: readonly PoolRuntime[], sc: Scenario, now: number, queued: ReadonlyMap<string, number>): PoolStatus[] {
  return pools.map((p, i) => {
    const spec = sc.fleet.pools[i]!;
    let provisioning = 0;
    let ready = 0;
    let draining = 0;
    let kv = 0;
    let outstanding = 0;
    let waiting = 0;
    for (const inst of fleet.instances) {
      if (inst.poolRt !== p) continue;
      if (inst.state === 'provisioning') provisioning++;
      else if (inst.state === 'draining') draining++;
      else if (inst.state === 'ready') {
        ready++;
        inst.engine.sync(now, true);
        kv += inst.kvUsedFraction;
        outstanding += inst.outstandingRequests;
        waiting += inst.numWaiting;
      }
    }
    return {
      name: p.name, model: p.model, hardware: p.hardware, region: p.region, tp: p.tp, pp: p.pp,
      provisioning, ready, draining, minCount: spec.minCount, maxCount: spec.maxCount,
      kvUtilization: ready ? kv / ready : 0, outstandingRequests: outstanding, waiting, queued: queued.get(p.model) ?? 0,
    };
  });
}

/**
 * Drains `count` ready or provisioning instances of a pool: the newest first, or with `least-loaded` the ones
 * with the fewest outstanding requests first (a provisioning instance has none; ties: newest).
 */
function drainSome(fleet: Fleet, pool: string, count: number, now: number, order: 'newest' | 'least-loaded'): void {
  const mine = fleet.instances.filter((i) => i.pool === pool && (i.state === 'ready' || i.state === 'provisioning'));
  const load = (k: number) => (order === 'least-loaded' ? mine[k]!.outstandingRequests : 0);
  const ks = mine.map((_, k) => k).sort((a, b) => load(a) - load(b) || b - a);
  for (const k of ks.slice(0, count)) fleet.drain(mine[k]!, now);
}
