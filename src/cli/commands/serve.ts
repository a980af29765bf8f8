import { resolve } from 'node:path';
import type { Command } from 'commander';
import { Pool } from 'undici';
import { BACKEND_URL_EXPECTED, backendBaseUrl, gatewayConfigSchema, loadGatewayConfig, type GatewayConfig } from '../../live/gateway/config.ts';
import { startGateway } from '../../live/gateway/gateway.ts';
import { autoscalerFromConfig } from '../../live/autoscaler/from-config.ts';
import { ROUTER_NAMES } from '../../policy/routing/registry.ts';
import { issueError } from '../../util/config-file.ts';
import { UserError } from '../../util/errors.ts';
import { nonEmptyFlag, parseIntFlag } from '../util.ts';

interface ServeFlags {
  config?: string;
  host?: string;
  port?: string;
  backend: string[];
  routing?: string;
  model?: string;
  chatOutputTokens?: string;
}

/** Asks a backend which model names it serves (GET /v1/models: vLLM lists every served name and LoRA adapter, the first is the model). */
async function discoverModelNames(url: string): Promise<string[]> {
  const pool = new Pool(url, { connections: 1 });
  try {
    const r = await pool.request({ path: '/v1/models', method: 'GET', headersTimeout: 5000, bodyTimeout: 5000 });
    const j = (await r.body.json()) as { data?: { id?: unknown }[] };
    const ids = Array.isArray(j.data) ? j.data.map((m) => m?.id) : [];
    if (r.statusCode !== 200 || ids.length === 0 || !ids.every((id): id is string => typeof id === 'string' && id !== '')) throw new Error(`status ${r.statusCode}, expected a list of model ids`);
    return [...new Set(ids)];
  } catch (e) {
    throw new UserError(`--backend ${url}: cannot read its model from /v1/models (${(e as Error).message}); give --model`);
  } finally {
    await pool.close();
  }
}

