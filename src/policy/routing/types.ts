import type { z } from 'zod';
import type { FleetView, PolicyContext, RequestView } from '../types.ts';

export type RouteDecision =
  | { kind: 'send'; to: number; reason: string }
  | {
      kind: 'defer';
      reason: string;
      /**
       * Hold the request at the gateway instead of retrying it with the deferred ones: the simulator keeps it
       * in a FIFO per model and offers it again when a request of that model finishes (SageServe's NIW queue
       * manager releases on endpoint signals). Live planes may treat it as a plain defer.
       */
      hold?: boolean;
    };

export interface Router {
  readonly name: string;
  route(req: RequestView, view: FleetView): RouteDecision;
}

/** A router factory with the schema of its options (validated once, from the scenario's `routing.options`). */
export interface RouterEntry<S extends z.ZodType = z.ZodType> {
  options: S;
  make(opts: z.infer<S>, ctx: PolicyContext): Router;
}

export const NO_INSTANCE: RouteDecision = { kind: 'defer', reason: 'no ready instance serves the model' };
