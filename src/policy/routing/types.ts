import type { z } from 'zod';
import type { FleetView, PolicyContext, RequestView } from '../types.ts';

export type RouteDecision =
  | { kind: 'send'; to: number; reason: string }
  | { kind: 'defer'; reason: string };

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
