import { z } from 'zod';
import { LoadAnticipator, anticipatorOptions, peakWith, stepsAbove } from '../preserve/anticipator.ts';
import type { InstanceView } from '../types.ts';
import { NO_INSTANCE, type RouteDecision, type RouterEntry } from './types.ts';

const HOLD: RouteDecision = { kind: 'defer', reason: 'all-overloaded', hold: true };
const DEFER: RouteDecision = { kind: 'defer', reason: 'all-overloaded' };

export const preserveRouterOptions = z
  .object({
    anticipator: anticipatorOptions.default(anticipatorOptions.parse({})),
    /** T_mem: the KV level taken as preemption-free (paper: 0.8). */
    memoryThreshold: z.number().min(0).max(1).default(0.8),
    /** β: weight of the memory penalty (paper: 1). */
    beta: z.number().min(0).default(1),
    /** Whose decode tokens L_d counts: running requests (digest) or also the waiting ones. */
    decodeOf: z.enum(['running', 'all']).default('running'),
    /**
     * `always`: dispatch even when every instance is overloaded. `queue`: the paper's router queue (§3.5): while
     * every candidate is overloaded, i.e. more than `overloadShare` of the window projects above
     * `overloadThreshold` (or current KV use is at least `overloadKvFraction`), the request waits at the router in
     * a FIFO that the simulator offers again, head first, whenever a request finishes. `defer`: the older plain
     * defer, retried only on the simulator's sample ticks.
     */
    admission: z.enum(['always', 'queue', 'defer']).default('always'),
    /** [ours] An instance whose current KV use is at least this also counts as overloaded (1.01: off). */
    overloadKvFraction: z.number().min(0).max(1.01).default(1.01),
    overloadThreshold: z.number().min(0).max(1).default(0.95),
    overloadShare: z.number().min(0).max(1).default(0.1),
  })
  .strict();

/**
 * PreServe's load-aware router (seed 001 §3.5): for each candidate instance,
 * score = L_p + L_d + β·max(0, U_peak − T_mem)·M, with L_p the prompt tokens waiting for prefill plus the new
 * request's P, L_d the remaining decode tokens plus its D̂, U_peak the anticipator's peak if the request were
 * added now, and M the KV capacity in tokens; the lowest score wins, ties to the lowest penalty, then lowest id.
 * Worked number: L_p = 300 + 100, L_d = 2,000 + 50, U_peak = 0.9, M = 10,000 ⇒ 400 + 2,050 + 1,000 = 3,450.
 */
export const preserve = {
  options: preserveRouterOptions,
  make(opts) {
    const ant = new LoadAnticipator(opts.anticipator, opts.decodeOf);
    const overloadSteps = opts.overloadShare * opts.anticipator.horizonSteps;
    const queueing = opts.admission !== 'always';
    return {
      name: 'preserve',
      route(req, view) {
        const c = view.routable(req.model);
        if (c.length === 0) return NO_INSTANCE;
        let best: InstanceView | undefined;
        let bestScore = Infinity;
        let bestPenalty = Infinity;
        let allOverloaded = true;
        for (let k = 0; k < c.length; k++) {
          const inst = c[k]!;
          const p = ant.project(inst);
          if (queueing && allOverloaded && stepsAbove(p, opts.overloadThreshold) <= overloadSteps && inst.kvUsedFraction < opts.overloadKvFraction) allOverloaded = false;
          const lp = p.queuedPrefillTokens + req.inputTokens;
          const ld = p.remainingDecodeTokens + req.predictedOutputTokens;
          const penalty = Math.max(0, peakWith(p, req.inputTokens, req.predictedOutputTokens) - opts.memoryThreshold) * p.capacityTokens;
          const score = lp + ld + opts.beta * penalty;
          if (score < bestScore || (score === bestScore && penalty < bestPenalty)) {
            best = inst;
            bestScore = score;
            bestPenalty = penalty;
          }
        }
        if (queueing && allOverloaded) return opts.admission === 'queue' ? HOLD : DEFER;
        return { kind: 'send', to: best!.id, reason: 'lowest-anticipated-load' };
      },
    };
  },
} satisfies RouterEntry<typeof preserveRouterOptions>;
