import { z } from 'zod';
import { seconds, withPresets } from '../options.ts';
import { niwReleaseCount } from '../sageserve/niw.ts';
import { deployments, effectiveUtil, regionPreference } from '../sageserve/util.ts';
import type { FleetView, InstanceView, RequestView } from '../types.ts';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouteDecision, type RouterEntry } from './types.ts';

/**
 * The released code's routing where it differs from the paper: its NIW release counts, no cross-region reroute,
 * and held NIW in a queue per model and first-preference region (`feed_async(region, model)`), released to the
 * endpoint that signalled. (Before `niwQueues` it kept `niwReleaseTo: preference`: with one queue per model and no
 * reroute, a head request of one region held every other region's behind it until its own region signalled, NIW
 * p95 TTFT over 2 h on the peak day.)
 */
export const ROUTING_CODE_PRESET = { niwRelease: 'code', reroute: false, niwReleaseTo: 'signalling', niwQueues: 'model-region' } as const;

const routerOptionsObject = z
  .object({
    /** Paper values by default; `code`: ROUTING_CODE_PRESET (keys set explicitly still win). */
    preset: z.enum(['paper', 'code']).default('paper'),
    /** Region rule (§3.2): the first region in preference order whose endpoint is below this utilisation. */
    routeThreshold: z.number().min(0).max(1).default(0.7),
    /** Preference after the request's own region (the trace's region is the first preference). */
    regionOrder: z.array(z.string()).default(['east', 'central', 'west']),
    /** false: every request stays in its own region (the code's `no_reroute` under long-term scaling). */
    reroute: z.boolean().default(true),
    /** Instances per deployment (production: 2–3; the code splits 20 as 3,3,3,3,3,3,2). */
    deploymentSize: z.number().int().positive().default(3),
    /** Requests of this tier go through the NIW queue manager. */
    niwTier: z.string().default('niw'),
    /** false: NIW is routed like IW at once (no queue manager). */
    holdNiw: z.boolean().default(true),
    niwRelease: z.enum(['paper', 'code']).default('paper'),
    /**
     * Where a released NIW request goes: `signalling` (the paper §6.2, and the released code's `feed_async`): only
     * to an endpoint that signalled at that instant, each with its own budget; `preference`: every endpoint of
     * the model gets a budget at every new time (an arrival included) and the request takes the first one with
     * budget left in its own region preference order (our behaviour before 2026-11-27; for a plane that never
     * calls `endpointSignal` — the simulator and, since session 18, the live gateway both do).
     */
    niwReleaseTo: z.enum(['signalling', 'preference']).default('signalling'),
    /**
     * How held NIW requests queue at the gateway: `model`, one FIFO per model (a head request that no endpoint
     * takes holds every request behind it, whatever its region); `model-region`, one FIFO per model and
     * first-preference region (the trace's region), as the released code's `feed_async(region, model)` keeps
     * them: a refused head blocks only its own region's FIFO. At each signal the FIFOs are tried oldest head first.
     */
    niwQueues: z.enum(['model', 'model-region']).default('model'),
    niwOneBelow: z.number().min(0).max(1).default(0.6),
    niwTwoBelow: z.number().min(0).max(1).default(0.5),
    /** NIW older than this is released at once and routed like IW (age > 10 h ⇒ priority 0). */
    niwPromoteAfterS: seconds.default(36_000),
    /**
     * Seconds between the periodic signals every endpoint sends the NIW queue manager (the paper: "periodically",
     * no period given; the released code signals at each completion only, which the simulator also does). 30 s:
     * the peak-day scenario's timeline interval, on which held requests used to be offered.
     */
    niwSignalIntervalS: z.number().min(0.001).max(86_400).default(30),
    /**
     * Pools whose name ends with this serve only NIW (the siloed and Chiron baselines). As soon as the fleet
     * holds any instance of such a pool for a model, that model runs siloed: IW goes to the other pools, NIW
     * straight to these (no queue manager).
     */
    niwPoolSuffix: z.string().min(1).default('-niw'),
    /**
     * Pools whose name ends with this are Chiron's mixed pools. As soon as the fleet holds any instance of such a
     * pool for a model, that model runs Chiron's layout: per region an interactive pool (the plain one), this
     * mixed pool and a batch pool (`niwPoolSuffix`); see `routeChiron`.
     */
    mixedPoolSuffix: z.string().min(1).default('-mixed'),
    /** Chiron: IW goes to the mixed pool while the interactive pool's utilisation is above this (the code's 0.7); NIW likewise for the batch pool. */
    mixedAbove: z.number().min(0).max(1).default(0.7),
  })
  .strict();

