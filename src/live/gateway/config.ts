import { z } from 'zod';
import { ROUTER_NAMES, routers } from '../../policy/routing/registry.ts';
import { SCALER_NAMES, scalers } from '../../policy/scaling/registry.ts';
import { formatPath, issueError, readConfigFile, validateConfig } from '../../util/config-file.ts';
import { ConfigError } from '../../util/errors.ts';
import { preserveScalerOptions, windowIntervalProblem } from '../../policy/scaling/preserve.ts';
import { CHAT_DEFAULT_OUTPUT_TOKENS } from './parse-request.ts';
import { timerSeconds } from '../timers.ts';

/** A duration compared with the clock (no timer waits on it). */
const seconds = z.number().positive().finite();
/** A duration the gateway waits on with a Node timer: at most 2,147,483 s (src/live/timers.ts). */
const waitSeconds = timerSeconds;
const count = z.number().int().min(1);

/** A backend's base URL, `http(s)://host:port` with no path, query or credentials; undefined when it is not one. */
export function backendBaseUrl(v: string): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.pathname !== '/' || u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '') return undefined;
  return `${u.protocol}//${u.host}`;
}
export const BACKEND_URL_EXPECTED = 'a base URL like http://host:port (http or https, port ≤ 65535, no path or query)';
const backendUrl = z.string().refine((v) => backendBaseUrl(v) !== undefined, { message: BACKEND_URL_EXPECTED }).transform((v) => backendBaseUrl(v)!);

/**
 * `llmfleet serve --config FILE`: the gateway's YAML. Every field but `pools` has a default; unknown keys are
 * errors (file:line path: expected …). See docs/LIVE.md for an annotated example.
 */
