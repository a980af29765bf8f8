import { z } from 'zod';
import type { FleetView, InstanceView } from '../types.ts';
import { NO_INSTANCE, type MigrationOrder, type RouterEntry } from './types.ts';
import { pickMin } from './pick.ts';

/**
 * Llumnix's live migration (`--enable-migration`), with its defaults (docs/Arguments.md): every polling interval
 * (`--polling-interval` 0.05 s, `--pair-migration-frequency` 1) instances are paired by their migration load
 * (`--migration-load-metric remaining_steps`: free KV blocks per running request). Sources: fewer than
 * `--migrate-out-threshold` 3 blocks per request, or a preempted request waiting to recompute (Llumnix's "killed
 * requests"); destinations: more than 3 and none preempted. `--pair-migration-policy defrag` zips the most loaded
 * sources with the least loaded destinations; `balanced` also requires the pair's load gap to shrink. One request
 * per pair per interval, chosen by `--request-migration-policy SR` (the shortest running one).
 */
export const llumnixMigrationOptions = z
  .object({
    enabled: z.boolean().default(false),
    intervalS: z.number().min(0.001).max(3600).default(0.05),
    pairPolicy: z.enum(['defrag', 'balanced']).default('defrag'),
    /** Free KV blocks per running request below which an instance migrates out (above: it may take one in). */
    outThresholdBlocks: z.number().min(0).default(3),
    /** The block size the threshold counts in (vLLM's 16). */
    blockTokens: z.number().int().positive().default(16),
    /** SR: shortest running (fewest KV tokens), LR: longest running, LCR: last come running. */
    requestPolicy: z.enum(['SR', 'LR', 'LCR']).default('SR'),
  })
  .strict();
type MigrationOpts = z.infer<typeof llumnixMigrationOptions>;

export const llumnixOptions = z
  .object({
    /**
     * `remaining-steps` (default, as Llumnix's `--dispatch-load-metric` default): Llumnix's `RemainingStepsLoad`
     * (its paper's "freeness"), (free KV − KV wanted by every waiting request) per running or waiting request; the
     * most free instance wins, an empty one first. `kv-blocks-ratio`: Llumnix's `KvBlocksRatioLoad`,
     * (KV in use + waiting demand) / capacity.
     */
    metric: z.enum(['kv-blocks-ratio', 'remaining-steps']).default('remaining-steps'),
    /**
     * Seconds between reads of the instances' loads (Llumnix's `--polling-interval`, 0.05 s there). 0 (default):
     * every decision reads fresh loads. Between reads the dispatcher reuses the last values, so requests that
     * arrive within one interval do not see each other.
     */
    refreshS: z.number().min(0).max(3600).default(0),
    /** Live migration of running requests between instances; off by default (dispatch only). */
    migration: llumnixMigrationOptions.default(llumnixMigrationOptions.parse({})),
  })
  .strict();

/** KV tokens the instance's waiting requests will want when admitted (their prompt, or prompt + output after a preemption). */
function waitingDemandTokens(inst: InstanceView): number {
  if (inst.numWaiting === 0) return 0; // the common case, without copying the request list
  let s = 0;
  for (const r of inst.requests()) if (r.status !== 'running') s += r.kvTokens + r.prefillTarget - r.prefilled;
  return s;
}

/** Llumnix's `KvBlocksRatioLoad`: lower is lighter. */
function kvBlocksRatio(i: InstanceView): number {
  return i.kvUsedFraction + waitingDemandTokens(i) / Math.max(1, i.kvCapacityTokens);
}

/** Llumnix's `RemainingStepsLoad`, negated so that lower is lighter; an instance with no request is +∞ free. */
function negRemainingSteps(i: InstanceView): number {
  if (i.outstandingRequests === 0) return -Infinity;
  const m = Math.max(1, i.kvCapacityTokens);
  return -((1 - i.kvUsedFraction) * m - waitingDemandTokens(i)) / i.outstandingRequests;
}

/** Llumnix's migration load, in free blocks per running request (+∞ with none running: the freest). */
function freeBlocksPerRequest(i: InstanceView, blockTokens: number): number {
  if (i.numRunning === 0) return Infinity;
  return ((1 - i.kvUsedFraction) * i.kvCapacityTokens) / blockTokens / i.numRunning;
}

/** Whether a request on the instance was preempted and waits to recompute (Llumnix's `num_killed_requests > 0`). */
function hasKilled(i: InstanceView): boolean {
  if (i.numWaiting === 0) return false;
  for (const r of i.requests()) if (r.status !== 'running' && r.generated > 0) return true;
  return false;
}

