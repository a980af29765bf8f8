import type { Rng } from '../util/rng.ts';

/** What every policy factory is handed besides its own options: seeded randomness, never Math.random. */
export interface PolicyContext {
  rng: Rng;
}

export type InstanceState = 'provisioning' | 'ready' | 'draining' | 'stopped';

/**
 * A read-only view of one serving instance. Values are current at `FleetView.now`; reading a load signal may
 * bring a fast-forwarding engine's counters up to date, never change what it will do.
 */
export interface InstanceView {
  readonly id: number;
  readonly pool: string;
  readonly model: string;
  readonly hardware: string;
  readonly tp: number;
  readonly pp: number;
  readonly region: string;
  readonly state: InstanceState;
  /** Requests admitted to the running set. */
  readonly numRunning: number;
  readonly numWaiting: number;
  /** Running + waiting. */
  readonly outstandingRequests: number;
  /** KV memory in use, 0..1. */
  readonly kvUsedFraction: number;
  /** Prefill tokens left + predicted decode tokens left, over all requests on the instance. */
  readonly outstandingTokens: number;
  /** SplitwiseSim's load metric: each unfinished request counts prompt + 1 until its prefill ends, then 1. */
  readonly pendingTokens: number;
  /** KV capacity of the instance in tokens. */
  readonly kvCapacityTokens: number;
  /** Running requests (admission order) then waiting ones (queue order), current at `FleetView.now`. */
  requests(): readonly RequestProgress[];
}

/** A request on an instance as policies see it: progress and the predicted (never the true) length. */
export interface RequestProgress extends RequestView {
  /** 'running' (admitted) or 'waiting'. */
  readonly status: string;
  readonly generated: number;
  /** Tokens whose KV is stored. */
  readonly kvTokens: number;
  /** Prompt (or recompute) tokens still to prefill. */
  readonly prefillTarget: number;
  readonly prefilled: number;
}

/** The fleet as policies see it. `routable(model)` lists ready instances serving the model, by id. */
export interface FleetView {
  readonly now: number;
  readonly instances: readonly InstanceView[];
  routable(model: string): readonly InstanceView[];
}

/** What a router sees of a request: never its true output length. */
export interface RequestView {
  readonly id: number;
  readonly arrivalS: number;
  readonly inputTokens: number;
  readonly predictedOutputTokens: number;
  readonly model: string;
  readonly tier: string;
  readonly region: string;
  readonly app: string;
  readonly deadlineS: number;
  /** The prompt's block hashes and tokens per block, when known (a trace's `hash_ids`; the gateway hashes prompt text). */
  readonly prefixHashes?: readonly number[] | undefined;
  readonly prefixBlockTokens?: number;
}
