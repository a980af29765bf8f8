import type { z } from 'zod';
import type { FleetView, PolicyContext } from '../types.ts';

/** What a scaler asks for. "No change" is a value (`hold`), never an exception. */
export type ScaleAction =
  | { kind: 'add'; pool: string; count: number; reason: string }
  | { kind: 'remove'; pool: string; count: number; reason: string }
  | { kind: 'hold'; reason: string };

/** The net instances `actions` ask for `pool`: + for adds, − for removes (holds and other pools count nothing). */
export function netChange(actions: readonly ScaleAction[], pool: string): number {
  let n = 0;
  for (const a of actions) if (a.kind !== 'hold' && a.pool === pool) n += a.kind === 'add' ? a.count : -a.count;
  return n;
}

/** One pool at a control tick. */
export interface PoolStatus {
  readonly name: string;
  readonly model: string;
  readonly hardware: string;
  readonly region: string;
  readonly tp: number;
  readonly pp: number;
  readonly provisioning: number;
  readonly ready: number;
  readonly draining: number;
  readonly minCount: number;
  readonly maxCount: number;
  /** Mean KV utilisation over the pool's ready instances (0 when none). */
  readonly kvUtilization: number;
  readonly outstandingRequests: number;
  readonly waiting: number;
  /**
   * Requests of the pool's model waiting at the gateway for an instance (deferred or held by the router), counted
   * apart from `waiting` (the simulator: on no instance yet). The live autoscaler counts its gateway queue in
   * `waiting` and leaves this out.
   */
  readonly queued?: number;
}

/**
 * A pool's instances that hold devices: provisioning, ready and draining (a draining one still runs its requests).
 * `maxCount` bounds these; `minCount` bounds the active ones (provisioning + ready).
 */
export function heldInstances(p: PoolStatus): number {
  return p.provisioning + p.ready + p.draining;
}

/** Arrivals of one (model, region, tier) over the last control interval (inputs known at arrival, outputs as predicted). */
export interface ArrivalStats {
  readonly model: string;
  readonly region: string;
  readonly tier: string;
  readonly requests: number;
  readonly inputTokens: number;
  readonly predictedOutputTokens: number;
  /**
   * The true output tokens of these arrivals, where a replay knows them (the simulator: the trace's lengths); the
   * live gateway cannot know them at arrival and leaves this out. PreServe's Tier 1 reads it (Alg. 2 appends the
   * true D_i when a window ends).
   */
  readonly outputTokens?: number;
}

/** Everything a scaler may read at a tick; `now` is handed in, never read from a clock. */
export interface ScalingSignals {
  readonly now: number;
  readonly intervalS: number;
  readonly pools: readonly PoolStatus[];
  /** One entry per (model, region, tier) that saw arrivals, sorted by model, region, tier. */
  readonly arrivals: readonly ArrivalStats[];
  readonly view: FleetView;
}

export interface Scaler {
  readonly name: string;
  decide(signals: ScalingSignals): ScaleAction[];
  /** After a run: what the scaler did that the scenario did not say (e.g. forecasts that fell back), one line each. */
  notes?(): string[];
}

export interface ScalerEntry<S extends z.ZodType = z.ZodType> {
  options: S;
  make(opts: z.infer<S>, ctx: PolicyContext): Scaler;
}

/** Declares a scaler so its `make` sees its own options' type. */
export function defineScaler<S extends z.ZodType>(entry: ScalerEntry<S>): ScalerEntry<S> {
  return entry;
}