/** The quick form's pools: backends grouped by the model they serve, each pool answering to all its backends' names. */
async function poolsFromBackends(urls: string[], model: string | undefined): Promise<{ model: string; aliases: string[]; backends: string[] }[]> {
  // Every URL checked (and the same backend given twice refused) before any backend is asked for its models.
  const bases: string[] = [];
  for (const url of urls) {
    const base = backendBaseUrl(url);
    if (base === undefined) throw new UserError(`--backend: expected ${BACKEND_URL_EXPECTED}, got '${url}'`);
    if (bases.includes(base)) throw new UserError(`--backend ${url}: given twice; each backend once`);
    bases.push(base);
  }
  const pools = new Map<string, { model: string; aliases: string[]; backends: string[] }>();
  for (const base of bases) {
    const [first, ...aliases] = model !== undefined ? [model] : await discoverModelNames(base);
    const pool = pools.get(first);
    if (pool === undefined) pools.set(first, { model: first, aliases, backends: [base] });
    else if (pool.aliases.join('\u0000') !== aliases.join('\u0000')) {
      const names = (b: string, a: string[]) => `${b} serves ${[first, ...a].join(', ')}`;
      throw new UserError(`--backend ${base}: backends of model '${first}' serve different names (${names(pool.backends[0], pool.aliases)}; ${names(base, aliases)}); list them in a --config file's pools[].aliases`);
    } else pool.backends.push(base);
  }
  return [...pools.values()];
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the OpenAI-compatible gateway: routing by the simulator routers over live backend metrics')
    .option('--config <file>', 'gateway YAML (see docs/LIVE.md); flags below override it')
    .option('--host <addr>', 'listen address (default 127.0.0.1)')
    .option('--port <n>', 'listen port (default 8080)')
    .option('--backend <url>', 'a backend base URL, e.g. http://127.0.0.1:8000 (repeatable; quick form without --config)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--routing <policy>', `routing policy (default: the config's, else round-robin): ${ROUTER_NAMES.join(', ')}`)
    .option('--model <name>', 'model the --backend URLs serve (default: asked from each backend)')
    .option('--chat-output-tokens <n>', "routing estimate of a chat's output when it sets no max_tokens (default: the config's chatDefaultOutputTokens, else 256)")
    .action(async (o: ServeFlags) => {
      // An empty --host would listen on every interface (Node's reading of ''): refused before anything starts.
      const host = o.host === undefined ? undefined : nonEmptyFlag('--host', o.host, 'listen address');
      // Every flag before a config is read or a backend asked for its models: a bad --port is named as such,
      // not hidden behind "cannot read its model" from a backend that is down.
      const model = o.model === undefined ? undefined : nonEmptyFlag('--model', o.model, 'model name');
      nonEmptyFlag('--config', o.config, 'gateway config file');
      let port: number | undefined;
      if (o.port !== undefined) {
        port = parseIntFlag('--port', o.port, 0, 65535);
        if (port < 0 || port > 65535) throw new UserError(`--port: expected 0..65535, got ${port}`);
      }
      let chatOutputTokens: number | undefined;
      if (o.chatOutputTokens !== undefined) {
        chatOutputTokens = parseIntFlag('--chat-output-tokens', o.chatOutputTokens, 1);
        if (chatOutputTokens < 1) throw new UserError(`--chat-output-tokens: expected a positive integer, got ${chatOutputTokens}`);
      }
      if (o.routing !== undefined && !(ROUTER_NAMES as string[]).includes(o.routing)) {
        throw new UserError(`--routing: unknown policy '${o.routing}'; valid: ${ROUTER_NAMES.join(', ')}`);
      }
      let raw: Record<string, unknown>;
      let cfg: GatewayConfig;
      if (o.config !== undefined) {
        if (o.backend.length > 0) throw new UserError('--backend: give backends in the config file (pools[].backends) or use the quick form without --config');
        // It was ignored: the config's pools name their models.
        if (model !== undefined) throw new UserError('--model: only with --backend (a --config file names each pool\'s model in pools[].model)');
        cfg = loadGatewayConfig(resolve(o.config));
        raw = { ...cfg };
      } else {
        if (o.backend.length === 0) throw new UserError('give --config FILE or at least one --backend URL');
        raw = { pools: await poolsFromBackends(o.backend, model) };
      }
      if (host !== undefined) raw.host = host;
      if (port !== undefined) raw.port = port;
      if (chatOutputTokens !== undefined) raw.chatDefaultOutputTokens = chatOutputTokens;
      if (o.routing !== undefined) raw.routing = { policy: o.routing, options: {} };
      const parsed = gatewayConfigSchema.safeParse(raw);
      if (!parsed.success) throw issueError(parsed.error, raw, { source: o.config ? resolve(o.config) : 'flags' });
      cfg = parsed.data;
      const gw = await startGateway(cfg);
      const n = gw.fleet.instances.length;
      const up = gw.fleet.instances.filter((b) => b.state === 'ready').length;
      process.stderr.write(`serve: gateway at ${gw.url} (${cfg.routing.policy}; ${up}/${n} backends healthy; metrics at ${gw.url}/metrics)\n`);
      // Unix seconds: the autoscaler's cooldown times must mean the same after a restart.
      const scaler = autoscalerFromConfig(cfg, gw, () => Date.now() / 1000);
      if (scaler) {
        await scaler.restore();
        scaler.start();
        process.stderr.write(`serve: autoscaler ${cfg.autoscaler!.policy} every ${cfg.autoscaler!.intervalS}s (${cfg.autoscaler!.actuator.kind}; log ${cfg.autoscaler!.decisionLog})\n`);
      }
      let closing = false;
      const stop = () => {
        if (closing) return;
        closing = true;
        process.stderr.write(`serve: draining (up to ${cfg.drainTimeoutS}s)\n`);
        scaler?.stop();
        void gw.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
