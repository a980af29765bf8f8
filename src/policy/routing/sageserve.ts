import { z } from 'zod';
import { withPresets } from '../options.ts';
import { niwReleaseCount } from '../sageserve/niw.ts';
import { deployments, effectiveUtil, regionPreference } from '../sageserve/util.ts';
import type { FleetView, InstanceView, RequestView } from '../types.ts';
import { pickMin } from './pick.ts';
import { NO_INSTANCE, type RouteDecision, type RouterEntry } from './types.ts';

/** The released code's routing where it differs from the paper: its NIW release counts, no cross-region reroute. */
export const ROUTING_CODE_PRESET = { niwRelease: 'code', reroute: false } as const;

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
    niwOneBelow: z.number().min(0).max(1).default(0.6),
    niwTwoBelow: z.number().min(0).max(1).default(0.5),
    /** NIW older than this is released at once and routed like IW (age > 10 h ⇒ priority 0). */
    niwPromoteAfterS: z.number().min(0).default(36_000),
    /**
     * Pools whose name ends with this serve only NIW (the siloed and Chiron baselines). As soon as the fleet
     * holds any instance of such a pool for a model, that model runs siloed: IW goes to the other pools, NIW
     * straight to these (no queue manager).
     */
    niwPoolSuffix: z.string().min(1).default('-niw'),
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
 * requests when a request of the model finishes and at each timeline sample) an endpoint below 60 % takes one,
 * below 50 % two (`niwRelease: code` inverts the counts as the released code does). NIW older than 10 h goes
 * at once. Signals are evaluated per distinct `now`: every endpoint of the model gets its budget afresh.
 */
export const sageserve = {
  options: sageserveRouterOptions,
  make(opts: Opts) {
    let epoch = NaN;
    const budget = new Map<string, number>();
    const siloed = new Map<string, boolean>();
    let scanned = 0;

    const isSiloed = (view: FleetView, model: string): boolean => {
      // The simulator's list only grows, so new instances are scanned once; a shorter list (a filtered live
      // view) is scanned from the start.
      if (view.instances.length < scanned) scanned = 0;
      for (; scanned < view.instances.length; scanned++) {
        const i = view.instances[scanned]!;
        if (i.pool.endsWith(opts.niwPoolSuffix)) siloed.set(i.model, true);
      }
      return siloed.get(model) === true;
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

    const routeIw = (req: RequestView, by: Map<string, InstanceView[]>): RouteDecision => {
      if (by.size === 0) return NO_INSTANCE;
      const own = by.get(req.region);
      if (!opts.reroute) return own ? { kind: 'send', to: pickInstance(own), reason: 'own-region' } : NO_INSTANCE;
      let least: InstanceView[] | null = null;
      let leastU = Infinity;
      for (const r of regionPreference(req.region, opts.regionOrder, by.keys())) {
        const eps = by.get(r);
        if (!eps) continue;
        const u = effectiveUtil(eps);
        if (u < opts.routeThreshold) return { kind: 'send', to: pickInstance(eps), reason: 'region-below-threshold' };
        if (u < leastU) {
          least = eps;
          leastU = u;
        }
      }
      return { kind: 'send', to: pickInstance(least!), reason: 'least-utilised-region' };
    };

    return {
      name: 'sageserve',
      route(req: RequestView, view: FleetView): RouteDecision {
        const niw = req.tier === opts.niwTier;
        if (isSiloed(view, req.model)) return routeIw(req, endpoints(req, view, niw));
        const by = endpoints(req, view, null);
        if (!niw || !opts.holdNiw || view.now - req.arrivalS >= opts.niwPromoteAfterS) return routeIw(req, by);
        // NIW queue manager: a fresh budget per endpoint at each new signal time.
        if (view.now !== epoch) {
          epoch = view.now;
          budget.clear();
        }
        const order = opts.reroute ? regionPreference(req.region, opts.regionOrder, by.keys()) : [req.region];
        for (const r of order) {
          const eps = by.get(r);
          if (!eps) continue;
          const key = `${req.model}\u0000${r}`;
          let b = budget.get(key);
          if (b === undefined) b = niwReleaseCount(effectiveUtil(eps), opts.niwRelease, opts.niwOneBelow, opts.niwTwoBelow);
          if (b > 0) {
            budget.set(key, b - 1);
            return { kind: 'send', to: pickInstance(eps), reason: 'niw-released' };
          }
          budget.set(key, 0);
        }
        return HELD;
      },
    };
  },
} satisfies RouterEntry<typeof sageserveRouterOptions>;

const HELD: RouteDecision = { kind: 'defer', reason: 'niw-held', hold: true };
