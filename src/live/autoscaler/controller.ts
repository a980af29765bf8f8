import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Governor, type GovernorLimits } from '../../policy/scaling/governor.ts';
import type { PoolStatus, ScaleAction, Scaler, ScalingSignals } from '../../policy/scaling/types.ts';
import { UserError } from '../../util/errors.ts';
import type { Actuator, GatewayHandle, ScaledPool } from './types.ts';

export interface AutoscalerOptions {
  scaler: Scaler;
  limits: GovernorLimits;
  pools: ScaledPool[];
  actuator: Actuator;
  gateway: GatewayHandle;
  intervalS: number;
  /** JSONL file: one line per tick with the inputs, the policy's proposal, what the governor let through, and the results. */
  decisionLog?: string;
  /** JSON file with the controller state (last actions, cooldown times, actuator state); read at start if present. */
  stateFile?: string;
  /** Seconds on a clock that survives restarts (the CLI passes Unix time); tests step it by hand. */
  now: () => number;
}

interface PersistedState {
  version: 1;
  savedAtS: number;
  lastUpS: Record<string, number>;
  lastChangeS: Record<string, number>;
  lastActions: { t: number; action: ScaleAction; result: string }[];
  actuator?: unknown;
}

export interface TickRecord {
  t: number;
  pools: readonly PoolStatus[];
  arrivals: ScalingSignals['arrivals'];
  proposed: ScaleAction[];
  governed: ScaleAction[];
  results: string[];
  /** What the actuator's refresh noticed before the signals were built (e.g. a started process that exited); absent when nothing. */
  refreshed?: string;
}

/**
 * The live scaling loop: every `intervalS`, build `ScalingSignals` from the gateway's live fleet view, ask the
 * simulator's scaling policy, pass its proposal through the shared `Governor` (bounds, cooldowns, step limits
 * — never the policy's job), and hand the result to an actuator. Deciding stays separate from doing: the same
 * scaler and governor run in the simulator with its sim actuator.
 */
export class LiveAutoscaler {
  private readonly governor: Governor;
  private state: PersistedState;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private lastTickS = NaN;

  constructor(private readonly o: AutoscalerOptions) {
    this.governor = new Governor(o.limits);
    this.state = { version: 1, savedAtS: 0, lastUpS: {}, lastChangeS: {}, lastActions: [] };
    if (o.stateFile && existsSync(o.stateFile)) {
      try {
        const s = JSON.parse(readFileSync(o.stateFile, 'utf8')) as PersistedState;
        if (s.version !== 1) throw new Error(`version ${String(s.version)}`);
        this.state = s;
      } catch (e) {
        throw new UserError(`${o.stateFile}: not an autoscaler state file (${(e as Error).message}); delete it to start afresh`);
      }
      this.primeGovernor();
    }
  }

  /**
   * The Governor keeps its cooldown clock privately, so after a restart it is primed by replaying, per pool,
   * the last scale-up and then the last change (if later, it was a scale-down) at their recorded times,
   * against a pool with room both ways. Those actions passed the same governor when they happened, so with
   * unchanged limits the replay passes too and the governor ends with exactly the cooldown times it had.
   */
  private primeGovernor(): void {
    for (const p of this.o.pools) {
      const up = Object.hasOwn(this.state.lastUpS, p.name) ? this.state.lastUpS[p.name] : undefined;
      const change = Object.hasOwn(this.state.lastChangeS, p.name) ? this.state.lastChangeS[p.name] : undefined;
      const room: PoolStatus = { name: p.name, model: p.model, hardware: p.hardware, region: '', tp: p.tp, pp: 1, provisioning: 0, ready: 1, draining: 0, minCount: 0, maxCount: 2, kvUtilization: 0, outstandingRequests: 0, waiting: 0 };
      if (up !== undefined) this.governor.apply([{ kind: 'add', pool: p.name, count: 1, reason: 'restore' }], [room], up);
      if (change !== undefined && (up === undefined || change > up)) this.governor.apply([{ kind: 'remove', pool: p.name, count: 1, reason: 'restore' }], [room], change);
    }
  }

