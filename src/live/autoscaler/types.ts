import type { LiveFleet } from '../gateway/live-fleet.ts';
import type { ArrivalStats, PoolStatus, ScaleAction } from '../../policy/scaling/types.ts';

/** A pool the autoscaler manages: which backends (by model) and its bounds. */
export interface ScaledPool {
  name: string;
  model: string;
  hardware: string;
  tp: number;
  minCount: number;
  maxCount: number;
}

/** What the autoscaler reads from and changes in the gateway (a `Gateway` satisfies it). */
export interface GatewayHandle {
  readonly fleet: LiveFleet;
  queuedFor(model: string): number;
  takeArrivals(): ArrivalStats[];
  addBackend(model: string, url: string): { id: number };
  drainBackend(id: number, timeoutS?: number): Promise<void>;
  probe(): Promise<void>;
  /** Publishes a tick on the gateway's /metrics (current and desired replicas, the policy's requests). */
  recordScaling?(pools: readonly PoolStatus[], proposed: readonly ScaleAction[], governed: readonly ScaleAction[]): void;
}

/** Applies add/remove decisions to real capacity. Every method reports what it did as a short note for the log. */
export interface Actuator {
  readonly kind: 'process' | 'kubernetes' | 'advisory';
  /** Instances asked for but not yet serving, per pool (counted as `provisioning` by the controller). */
  pending(pool: ScaledPool): number;
  /**
   * Called once per tick before the signals are built (e.g. to read readiness from the Kubernetes API, or to drop
   * backends whose process has exited); may return a note for the decision log.
   */
  refresh?(pools: readonly ScaledPool[]): Promise<string | void>;
  add(pool: ScaledPool, count: number): Promise<string>;
  remove(pool: ScaledPool, count: number): Promise<string>;
  /** Actuator-specific state to persist (e.g. processes it started), and its restore. */
  snapshot?(): unknown;
  restore?(state: unknown): Promise<void>;
  close(): Promise<void>;
}