export const gatewayConfigSchema = z
  .object({
    host: z.string().refine((v) => v.trim() !== '', { message: 'a non-empty listen address (an empty one would listen on every interface)' }).default('127.0.0.1'),
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
            /**
             * Other names the pool's backends answer to (vLLM's further `--served-model-name` values, LoRA adapter
             * names): a request naming one is routed to this pool and forwarded with its own name unchanged.
             */
            aliases: z.array(z.string().min(1)).default([]),
            backends: z.array(backendUrl).default([]),
            /** What the backends run, as the simulator names it (informational: shown to policies). */
            hardware: z.string().default(''),
            /** Requests the gateway keeps in flight to one backend; beyond it requests wait in the admission queue. */
            maxInflightPerBackend: count.default(256),
            /** Undici connections per backend. */
            connections: count.default(128),
          })
          .strict(),
      )
      .min(1)
      .superRefine((pools, ctx) => {
        // One pool per model name (aliases included), one entry per backend: a repeat would be merged or counted twice silently.
        const names = new Map<string, string>();
        const urls = new Map<string, string>();
        for (const [i, p] of pools.entries()) {
          const named = [
            { path: [i, 'model'], label: `pools[${i}].model`, name: p.model },
            ...p.aliases.map((name, k) => ({ path: [i, 'aliases', k], label: `pools[${i}].aliases[${k}]`, name })),
          ];
          for (const { path, label, name } of named) {
            const first = names.get(name);
            if (first !== undefined) ctx.addIssue({ code: 'custom', path, message: `a model name not already served ('${name}' is ${first})` });
            else names.set(name, label);
          }
          for (const [k, url] of p.backends.entries()) {
            const at = urls.get(url);
            if (at !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'backends', k], message: `a backend not already listed (${at})` });
            else urls.set(url, `pools[${i}].backends[${k}]`);
          }
        }
      }),
    scrapeIntervalS: waitSeconds.default(1),
    health: z
      .object({
        intervalS: waitSeconds.default(1),
        timeoutS: waitSeconds.default(1),
        unhealthyAfter: count.default(2),
        healthyAfter: count.default(1),
        /**
         * Seconds a backend that has never passed a health check counts as starting (model load): requests for a
         * model whose backends are all down past this are answered 503 at once instead of waiting in the queue.
         */
        startupGraceS: z.number().min(0).finite().default(300),
      })
      .strict()
      .default({ intervalS: 1, timeoutS: 1, unhealthyAfter: 2, healthyAfter: 1, startupGraceS: 300 }),
    outlier: z
      .object({ consecutiveFailures: count.default(3), ejectionS: seconds.default(10) })
      .strict()
      .default({ consecutiveFailures: 3, ejectionS: 10 }),
    /** Extra attempts on another backend after a connection failure before the first response byte. */
    retries: z.number().int().min(0).default(2),
    timeouts: z
      .object({
        /** Whole request, queueing included. */
        requestS: waitSeconds.default(600),
        /**
         * Streams only: from sending to the first response body byte (the first token; vLLM sends the headers at
         * once). A non-streaming answer comes whole when it is done, so `requestS` alone bounds it.
         */
        firstByteS: waitSeconds.default(120),
        /** Longest silence between two body chunks once the body has begun (catches stalled streams); not counted while the client is not reading. */
        idleS: waitSeconds.default(30),
      })
      .strict()
      .default({ requestS: 600, firstByteS: 120, idleS: 30 }),
    admission: z
      .object({ maxQueue: z.number().int().min(0).default(1000), queueTimeoutS: waitSeconds.default(30), retryAfterS: count.default(1) })
      .strict()
      .default({ maxQueue: 1000, queueTimeoutS: 30, retryAfterS: 1 }),
    /** Tier from the `x-llmfleet-tier` header; a lower priority number is served first from the queue. */
    tiers: z
      .object({ default: z.string().default('standard'), priorities: z.record(z.string(), z.number().int().min(0)).default({ premium: 0, standard: 1, batch: 2 }) })
      .strict()
      .default({ default: 'standard', priorities: { premium: 0, standard: 1, batch: 2 } })
      .refine((t) => Object.hasOwn(t.priorities, t.default), { message: 'tiers.default must be one of tiers.priorities' }),
    drainTimeoutS: waitSeconds.default(30),
    /**
     * Output tokens the gateway predicts for a chat request that gives no max_tokens / max_completion_tokens (what
     * routers and scalers see as its predicted output). A routing estimate, not a limit: the request is forwarded
     * as sent, and vLLM bounds it only by the context left after the prompt. /v1/completions without max_tokens
     * predicts 16, vLLM's own default limit there.
     */
    chatDefaultOutputTokens: count.default(CHAT_DEFAULT_OUTPUT_TOKENS),
    maxBodyBytes: count.default(8 << 20),
    /** The scaling loop (`llmfleet serve` runs it beside the gateway when this section is present). */
    autoscaler: z
      .object({
        policy: z.enum(SCALER_NAMES),
        options: z.record(z.string(), z.unknown()).default({}),
        intervalS: waitSeconds.default(15),
        limits: z
          .object({ upCooldownS: z.number().min(0).default(60), downCooldownS: z.number().min(0).default(300), maxStep: count.default(1), downStabilizationS: z.number().min(0).default(0) })
          .strict()
          .default({ upCooldownS: 60, downCooldownS: 300, maxStep: 1, downStabilizationS: 0 }),
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
                healthTimeoutS: waitSeconds.default(120),
              })
              .strict(),
            z
              .object({
                kind: z.literal('kubernetes'),
                namespace: z.string().min(1),
                /** Deployment per autoscaled pool (its `name`, default its model). */
                deployments: z.record(z.string(), z.string().min(1)),
                /** Port the pods serve on: each Ready pod becomes the backend http://{podIP}:{port}. */
                port: z.number().int().min(1).max(65535).default(8000),
              })
              .strict(),
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

/** Reads and validates a gateway config, the routing and scaling policies' own options included (file:line on every error). */
export function loadGatewayConfig(path: string): GatewayConfig {
  const doc = readConfigFile(path);
  const cfg = validateConfig(doc, gatewayConfigSchema);
  const check = (schema: z.ZodType, options: unknown, prefix: string[]) => {
    const r = schema.safeParse(options);
    if (!r.success) throw issueError(r.error, options, { source: doc.source, lineOf: doc.lineOf, prefix });
  };
  check(routers[cfg.routing.policy].options, cfg.routing.options, ['routing', 'options']);
  const a = cfg.autoscaler;
  if (a) {
    check(scalers[a.policy].options, a.options, ['autoscaler', 'options']);
    if (a.policy === 'preserve') {
      const windowS = preserveScalerOptions.parse(a.options).windowS;
      const problem = windowIntervalProblem(windowS, a.intervalS, 'autoscaler.intervalS');
      if (problem !== undefined) {
        const path = ['autoscaler', 'options', 'windowS'];
        throw new ConfigError({ source: doc.source, line: doc.lineOf(path) ?? doc.lineOf(['autoscaler', 'intervalS']), path: formatPath(path), expected: problem, got: windowS });
      }
    }
  }
  return cfg;
}