  /** Re-adopts what the actuator had started before a restart (call once before the first tick). */
  async restore(): Promise<void> {
    if (this.state.actuator !== undefined && this.o.actuator.restore) await this.o.actuator.restore(this.state.actuator);
  }

  start(): void {
    this.timer = setInterval(() => {
      if (!this.busy) void this.tick();
    }, this.o.intervalS * 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  get lastActions(): PersistedState['lastActions'] {
    return this.state.lastActions;
  }

  signals(now: number): ScalingSignals {
    const fleet = this.o.gateway.fleet;
    const pools: PoolStatus[] = this.o.pools.map((p) => {
      let provisioning = this.o.actuator.pending(p);
      let ready = 0;
      let draining = 0;
      let kv = 0;
      let outstanding = 0;
      let waiting = this.o.gateway.queuedFor(p.model);
      for (const b of fleet.instances) {
        if (b.model !== p.model || b.removed) continue;
        if (b.state === 'ready') {
          ready++;
          kv += b.kvUsedFraction;
        } else if (b.state === 'draining') draining++;
        // Capacity on its way: a backend that has never been healthy (starting) or a healthy one out for an outlier
        // ejection (back within ejectionS). One that was up and now fails its health checks (crashed, killed) is
        // counted as nothing, so the pool is topped back up to minCount and scalers do not wait on it.
        else if (b.state === 'provisioning' && (b.healthy || !b.wasHealthy)) provisioning++;
        outstanding += b.outstandingRequests;
        waiting += b.numWaiting;
      }
      return {
        name: p.name,
        model: p.model,
        hardware: p.hardware,
        region: '',
        tp: p.tp,
        pp: 1,
        provisioning,
        ready,
        draining,
        minCount: p.minCount,
        maxCount: p.maxCount,
        kvUtilization: ready > 0 ? kv / ready : 0,
        outstandingRequests: outstanding,
        waiting,
      };
    });
    const intervalS = Number.isNaN(this.lastTickS) ? this.o.intervalS : now - this.lastTickS;
    return { now, intervalS, pools, arrivals: this.o.gateway.takeArrivals(), view: fleet };
  }

  /** One control step: signals → policy → governor → actuator; logged and persisted. */
  async tick(): Promise<TickRecord> {
    this.busy = true;
    try {
      const now = this.o.now();
      const refreshed = await this.o.actuator.refresh?.(this.o.pools);
      const sig = this.signals(now);
      this.lastTickS = now;
      const proposed = this.o.scaler.decide(sig);
      const governed = this.governor.apply(proposed, sig.pools, now);
      const results: string[] = [];
      for (const a of governed) {
        if (a.kind === 'hold') continue;
        const pool = this.o.pools.find((p) => p.name === a.pool)!;
        let result: string;
        try {
          result = a.kind === 'add' ? await this.o.actuator.add(pool, a.count) : await this.o.actuator.remove(pool, a.count);
        } catch (e) {
          result = `failed: ${(e as Error).message}`;
        }
        results.push(result);
        if (a.kind === 'add') this.state.lastUpS[a.pool] = now;
        this.state.lastChangeS[a.pool] = now;
        this.state.lastActions.push({ t: now, action: a, result });
        if (this.state.lastActions.length > 50) this.state.lastActions.shift();
      }
      this.o.gateway.recordScaling?.(sig.pools, proposed, governed);
      const rec: TickRecord = { t: now, pools: sig.pools, arrivals: sig.arrivals, proposed, governed, results, ...(refreshed ? { refreshed } : {}) };
      if (this.o.decisionLog) appendFileSync(this.o.decisionLog, `${JSON.stringify({ ...rec, actuator: this.o.actuator.kind, scaler: this.o.scaler.name })}\n`);
      this.persist(now);
      return rec;
    } finally {
      this.busy = false;
    }
  }

  private persist(now: number): void {
    if (!this.o.stateFile) return;
    this.state.savedAtS = now;
    this.state.actuator = this.o.actuator.snapshot?.();
    const tmp = `${this.o.stateFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state, null, 1));
    renameSync(tmp, this.o.stateFile); // atomic: a crash mid-write leaves the previous state
  }
}
