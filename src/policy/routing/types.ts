import type { z } from 'zod';
import type { FleetView, PolicyContext, RequestView } from '../types.ts';

export type RouteDecision =
  | { kind: 'send'; to: number; reason: string }
  | {
      kind: 'defer';
      reason: string;
      /**
       * Hold the request at the gateway instead of retrying it with the deferred ones: the simulator keeps it
       * in a FIFO per model (and `queue`) and offers it again when a request of that model finishes (SageServe's
       * NIW queue manager releases on endpoint signals). Live planes may treat it as a plain defer.
       */
      hold?: boolean;
      /**
       * With `hold`: which of the model's held FIFOs it joins (absent: the model's one default FIFO). A refused
       * head blocks only its own FIFO; at each offer the model's FIFOs are tried oldest head first (SageServe's
       * `niwQueues: model-region` keys them by the request's first-preference region).
       */
      queue?: string;
    };

/** Move a running request's KV from one instance to another (Llumnix's live migration; see sim/migration.ts). */
export interface MigrationOrder {
  request: number;
  from: number;
  to: number;
  reason: string;
}

export interface Router {
  readonly name: string;
  route(req: RequestView, view: FleetView): RouteDecision;
  /**
   * Routers that also rebalance running requests (Llumnix) set this: seconds between `migrate` calls. The
   * simulator carries the orders out; the live gateway refuses such a router (no engine there can move a request).
   */
  readonly migrateIntervalS?: number;
  /** Migrations to start now. `busy` holds instances with a migration in flight (in or out); order at most one per request. */
  migrate?(view: FleetView, busy: ReadonlySet<number>): MigrationOrder[];
  /**
   * Routers that hold requests may set this: the simulator calls it at `now` just before it offers the model's held
   * requests again, with the regions whose endpoints signalled (a request of the model finished there, or an
   * instance of it became ready), or null for the periodic signal from every endpoint (`heldSignalIntervalS`).
   */
  endpointSignal?(model: string, regions: ReadonlySet<string> | null, now: number): void;
  /**
   * Seconds between the periodic signals from every endpoint to the requests this router holds; without it they are
   * offered only when a request of their model finishes or an instance of it becomes ready. The simulator keeps
   * them on their own grid (multiples of it), so that a run does not depend on the output's timeline interval.
   */
  readonly heldSignalIntervalS?: number;
  /** Routers that read `RequestView.prefixHashes` set this: the live gateway hashes each prompt only for them. */
  readonly readsPrefixHashes?: boolean;
}

/** A router factory with the schema of its options (validated once, from the scenario's `routing.options`). */
export interface RouterEntry<S extends z.ZodType = z.ZodType> {
  options: S;
  make(opts: z.infer<S>, ctx: PolicyContext): Router;
}

export const NO_INSTANCE: RouteDecision = { kind: 'defer', reason: 'no ready instance serves the model' };