/** The migration orders of one polling interval (see `llumnixMigrationOptions`). */
export function llumnixMigrations(view: FleetView, busy: ReadonlySet<number>, o: MigrationOpts): MigrationOrder[] {
  // Most polls find no instance short of KV: answer those without allocating (measured: the pairing below took
  // 60 % of a 4-hour, 40-instance run that never migrated).
  let anySource = false;
  for (const i of view.instances) {
    if (i.state === 'ready' && !busy.has(i.id) && (freeBlocksPerRequest(i, o.blockTokens) < o.outThresholdBlocks || hasKilled(i))) {
      anySource = true;
      break;
    }
  }
  if (!anySource) return [];
  // Pairs form within one model in one region (one Llumnix deployment); KV does not cross regions.
  const groups = new Map<string, InstanceView[]>();
  for (const i of view.instances) {
    if (i.state !== 'ready' || busy.has(i.id)) continue;
    const key = `${i.model}\u0000${i.region}`;
    const list = groups.get(key);
    if (list) list.push(i);
    else groups.set(key, [i]);
  }
  const orders: MigrationOrder[] = [];
  for (const insts of groups.values()) {
    if (insts.length < 2) continue;
    const load = new Map<number, number>();
    const killed = new Map<number, boolean>();
    for (const i of insts) {
      load.set(i.id, freeBlocksPerRequest(i, o.blockTokens));
      killed.set(i.id, hasKilled(i));
    }
    const src = insts.filter((i) => killed.get(i.id) || load.get(i.id)! < o.outThresholdBlocks);
    const dst = insts.filter((i) => !killed.get(i.id) && load.get(i.id)! > o.outThresholdBlocks);
    src.sort((a, b) => load.get(a.id)! - load.get(b.id)! || a.id - b.id); // most loaded first
    dst.sort((a, b) => load.get(b.id)! - load.get(a.id)! || a.id - b.id); // least loaded first
    for (let k = 0; k < Math.min(src.length, dst.length); k++) {
      const s = src[k]!;
      const d = dst[k]!;
      if (o.pairPolicy === 'balanced' && !balancedGain(s, d, o)) continue;
      const r = pickRequest(s, o.requestPolicy);
      if (r !== undefined) orders.push({ request: r, from: s.id, to: d.id, reason: `${o.pairPolicy}-${o.requestPolicy}` });
    }
  }
  return orders;
}

/**
 * Llumnix `Balanced`: migrate only if moving one average request leaves the destination above the threshold and
 * narrows the pair's load gap without inverting it.
 */
function balancedGain(s: InstanceView, d: InstanceView, o: MigrationOpts): boolean {
  const free = (i: InstanceView) => ((1 - i.kvUsedFraction) * i.kvCapacityTokens) / o.blockTokens;
  const perReq = (s.kvUsedFraction * s.kvCapacityTokens) / o.blockTokens / Math.max(1, s.numRunning);
  const before = free(d) / Math.max(1, d.numRunning) - free(s) / Math.max(1, s.numRunning);
  const sAfter = s.numRunning > 1 ? (free(s) + perReq) / (s.numRunning - 1) : Infinity;
  const dAfter = (free(d) - perReq) / (d.numRunning + 1);
  const after = dAfter - sAfter;
  return dAfter > o.outThresholdBlocks && after > 0 && after < before;
}

/** The running, decoding request the request policy moves (undefined: none can move). */
function pickRequest(i: InstanceView, policy: MigrationOpts['requestPolicy']): number | undefined {
  let best: { id: number; key: number } | undefined;
  const reqs = i.requests();
  for (let k = 0; k < reqs.length; k++) {
    const r = reqs[k]!;
    if (r.status !== 'running' || r.prefilled < r.prefillTarget || r.generated < 1) continue;
    const key = policy === 'SR' ? r.kvTokens : policy === 'LR' ? -r.kvTokens : -k;
    if (best === undefined || key < best.key) best = { id: r.id, key };
  }
  return best?.id;
}

/**
 * A Llumnix-like dispatcher (anchors doc §2.11, Llumnix `load` dispatch policy, top-1): the instance with the lowest
 * KV-demand load, counting queued requests' demand as if already admitted (Llumnix's "virtual usage"); ties go to
 * the lowest id. With `migration.enabled` it also live-migrates running requests (`llumnixMigrations`, carried out
 * by sim/migration.ts). Worked number (M = 10,000): one request holding 3,000 tokens → 7,000 free
 * per request; ten requests holding 200 each → 800 per request: remaining-steps picks the first.
 */
export const llumnix = {
  options: llumnixOptions,
  make(opts) {
    const load = opts.metric === 'kv-blocks-ratio' ? kvBlocksRatio : negRemainingSteps;
    const reason = opts.metric === 'kv-blocks-ratio' ? 'lowest-kv-demand' : 'most-freeness';
    const cache = new Map<number, number>();
    let readAt = -Infinity;
    const mig = opts.migration;
    return {
      name: 'llumnix',
      ...(mig.enabled ? { migrateIntervalS: mig.intervalS, migrate: (view: FleetView, busy: ReadonlySet<number>) => llumnixMigrations(view, busy, mig) } : {}),
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        const fresh = view.now - readAt >= opts.refreshS;
        if (fresh) {
          cache.clear();
          readAt = view.now;
        }
        const cachedLoad = (inst: InstanceView): number => {
          let v = cache.get(inst.id);
          if (v === undefined) {
            v = load(inst);
            cache.set(inst.id, v);
          }
          return v;
        };
        return { kind: 'send', to: pickMin(c, cachedLoad).id, reason };
      },
    };
  },
} satisfies RouterEntry<typeof llumnixOptions>;
