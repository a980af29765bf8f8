import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UserError } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import { scaledClock, type LiveClock } from '../clock.ts';
import { BodyTooLarge, isGet, listen, nonJsonContentType, parseJsonObject, readBody, sendError, sendJson, SERVER_ROUTES } from '../http-util.ts';
import { syntheticToken } from '../tokens.ts';
import { completionFields } from '../openai-request.ts';
import { promptBlockHashes } from '../prompt-hashes.ts';
import { timerMs } from '../timers.ts';
import { EmulatedBackend, type BackendSpec } from './backend.ts';

export interface EmulatorOptions extends BackendSpec {
  host?: string;
  /** 0 = an ephemeral port. */
  port?: number;
  /** Modelled seconds per wall second (20 ⇒ everything 20× faster than the modelled GPU). */
  timeScale?: number;
  /** Wall seconds after start before /health turns 200 and requests are accepted (model load). */
  startupDelayS?: number;
  /** Fraction of completion requests answered with HTTP 500 at once. */
  errorRate?: number;
  /** After this many output tokens of a request, stop sending (the connection stays open). */
  stallAfterTokens?: number;
  /** Wall seconds after start at which the server drops every connection and stops listening. */
  crashAfterS?: number;
  seed?: number;
  /**
   * Output tokens of a chat request without max_tokens / max_completion_tokens, standing for where a real model would
   * emit its EOS (default CHAT_OUTPUT_TOKENS); at most the context left, vLLM's bound; at least its min_tokens.
   */
  chatOutputTokens?: number;
  /**
   * Names served in /v1/models and accepted as `model` in requests, like vLLM's `--served-model-name a b …` (default:
   * the catalog model name). The first labels the metrics.
   */
  servedNames?: string[];
  onCrash?: () => void;
}

export interface Emulator {
  readonly url: string;
  readonly port: number;
  readonly backend: EmulatedBackend;
  /** The first served name. */
  readonly servedName: string;
  /** Drops every connection at once and stops listening, like a killed process. */
  crash(): void;
  close(): Promise<void>;
}

/** vLLM's /v1/completions default max_tokens (CompletionRequest.max_tokens = 16). A chat has no fixed default: see below. */
const COMPLETIONS_MAX_TOKENS = 16;
/** A chat's emulated EOS when it sets no limit (the gateway's `chatDefaultOutputTokens` estimate is the same). */
export const CHAT_OUTPUT_TOKENS = 256;

