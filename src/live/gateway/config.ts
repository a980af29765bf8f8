import { z } from 'zod';
import { ROUTER_NAMES } from '../../policy/routing/registry.ts';
import { SCALER_NAMES } from '../../policy/scaling/registry.ts';
import { readConfigFile, validateConfig } from '../../util/config-file.ts';

const seconds = z.number().positive().finite();
const count = z.number().int().min(1);

/**
 * `llmfleet serve --config FILE`: the gateway's YAML. Every field but `pools` has a default; unknown keys are
 * errors (file:line path: expected …). See docs/LIVE.md for an annotated example.
 */
export const gatewayConfigSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    seed: z.number().int().default(1),
    routing: z
      .object({ policy: z.enum(ROUTER_NAMES).default('round-robin'), options: z.record(z.string(), z.unknown()).default({}) })
      .strict()
      .default({ policy: 'round-robin', options: {} }),
    pools: z
      .array(
        z
          .object({
            model: z.string().min(1),
            backends: z.array(z.url()).default([]),
            /** What the backends run, as the simulator names it (informational: shown to policies). */
            hardware: z.string().default(''),
            /** Requests the gateway keeps in flight to one backend; beyond it requests wait in the admission queue. */
            maxInflightPerBackend: count.default(256),
            /** Undici connections per backend. */
            connections: count.default(128),
          })
          .strict(),
      )
      .min(1),
    scrapeIntervalS: seconds.default(1),
    health: z
      .object({
        intervalS: seconds.default(1),
        timeoutS: seconds.default(1),
        unhealthyAfter: count.default(2),
        healthyAfter: count.default(1),
      })
      .strict()
      .default({ intervalS: 1, timeoutS: 1, unhealthyAfter: 2, healthyAfter: 1 }),
    outlier: z
      .object({ consecutiveFailures: count.default(3), ejectionS: seconds.default(10) })
      .strict()
      .default({ consecutiveFailures: 3, ejectionS: 10 }),
    /** Extra attempts on another backend after a connection failure before the first response byte. */
    retries: z.number().int().min(0).default(2),
    timeouts: z
      .object({
        /** Whole request, queueing included. */
        requestS: seconds.default(600),
        /** From sending to the backend's response headers. */
        firstByteS: seconds.default(120),
        /** Longest silence between two body chunks (catches stalled streams). */
        idleS: seconds.default(30),
      })
      .strict()
      .default({ requestS: 600, firstByteS: 120, idleS: 30 }),
    admission: z
      .object({ maxQueue: z.number().int().min(0).default(1000), queueTimeoutS: seconds.default(30), retryAfterS: count.default(1) })
      .strict()
      .default({ maxQueue: 1000, queueTimeoutS: 30, retryAfterS: 1 }),
    /** Tier from the `x-llmfleet-tier` header; a lower priority number is served first from the queue. */
    tiers: z
      .object({ default: z.string().default('standard'), priorities: z.record(z.string(), z.number().int().min(0)).default({ premium: 0, standard: 1, batch: 2 }) })
      .strict()
      .default({ default: 'standard', priorities: { premium: 0, standard: 1, batch: 2 } })
      .refine((t) => t.priorities[t.default] !== undefined, { message: 'tiers.default must be one of tiers.priorities' }),
    drainTimeoutS: seconds.default(30),
    maxBodyBytes: count.default(8 << 20),
    /** The scaling loop (`llmfleet serve` runs it beside the gateway when this section is present). */
    autoscaler: z
      .object({
        policy: z.enum(SCALER_NAMES),
        options: z.record(z.string(), z.unknown()).default({}),
        intervalS: seconds.default(15),
        limits: z
          .object({ upCooldownS: z.number().min(0).default(60), downCooldownS: z.number().min(0).default(300), maxStep: count.default(1) })
          .strict()
          .default({ upCooldownS: 60, downCooldownS: 300, maxStep: 1 }),
        pools: z
          .array(
            z
              .object({ model: z.string().min(1), name: z.string().min(1).optional(), hardware: z.string().default(''), tp: count.default(1), minCount: z.number().int().min(0).default(1), maxCount: count })
              .strict()
              .refine((p) => p.maxCount >= p.minCount, { message: 'maxCount must be ≥ minCount', path: ['maxCount'] }),
          )
          .min(1),
        actuator: z
          .discriminatedUnion('kind', [
            z.object({ kind: z.literal('advisory') }).strict(),
            z
              .object({
                kind: z.literal('process'),
                /** argv template with {model} {hardware} {tp} {port} {host}; default: `llmfleet emulate`. */
                command: z.array(z.string().min(1)).min(1).optional(),
                healthTimeoutS: seconds.default(120),
              })
              .strict(),
            z.object({ kind: z.literal('kubernetes'), namespace: z.string().min(1), deployments: z.record(z.string(), z.string().min(1)) }).strict(),
          ])
          .default({ kind: 'advisory' }),
        decisionLog: z.string().default('autoscaler-decisions.jsonl'),
        stateFile: z.string().default('autoscaler-state.json'),
      })
      .strict()
      .optional(),
  })
  .strict();

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;

export function loadGatewayConfig(path: string): GatewayConfig {
  return validateConfig(readConfigFile(path), gatewayConfigSchema);
}