export const sageserveRouterOptions = withPresets({ paper: {}, code: ROUTING_CODE_PRESET }, routerOptionsObject);

type Opts = z.output<typeof sageserveRouterOptions>;

/**
 * SageServe's routing (§3.2–3.4, §6.1–6.2): region router → model endpoint → deployment → instance.
 * 1. Region: candidates in preference order (own region, then `regionOrder`); the first whose endpoint's
 *    effective memory utilisation is < 70 % wins, else the least utilised.
 * 2. Endpoint → deployment: the deployment (groups of `deploymentSize` instances, id order) with the lowest
 *    utilisation; 3. instance: join-shortest-queue on pending tokens (prompt + 1 until prefilled, then 1).
 * NIW requests are held at the gateway (`defer` with `hold`): at each signal (the simulator offers held
 * requests when a request of the model finishes or an instance becomes ready, from that region's endpoint, and
 * every `niwSignalIntervalS`, from every endpoint) a signalling endpoint below 60 % takes one, below 50 % two
 * (`niwRelease: code` inverts the counts as the released code does); with several at once, in the request's
 * region preference order (its own region only without reroute). NIW older than 10 h goes at once. Held NIW
 * waits in one FIFO per model, or with `niwQueues: model-region` per model and first-preference region (the hold
 * decision's `queue`), so that a refused head blocks only its own region's requests.
 * `niwReleaseTo: preference` gives every endpoint a budget at every new time instead (a plane that never calls
 * `endpointSignal` needs it: there held NIW would wait for `niwPromoteAfterS`; the simulator and the live gateway
 * both signal).
 * Baselines, switched on by the fleet's pools: a model with a `-mixed` instance runs Chiron's layout
 * (`routeChiron`: interactive / mixed / batch pools); else one with a `-niw` instance runs siloed (IW to the
 * plain pools, NIW straight to the `-niw` ones).
 */
