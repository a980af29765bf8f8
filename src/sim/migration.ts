import type { SimRequest } from '../engine/request.ts';
import type { MigrationOrder } from '../policy/routing/types.ts';
import type { Scenario } from '../scenario/schema.ts';
import type { Fleet, Instance } from './fleet.ts';

/**
 * Live migration of running requests between instances, as Llumnix does it (OSDI '24 §5; its vLLM backend):
 * the destination pre-allocates blocks, the KV is copied in stages while the request keeps decoding on the
 * source (each stage copies what the previous one left behind), and once at most `lastStageMaxBlocks` remain the
 * request is suspended at an iteration boundary, the rest is copied, and it resumes on the destination with its
 * KV (no recompute). A stage takes tokens × KV bytes per token / `bandwidthGBps`; the suspension adds `stallS`.
 * A migration is dropped (the request stays where it is) when the request finishes or is preempted meanwhile,
 * when the destination stops being ready, or after `maxStages` live stages. Routers order migrations
 * (`Router.migrate`); this module carries them out.
 */

export type MigrationSettings = Scenario['migration'];

export interface MigrationSummary {
  ordered: number;
  completed: number;
  /** Orders not started: the destination lacked free KV blocks or could never take the request, or the request could not move. */
  refused: number;
  /** Started, then dropped (finished, preempted, destination gone, too many stages). */
  dropped: number;
  /** Started and still under way when the run was cut off at `endS` (so ordered = completed + refused + dropped + inFlight). */
  inFlight: number;
  /** KV tokens copied over all stages of completed and dropped migrations. */
  copiedTokens: number;
  /** Mean seconds a migrated request was suspended (last stage + stall). */
  meanDowntimeS: number;
}

interface InFlight {
  r: SimRequest;
  from: Instance;
  to: Instance;
  /** Blocks held on the destination. */
  reserved: number;
  /** KV tokens copied so far. */
  copied: number;
  stages: number;
  /** The request's preemption count at the start: a preemption destroys the KV being copied. */
  preemptions: number;
  /** Seconds it is suspended (last stage + stall), once detached. */
  downtimeS: number;
  phase: 'copy' | 'detach' | 'transit';
}

/**
 * What the simulator does for this module: schedule a timed step of request `req`'s migration, schedule an engine
 * boundary event, and route again a request whose destination went away while its KV was in transit.
 */
export interface MigrationHooks {
  at(t: number, req: number): void;
  boundary(inst: Instance, t: number): void;
  reroute(r: SimRequest, now: number): void;
}

export class Migrations {
  private readonly live = new Map<number, InFlight>();
  private readonly stats = { ordered: 0, completed: 0, refused: 0, dropped: 0, copiedTokens: 0, downtimeS: 0 };

  constructor(
    private readonly settings: MigrationSettings,
    private readonly fleet: Fleet,
    private readonly hooks: MigrationHooks,
  ) {}

  /** Instances with a migration in flight, in or out (a router orders at most one per instance at a time). */
  busy(): Set<number> {
    const s = new Set<number>();
    for (const m of this.live.values()) {
      s.add(m.from.id);
      s.add(m.to.id);
    }
    return s;
  }

  /** Starts the first copy stage of an order, or refuses it. */
  start(o: MigrationOrder, now: number): void {
    this.stats.ordered++;
    const from = this.fleet.instances[o.from];
    const to = this.fleet.instances[o.to];
    const r = from?.engine.running.find((x) => x.id === o.request);
    if (!from || !to || !r || from === to || to.state !== 'ready' || to.model !== from.model || this.live.has(r.id) || r.inPrefill || r.generated < 1 || !accepts(to, r)) {
      this.stats.refused++;
      return;
    }
    from.engine.sync(now, true);
    to.engine.sync(now, true);
    const e = to.engine;
    const blocks = Math.ceil((r.kvTokens + 1) / e.cfg.blockTokens);
    if (r.status !== 'running' || blocks > e.cfg.kvBlocks - e.usedBlocks) {
      this.stats.refused++;
      return;
    }
    const m: InFlight = { r, from, to, reserved: blocks, copied: 0, stages: 0, preemptions: r.preemptions, downtimeS: 0, phase: 'copy' };
    this.live.set(r.id, m);
    const t = e.reserve(blocks, now);
    if (!Number.isNaN(t)) this.hooks.boundary(to, t);
    this.copyStage(m, r.kvTokens, now);
  }