/** Starts a vLLM-like OpenAI server for one model on one modelled GPU (see docs/LIVE.md for the API). */
export async function startEmulator(opts: EmulatorOptions): Promise<Emulator> {
  // Checked before anything starts (the CLI checks its flags first, naming them): an empty name or host, or a
  // wait past Node's timer limit, would otherwise be served or armed silently wrong.
  const badName = opts.servedNames?.find((n) => n.trim() === '');
  if (badName !== undefined || opts.servedNames?.length === 0) throw new UserError(`servedNames: expected non-empty model names, got ${JSON.stringify(opts.servedNames)}`);
  if (opts.host !== undefined && opts.host.trim() === '') throw new UserError(`host: expected a non-empty listen address, got '${opts.host}'`);
  const startupDelayMs = timerMs(opts.startupDelayS ?? 0, 'startupDelayS');
  const crashAfterMs = opts.crashAfterS === undefined ? undefined : timerMs(opts.crashAfterS, 'crashAfterS');
  const clock: LiveClock = scaledClock(opts.timeScale ?? 1);
  const backend = new EmulatedBackend(opts, clock);
  const servedNames = opts.servedNames ?? [opts.model];
  const servedName = servedNames[0];
  const rng = new Rng(opts.seed ?? 1).fork('emulator-errors');
  const t0 = performance.now();
  let ready = (opts.startupDelayS ?? 0) <= 0;
  let crashed = false;
  const sockets = new Set<Socket>();
  let ids = 0;
  const timers: NodeJS.Timeout[] = [];

  const MAX_BODY_BYTES = 8 << 20;
  const handleCompletion = async (req: IncomingMessage, res: ServerResponse, chat: boolean) => {
    let buf: Buffer;
    try {
      buf = await readBody(req, MAX_BODY_BYTES);
    } catch (e) {
      if (e instanceof BodyTooLarge) return sendError(res, 413, `request body exceeds ${MAX_BODY_BYTES} bytes`, 'invalid_request_error', 'body_too_large');
      return;
    }
    const badType = nonJsonContentType(req.headers);
    if (badType) return sendError(res, 400, badType, 'BadRequestError');
    const body = parseJsonObject(buf);
    if (typeof body === 'string') return sendError(res, 400, body, 'BadRequestError');
    // vLLM fills a missing model with the served one; any other value is an error.
    if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') return sendError(res, 400, `'model' must be a string, got ${JSON.stringify(body.model)}`, 'BadRequestError', null, {}, 'model');
    if (typeof body.model === 'string' && !servedNames.includes(body.model)) return sendError(res, 404, `The model \`${body.model}\` does not exist.`, 'NotFoundError', 'model_not_found', {}, 'model');
    // vLLM answers with the name asked for (a missing one means the first served name).
    const model = typeof body.model === 'string' ? body.model : servedName;
    const f = completionFields(body, chat, COMPLETIONS_MAX_TOKENS);
    if ('param' in f) return sendError(res, 400, f.message, 'BadRequestError', null, {}, f.param);
    const { inputTokens, stream, includeUsage } = f;
    let outputTokens = f.maxTokens;
    // A chat without max_completion_tokens / max_tokens: vLLM's get_max_tokens bounds it by the context left after
    // the prompt (max_model_len − prompt tokens), not 16 (only /v1/completions defaults to 16), and a real model
    // stops at its EOS well before that: the emulator stops at chatOutputTokens (its EOS), within that bound.
    // completionFields cannot know the context, so min_tokens (unbounded there) is checked against it here.
    const limited = [body.max_completion_tokens, body.max_tokens].some((v) => v !== undefined && v !== null);
    if (chat && !limited) {
      const left = backend.contextLength - inputTokens;
      // vLLM's _validate_input: without max_tokens the prompt alone must leave room for one token.
      if (left < 1) return sendError(res, 400, `This model's maximum context length is ${backend.contextLength} tokens. However, you requested ${inputTokens} tokens in the messages. Please reduce the length of the messages.`, 'BadRequestError');
      const minTokens = typeof body.min_tokens === 'number' ? body.min_tokens : 0;
      // SamplingParams: min_tokens ≤ max_tokens (here the context left).
      if (minTokens > left) return sendError(res, 400, `'min_tokens' must be an integer in [0, ${left}] (the context left after the prompt), got ${minTokens}`, 'BadRequestError', null, {}, 'min_tokens');
      outputTokens = Math.min(left, Math.max(minTokens, opts.chatOutputTokens ?? CHAT_OUTPUT_TOKENS));
    }
    const why = backend.reject(inputTokens, outputTokens);
    if (why) return sendError(res, 400, why, 'BadRequestError');
    if ((opts.errorRate ?? 0) > 0 && rng.next() < opts.errorRate!) return sendError(res, 500, 'injected failure', 'InternalServerError');

    const usage = stream ? includeUsage : true;
    const id = `${chat ? 'chatcmpl' : 'cmpl'}-${ids++}`;
    const created = Math.floor(Date.now() / 1000);
    const object = chat ? (stream ? 'chat.completion.chunk' : 'chat.completion') : 'text_completion';
    const stall = opts.stallAfterTokens ?? Infinity;
    let text = '';
    if (stream) {
      // vLLM's server sends a stream's headers at once (the body follows token by token).
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
    }
    const chunk = (choice: Record<string, unknown>) => `data: ${JSON.stringify({ id, object, created, model, choices: [{ index: 0, ...choice }] })}\n\n`;
    const usageBlock = () => ({ prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens });
    const hashes = backend.engine.prefixCache ? promptBlockHashes(body, chat) : undefined;
    const r = backend.submit(inputTokens, outputTokens, {
      onTokens(from, to) {
        const upto = Math.min(to, stall);
        if (stream) {
          // vLLM sends a chat stream's first chunk (the role) with the first output, after prefill, not before.
          let out = chat && from === 0 && upto > 0 ? chunk({ delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }) : '';
          for (let i = from; i < upto; i++) {
            // As vLLM: the last token's chunk carries finish_reason (and stop_reason); no empty chunk after it.
            const end = i === outputTokens - 1 ? { finish_reason: 'length', stop_reason: null } : { finish_reason: null };
            out += chat ? chunk({ delta: { content: syntheticToken(i) }, logprobs: null, ...end }) : chunk({ text: syntheticToken(i), logprobs: null, ...end });
          }
          if (out) res.write(out);
        } else for (let i = from; i < upto; i++) text += syntheticToken(i);
      },
      onFinish() {
        if (outputTokens > stall) return; // stalled: say nothing more, keep the connection open
        if (stream) {
          const out = usage ? `data: ${JSON.stringify({ id, object, created, model, choices: [], usage: usageBlock() })}\n\n` : '';
          res.end(`${out}data: [DONE]\n\n`);
        } else {
          const choice = chat ? { index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: 'length', stop_reason: null } : { index: 0, text, logprobs: null, finish_reason: 'length', stop_reason: null };
          sendJson(res, 200, { id, object, created, model, choices: [choice], usage: usageBlock() });
        }
      },
    }, hashes);
    res.on('close', () => {
      if (!res.writableFinished) backend.detach(r.id);
    });
  };

  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.indexOf('?') >= 0 ? url.slice(0, url.indexOf('?')) : url;
    const get = isGet(req.method);
    if (get && path === '/health') {
      if (ready) res.writeHead(200).end();
      else sendError(res, 503, 'model is loading', 'ServiceUnavailable');
      return;
    }
    if (get && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(backend.renderMetrics(servedName));
      return;
    }
    if (!ready) return sendError(res, 503, 'model is loading', 'ServiceUnavailable');
    if (get && path === '/v1/models') {
      const created = Math.floor(Date.now() / 1000);
      const data = servedNames.map((id) => ({ id, object: 'model', created, owned_by: 'llmfleet-emulator', root: opts.model, parent: null, max_model_len: backend.contextLength }));
      return sendJson(res, 200, { object: 'list', data });
    }
    if (req.method === 'POST' && (path === '/v1/completions' || path === '/v1/chat/completions')) {
      handleCompletion(req, res, path === '/v1/chat/completions').catch((e: unknown) => sendError(res, 500, String(e), 'InternalServerError'));
      return;
    }
    const allow = SERVER_ROUTES.get(path);
    if (allow) sendError(res, 405, `method ${req.method} not allowed on ${path} (allowed: ${allow})`, 'MethodNotAllowed', null, { allow });
    else sendError(res, 404, `no route ${req.method} ${path}`, 'NotFoundError');
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  try {
    await listen(server, opts.port ?? 0, opts.host ?? '127.0.0.1');
  } catch (e) {
    backend.close();
    throw e;
  }
  const port = (server.address() as AddressInfo).port;

  const crash = () => {
    if (crashed) return;
    crashed = true;
    backend.close();
    server.close();
    for (const s of sockets) s.destroy();
    opts.onCrash?.();
  };
  if (!ready) timers.push(setTimeout(() => (ready = true), startupDelayMs));
  if (crashAfterMs !== undefined) timers.push(setTimeout(crash, Math.max(0, crashAfterMs - (performance.now() - t0))));

  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    backend,
    servedName,
    crash,
    async close() {
      for (const t of timers) clearTimeout(t);
      backend.close();
      if (!crashed) {
        crashed = true;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