export const sageserve = {
  options: sageserveRouterOptions,
  make(opts: Opts) {
    let epoch = NaN;
    const budget = new Map<string, number>();
    const siloed = new Map<string, boolean>();
    const chiron = new Map<string, boolean>();
    let scanned = 0;
    // `niwQueues: model-region`: the hold decision per first-preference region (its FIFO's key).
    const heldByRegion = new Map<string, RouteDecision>();
    const heldIn = (region: string): RouteDecision => {
      let d = heldByRegion.get(region);
      if (!d) heldByRegion.set(region, (d = { kind: 'defer', reason: 'niw-held', hold: true, queue: region }));
      return d;
    };
    // The endpoints that signalled the NIW queue manager, per model, at `at` (regions null: every endpoint).
    const signalled = new Map<string, { at: number; regions: ReadonlySet<string> | null }>();

    const mayRelease = (model: string, region: string, now: number): boolean => {
      if (opts.niwReleaseTo === 'preference') return true;
      const s = signalled.get(model);
      return s !== undefined && s.at === now && (s.regions === null || s.regions.has(region));
    };

    /** Records which models have ever had a `-niw` (siloed) or `-mixed` (Chiron) instance. */
    const scan = (view: FleetView): void => {
      // The simulator's list only grows, so new instances are scanned once; a shorter list (a filtered live
      // view) is scanned from the start.
      if (view.instances.length < scanned) scanned = 0;
      for (; scanned < view.instances.length; scanned++) {
        const i = view.instances[scanned]!;
        if (i.pool.endsWith(opts.niwPoolSuffix)) siloed.set(i.model, true);
        if (i.pool.endsWith(opts.mixedPoolSuffix)) chiron.set(i.model, true);
      }
    };

    /** Ready instances of the request's model per region, NIW pools kept apart in siloed mode. */
    const endpoints = (req: RequestView, view: FleetView, niwPools: boolean | null): Map<string, InstanceView[]> => {
      const by = new Map<string, InstanceView[]>();
      for (const i of view.routable(req.model)) {
        if (niwPools !== null && i.pool.endsWith(opts.niwPoolSuffix) !== niwPools) continue;
        let l = by.get(i.region);
        if (!l) by.set(i.region, (l = []));
        l.push(i);
      }
      return by;
    };

    const pickInstance = (eps: InstanceView[]): number => {
      const deps = deployments(eps, opts.deploymentSize);
      let best = deps[0]!;
      let bestU = effectiveUtil(best);
      for (let d = 1; d < deps.length; d++) {
        const u = effectiveUtil(deps[d]!);
        if (u < bestU) {
          best = deps[d]!;
          bestU = u;
        }
      }
      return pickMin(best, (i) => i.pendingTokens).id;
    };

    /**
     * The region for an IW request over `by` (region → its instances): without reroute its own; else the first in
     * preference order below the routing threshold, else the least utilised. Null when there is none.
     */
    const pickRegion = (req: RequestView, by: Map<string, InstanceView[]>): { region: string; reason: string } | null => {
      if (by.size === 0) return null;
      if (!opts.reroute) return by.has(req.region) ? { region: req.region, reason: 'own-region' } : null;
      let least: string | null = null;
      let leastU = Infinity;
      for (const r of regionPreference(req.region, opts.regionOrder, by.keys())) {
        const eps = by.get(r);
        if (!eps) continue;
        const u = effectiveUtil(eps);
        if (u < opts.routeThreshold) return { region: r, reason: 'region-below-threshold' };
        if (u < leastU) {
          least = r;
          leastU = u;
        }
      }
      return least === null ? null : { region: least, reason: 'least-utilised-region' };
    };

    const routeIw = (req: RequestView, by: Map<string, InstanceView[]>): RouteDecision => {
      const pick = pickRegion(req, by);
      return pick ? { kind: 'send', to: pickInstance(by.get(pick.region)!), reason: pick.reason } : NO_INSTANCE;
    };

    /**
     * Chiron's layout (a model with a mixed pool). IW: the region by the 70 % rule over each region's interactive
     * and mixed instances together, then the interactive pool unless its utilisation is above `mixedAbove` (or it
     * has no ready instance), else the mixed pool. NIW (no queue manager: Chiron queues batch work itself): the
     * first region in preference order whose batch pool is ready and at most `mixedAbove` full, or else whose
     * mixed pool is ready; failing all, the least utilised batch pool anywhere.
     */
    const routeChiron = (req: RequestView, view: FleetView, niw: boolean): RouteDecision => {
      const by = new Map<string, { i: InstanceView[]; m: InstanceView[]; b: InstanceView[] }>();
      for (const inst of view.routable(req.model)) {
        let g = by.get(inst.region);
        if (!g) by.set(inst.region, (g = { i: [], m: [], b: [] }));
        if (inst.pool.endsWith(opts.niwPoolSuffix)) g.b.push(inst);
        else if (inst.pool.endsWith(opts.mixedPoolSuffix)) g.m.push(inst);
        else g.i.push(inst);
      }
      const order = opts.reroute ? regionPreference(req.region, opts.regionOrder, by.keys()) : [req.region];
      if (niw) {
        let least: InstanceView[] | null = null;
        let leastU = Infinity;
        for (const r of order) {
          const g = by.get(r);
          if (!g) continue;
          if (g.b.length > 0) {
            const u = effectiveUtil(g.b);
            if (u <= opts.mixedAbove) return { kind: 'send', to: pickInstance(g.b), reason: 'chiron-batch' };
            if (u < leastU) {
              least = g.b;
              leastU = u;
            }
          }
          if (g.m.length > 0) return { kind: 'send', to: pickInstance(g.m), reason: 'chiron-batch-to-mixed' };
        }
        return least ? { kind: 'send', to: pickInstance(least), reason: 'chiron-batch-least-utilised' } : NO_INSTANCE;
      }
      const iw = new Map<string, InstanceView[]>();
      for (const r of order) {
        const g = by.get(r);
        if (g && g.i.length + g.m.length > 0) iw.set(r, g.m.length === 0 ? g.i : g.i.length === 0 ? g.m : [...g.i, ...g.m]);
      }
      const pick = pickRegion(req, iw);
      if (pick === null) return NO_INSTANCE;
      const g = by.get(pick.region)!;
      if (g.m.length > 0 && (g.i.length === 0 || effectiveUtil(g.i) > opts.mixedAbove)) return { kind: 'send', to: pickInstance(g.m), reason: 'chiron-mixed' };
      return { kind: 'send', to: pickInstance(g.i), reason: 'chiron-interactive' };
    };

    return {
      name: 'sageserve',
      heldSignalIntervalS: opts.niwSignalIntervalS,
      route(req: RequestView, view: FleetView): RouteDecision {
        const niw = req.tier === opts.niwTier;
        scan(view);
        if (chiron.get(req.model) === true) return routeChiron(req, view, niw);
        if (siloed.get(req.model) === true) return routeIw(req, endpoints(req, view, niw));
        if (!niw || !opts.holdNiw || view.now - req.arrivalS >= opts.niwPromoteAfterS) return routeIw(req, endpoints(req, view, null));
        const held = opts.niwQueues === 'model' ? HELD : heldIn(req.region);
        // No endpoint that may take it signalled now: held, without looking at the fleet (a held FIFO's head is
        // offered at every completion of its model, in any region).
        if (opts.niwReleaseTo === 'signalling') {
          const s = signalled.get(req.model);
          if (s === undefined || s.at !== view.now || (!opts.reroute && s.regions !== null && !s.regions.has(req.region))) return held;
        }
        const by = endpoints(req, view, null);
        // NIW queue manager: a fresh budget per endpoint at each new signal time.
        if (view.now !== epoch) {
          epoch = view.now;
          budget.clear();
        }
        const order = opts.reroute ? regionPreference(req.region, opts.regionOrder, by.keys()) : [req.region];
        for (const r of order) {
          const eps = by.get(r);
          if (!eps || !mayRelease(req.model, r, view.now)) continue;
          const key = `${req.model}\u0000${r}`;
          let b = budget.get(key);
          if (b === undefined) b = niwReleaseCount(effectiveUtil(eps), opts.niwRelease, opts.niwOneBelow, opts.niwTwoBelow);
          if (b > 0) {
            budget.set(key, b - 1);
            return { kind: 'send', to: pickInstance(eps), reason: 'niw-released' };
          }
          budget.set(key, 0);
        }
        return held;
      },
      endpointSignal(model: string, regions: ReadonlySet<string> | null, now: number): void {
        const earlier = signalled.get(model);
        if (earlier === undefined || earlier.at !== now || regions === null) signalled.set(model, { at: now, regions });
        // Signals at one instant (two completion events at the same time) add up; null already covers every endpoint.
        else if (earlier.regions !== null) signalled.set(model, { at: now, regions: new Set([...earlier.regions, ...regions]) });
      },
    };
  },
} satisfies RouterEntry<typeof sageserveRouterOptions>;

const HELD: RouteDecision = { kind: 'defer', reason: 'niw-held', hold: true };