  /** A timed step: a live copy stage ended, or the suspended request reaches its destination. */
  onTimer(req: number, now: number): void {
    const m = this.live.get(req);
    if (!m) return;
    if (m.phase === 'transit') return this.arrive(m, now);
    const { r, from, to } = m;
    from.engine.sync(now, true);
    if (r.status !== 'running' || r.instance !== from.id || r.preemptions !== m.preemptions || to.state !== 'ready') return this.drop(m, now);
    const left = r.kvTokens - m.copied;
    if (left <= this.settings.lastStageMaxBlocks * to.engine.cfg.blockTokens) {
      m.phase = 'detach';
      const t = from.engine.detach(r, now);
      if (!Number.isNaN(t)) this.hooks.boundary(from, t);
      return;
    }
    if (m.stages >= this.settings.maxStages) return this.drop(m, now);
    this.copyStage(m, left, now);
  }

  /** After a boundary of `inst`: requests it handed over start their last stage; others asked to leave stay. */
  afterBoundary(inst: Instance, now: number): void {
    for (const r of inst.engine.takeDetached()) {
      const m = this.live.get(r.id)!;
      const left = r.kvTokens - m.copied;
      m.downtimeS = this.copySeconds(m, left) + this.settings.stallS;
      m.copied += left;
      this.stats.copiedTokens += left;
      m.phase = 'transit';
      this.hooks.at(now + m.downtimeS, r.id);
    }
    for (const m of this.live.values()) {
      if (m.phase === 'detach' && m.from === inst && m.r.status !== 'migrating') this.drop(m, now);
    }
  }

  /** Whether `inst` has a request asked to leave at its next boundary (the simulator calls `afterBoundary` then). */
  detaching(inst: Instance): boolean {
    for (const m of this.live.values()) if (m.phase === 'detach' && m.from === inst) return true;
    return false;
  }

  /**
   * At the end of the run: a migration whose request finished before its next copy stage would have been dropped
   * then; drop it now (its destination blocks are released). What remains was cut off by `endS`.
   */
  settle(now: number): void {
    for (const m of [...this.live.values()]) if (m.r.status !== 'running' && m.r.status !== 'migrating') this.drop(m, now);
  }

  summary(): MigrationSummary {
    const s = this.stats;
    return {
      ordered: s.ordered,
      completed: s.completed,
      refused: s.refused,
      dropped: s.dropped,
      inFlight: this.live.size,
      copiedTokens: s.copiedTokens,
      meanDowntimeS: s.completed > 0 ? s.downtimeS / s.completed : 0,
    };
  }

  private copyStage(m: InFlight, tokens: number, now: number): void {
    m.stages++;
    m.copied += tokens;
    this.stats.copiedTokens += tokens;
    this.hooks.at(now + this.copySeconds(m, tokens), m.r.id);
  }

  private copySeconds(m: InFlight, tokens: number): number {
    return (tokens * m.from.poolRt.kvBytesPerToken) / (this.settings.bandwidthGBps * 1e9);
  }

  private arrive(m: InFlight, now: number): void {
    this.live.delete(m.r.id);
    const { r, to } = m;
    if (to.state === 'stopped') {
      // The destination went away with the KV in transit: the request starts over elsewhere, as after a preemption.
      this.stats.dropped++;
      to.engine.release(m.reserved, now);
      r.kvTokens = 0;
      r.prefilled = 0;
      r.prefillTarget = r.inputTokens + r.generated;
      r.preemptions++;
      r.status = 'pending';
      this.hooks.reroute(r, now);
      return;
    }
    this.stats.completed++;
    this.stats.downtimeS += m.downtimeS;
    const t = to.engine.attach(r, m.reserved, now);
    if (!Number.isNaN(t)) this.hooks.boundary(to, t);
  }

  private drop(m: InFlight, now: number): void {
    this.live.delete(m.r.id);
    this.stats.dropped++;
    const t = m.to.engine.release(m.reserved, now);
    if (!Number.isNaN(t)) this.hooks.boundary(m.to, t);
  }
}

/**
 * Whether a destination could take the request at all, as dispatch checks: its pool's context holds the request
 * and its KV the request's peak (on a pool with fewer blocks the request would preempt itself at its last free
 * block and never be readmitted).
 */
function accepts(to: Instance, r: SimRequest): boolean {
  return r.inputTokens + r.outputTokens <= to.poolRt.contextLength && to.engine.canEverFit(r);
}
