import { Engine, type EngineConfig, type EngineListener } from '../engine/engine.ts';
import type { PerfModel } from '../perf/types.ts';
import type { FleetView, InstanceState, InstanceView, RequestProgress } from '../policy/types.ts';
import type { QueueOrderFactory } from '../policy/scheduling/types.ts';
import type { LeadTime } from '../policy/sageserve/lead-time.ts';

/** Everything needed to start instances of one pool (resolved from the scenario once). */
export interface PoolRuntime {
  name: string;
  model: string;
  hardware: string;
  tp: number;
  pp: number;
  region: string;
  /** Devices per instance (tp × pp) and the price of one device-hour. */
  devices: number;
  priceUsdPerDeviceHour: number;
  perf: PerfModel;
  engine: EngineConfig;
  queueOrder: QueueOrderFactory;
  /** From "add" to routable: VM acquisition, then model load (each fixed or drawn per instance). */
  provisioning: { vmAcquireS: LeadTime; modelLoadS: LeadTime };
  /** Longest prompt + output an instance accepts (the pool's `contextLength`, else the model's). */
  contextLength: number;
  /** KV bytes one token occupies on an instance (what a migration copies). */
  kvBytesPerToken: number;
}

/** One instance: its engine, lifecycle times, and the load signals policies read through `InstanceView`. */
export class Instance implements InstanceView {
  state: InstanceState;
  readonly engine: Engine;
  readonly createdS: number;
  readyS: number;
  stoppedS = -1;

  constructor(
    readonly id: number,
    readonly poolRt: PoolRuntime,
    private readonly fleet: Fleet,
    listener: EngineListener,
    now: number,
    warm: boolean,
    provisionS: number,
  ) {
    // The queue order may read the clock (deadline-aware orders); the simulator keeps `fleet.now` current.
    this.engine = new Engine(id, poolRt.engine, poolRt.perf, poolRt.queueOrder({ now: () => fleet.now }), listener);
    this.createdS = now;
    this.state = warm ? 'ready' : 'provisioning';
    this.readyS = warm ? now : now + provisionS;
  }

  get pool(): string {
    return this.poolRt.name;
  }
  get model(): string {
    return this.poolRt.model;
  }
  get hardware(): string {
    return this.poolRt.hardware;
  }
  get tp(): number {
    return this.poolRt.tp;
  }
  get pp(): number {
    return this.poolRt.pp;
  }
  get region(): string {
    return this.poolRt.region;
  }
  get numRunning(): number {
    return this.engine.numRunning;
  }
  get numWaiting(): number {
    return this.engine.numWaiting;
  }
  get outstandingRequests(): number {
    return this.engine.numRunning + this.engine.numWaiting;
  }
  get kvUsedFraction(): number {
    const e = this.engine;
    e.sync(this.fleet.now, false);
    return e.cfg.scheduler === 'splitwise'
      ? e.reservedTokens / (e.cfg.kvBlocks * e.cfg.blockTokens)
      : e.usedBlocks / e.cfg.kvBlocks;
  }
  get outstandingTokens(): number {
    this.engine.sync(this.fleet.now, false);
    return this.engine.outstandingTokens();
  }
  get kvCapacityTokens(): number {
    return this.engine.cfg.kvBlocks * this.engine.cfg.blockTokens;
  }
  requests(): readonly RequestProgress[] {
    this.engine.sync(this.fleet.now, false);
    const out: RequestProgress[] = this.engine.running.slice();
    this.engine.waiting.forEach((r) => out.push(r));
    return out;
  }
  get pendingTokens(): number {
    return this.engine.pendingTokens;
  }
}

/**
 * The set of instances and their lifecycle: add (provisioning → ready after the pool's delay), drain (no new
 * requests; stopped once empty), stop. Keeps, per model, the ready instances in id order for routers.
 */
export class Fleet implements FleetView {
  now = 0;
  readonly instances: Instance[] = [];
  private readonly routableByModel = new Map<string, Instance[]>();
  /** Called when an instance stops (the simulator donates it to the spot pool, if the scenario has one). */
  onStop: ((inst: Instance, now: number) => void) | null = null;

  constructor(private readonly listener: EngineListener) {}

  routable(model: string): readonly InstanceView[] {
    return this.routableByModel.get(model) ?? EMPTY;
  }

  /** `provisionS` is the delay to ready when not `warm`. */
  add(pool: PoolRuntime, now: number, warm: boolean, provisionS = 0): Instance {
    const inst = new Instance(this.instances.length, pool, this, this.listener, now, warm, provisionS);
    this.instances.push(inst);
    if (warm) this.indexReady(inst);
    return inst;
  }

  markReady(inst: Instance, now: number): void {
    if (inst.state !== 'provisioning') return;
    inst.state = 'ready';
    inst.readyS = now;
    this.indexReady(inst);
  }

  /** Stops routing to the instance; it stops when its last request finishes (at once if idle). */
  drain(inst: Instance, now: number): void {
    if (inst.state === 'provisioning') {
      this.stop(inst, now);
      return;
    }
    if (inst.state !== 'ready') return;
    inst.state = 'draining';
    this.unindex(inst);
    if (inst.outstandingRequests === 0) this.stop(inst, now);
  }

  /** Called after requests finish on a draining instance. */
  stopIfDrained(inst: Instance, now: number): void {
    if (inst.state === 'draining' && inst.outstandingRequests === 0) this.stop(inst, now);
  }

  private stop(inst: Instance, now: number): void {
    this.unindex(inst);
    inst.state = 'stopped';
    inst.stoppedS = now;
    this.onStop?.(inst, now);
  }

  private indexReady(inst: Instance): void {
    let list = this.routableByModel.get(inst.model);
    if (!list) this.routableByModel.set(inst.model, (list = []));
    // Kept in id order; a new instance has the largest id, so this is a push except when a provisioning one turns ready.
    let i = list.length;
    while (i > 0 && list[i - 1]!.id > inst.id) i--;
    list.splice(i, 0, inst);
  }

  private unindex(inst: Instance): void {
    const list = this.routableByModel.get(inst.model);
    if (!list) return;
    const i = list.indexOf(inst);
    if (i >= 0) list.splice(i, 1);
  }
}

const EMPTY: readonly InstanceView[] = [];

/**
 * Device-hours of one instance within [from, end): provisioning time counted, and reported apart as wasted
 * (counted from its creation).
 */
export function instanceHours(inst: Instance, end: number, from = 0): { instanceHours: number; wastedHours: number } {
  const stop = inst.stoppedS >= 0 ? inst.stoppedS : end;
  const live = Math.max(0, Math.min(stop, end) - Math.max(inst.createdS, from));
  const provisioning = Math.max(0, Math.min(inst.readyS, stop) - inst.createdS);
  return { instanceHours: live / 3600, wastedHours: provisioning / 3600 };
}
