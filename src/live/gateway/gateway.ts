import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { createRouter } from '../../policy/routing/registry.ts';
import type { Router } from '../../policy/routing/types.ts';
import type { RequestView } from '../../policy/types.ts';
import type { ArrivalStats, PoolStatus, ScaleAction } from '../../policy/scaling/types.ts';
import { ConfigError, invariant } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import { scaledClock, type LiveClock } from '../clock.ts';
import { BodyTooLarge, isGet, listen, readBody, sendError, sendJson, SERVER_ROUTES } from '../http-util.ts';
import { AdmissionQueue } from './admission.ts';
import type { GatewayConfig } from './config.ts';
import { excluding, LiveFleet, LiveRequest, type LiveBackend } from './live-fleet.ts';
import { GatewayMetrics } from './metrics.ts';
import { BackendMonitor } from './monitor.ts';
import { parseCompletion, TIER_HEADER } from './parse-request.ts';
import { PROMPT_HASH_BLOCK_TOKENS } from '../prompt-hashes.ts';

export { TIER_HEADER };
export const BACKEND_HEADER = 'x-llmfleet-backend';

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly fleet: LiveFleet;
  readonly metrics: GatewayMetrics;
  readonly router: Router;
  /** Requests waiting in the admission queue. */
  readonly queued: number;
  /** Adds a backend (not routable until its first passing health check). */
  addBackend(model: string, url: string): LiveBackend;
  /** Stops routing to a backend and resolves once its in-flight requests are done (or after `timeoutS`). */
  drainBackend(id: number, timeoutS?: number): Promise<void>;
  /** Runs one health-check and scrape round now (tests and startup). */
  probe(): Promise<void>;
  /** Requests waiting in the admission queue for one model. */
  queuedFor(model: string): number;
  /** Arrivals per (model, region, tier) since the last call, sorted (what scalers read as `ScalingSignals.arrivals`). */
  takeArrivals(): ArrivalStats[];
  /** An autoscaler tick, published on /metrics (`GatewayMetrics.recordScaling`). */
  recordScaling(pools: readonly PoolStatus[], proposed: readonly ScaleAction[], governed: readonly ScaleAction[]): void;
  /** Graceful shutdown: refuse new work, let queued and in-flight requests finish (up to drainTimeoutS), then close. */
  close(): Promise<void>;
}

/** One request inside the gateway, from arrival to the last byte. */
interface Pending {
  view: RequestView;
  progress: LiveRequest | null;
  tier: string;
  priority: number;
  stream: boolean;
  path: string;
  body: Buffer;
  headers: Record<string, string | string[]>;
  res: ServerResponse;
  arrivalMs: number;
  attempts: number;
  tried: Set<number>;
  queued: boolean;
  done: boolean;
  timedOut: boolean;
  backend: LiveBackend | null;
  firstByte: boolean;
  /** Cancels the current backend attempt (client gone, request timeout); null before the first. */
  cancel: (() => void) | null;
  timer: NodeJS.Timeout | null;
  queueTimer: NodeJS.Timeout | null;
  /** The FIFO it waits in, from its last defer: its model, or (model, the router's hold `queue` key). */
  waitsIn: string;
}

/** Connection-level failures: nothing reached the model, so the request may go to another backend. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED', 'EHOSTUNREACH', 'ENOTFOUND']);
const CANCELLED = Object.assign(new Error('cancelled by the gateway'), { code: 'UND_ERR_ABORTED' });
/** The gateway's own per-attempt timeouts (timeouts.firstByteS, timeouts.idleS): the client hears of them, the backend's record does not. */
const FIRST_BYTE_TIMEOUT = Object.assign(new Error('first byte timeout'), { code: 'LLMFLEET_FIRST_BYTE_TIMEOUT' });
const IDLE_TIMEOUT = Object.assign(new Error('idle timeout'), { code: 'LLMFLEET_IDLE_TIMEOUT' });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);
/**
 * Request headers not forwarded to a backend: hop-by-hop ones (RFC 9110 §7.6.1; `proxy-*` too), `host` (undici
 * sets the backend's), `content-length` (undici recomputes it from the body) and `expect` (node:http has already
 * answered a `100-continue`; undici refuses the header). Everything else goes through: vLLM reads `x-request-id`
 * (its request id), `traceparent`/`tracestate` (OpenTelemetry) and `x-data-parallel-rank`, and passes unknown
 * ones by. The gateway's own `x-llmfleet-tier` goes through as well: harmless to vLLM, and a gateway behind this
 * one (or a backend's access log) sees the same tier.
 */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'host', 'content-length', 'expect', 'http2-settings']);

/** A client request's end-to-end headers, as sent to the backend (see NOT_FORWARDED; also any header `connection` names). */
export function forwardedHeaders(h: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const conn = h.connection;
  const named = typeof conn === 'string' && conn !== '' ? new Set(conn.toLowerCase().split(',').map((x) => x.trim())) : null;
  for (const k in h) {
    const v = h[k];
    if (v === undefined || NOT_FORWARDED.has(k) || k.startsWith('proxy-') || named?.has(k)) continue;
    out[k] = v;
  }
  return out;
}

/**
 * Starts the OpenAI-compatible gateway: node:http in front, one undici Pool per backend, routing by a
 * simulator router (`createRouter(config.routing.policy, …)`) over a `LiveFleet` view. See docs/LIVE.md.
 */
export async function startGateway(cfg: GatewayConfig, opts: { clock?: LiveClock } = {}): Promise<Gateway> {
  const clock = opts.clock ?? scaledClock(1);
  const fleet = new LiveFleet();
  const router = createRouter(cfg.routing.policy, cfg.routing.options, { rng: new Rng(cfg.seed).fork('router') });
  // Only a router that reads a prompt's block hashes gets them: the others are spared hashing every prompt.
  const hashPrompts = router.readsPrefixHashes === true;
  if (router.migrate) {
    // Refused rather than ignored: the same policy would behave differently here than in simulation.
    throw new ConfigError({ path: 'routing.options.migration.enabled', expected: 'false in the live plane (no engine behind the gateway can move a running request)', got: true });
  }
  const queue = new AdmissionQueue<Pending>(cfg.admission.maxQueue);
  const metrics = new GatewayMetrics(fleet, () => queue.size);
  const pools = new Map<number, Pool>();
  const poolCfg = new Map(cfg.pools.map((p) => [p.model, p]));
  const models = [...poolCfg.keys()];
  /** Every name a request may give (pool models and their aliases) → the pool's model. */
  const poolOfName = new Map(cfg.pools.flatMap((p) => [p.model, ...p.aliases].map((name) => [name, p.model] as const)));
  const servedNames = new Set(poolOfName.keys());
  let nextReqId = 0;
  let draining = false;
  let inflightTotal = 0;
  const drainWaiters: (() => void)[] = [];
  let arrivals = new Map<string, { model: string; region: string; tier: string; requests: number; inputTokens: number; predictedOutputTokens: number }>();
  const queuedByModel = new Map<string, number>();

  const addBackend = (model: string, url: string): LiveBackend => {
    const pc = poolCfg.get(model);
    invariant(pc !== undefined, `no pool for model ${model}`);
    const b = fleet.add(url, model, pc.hardware, pc.maxInflightPerBackend, clock.nowS());
    pools.set(b.id, new Pool(url, { connections: pc.connections, pipelining: 1, keepAliveTimeout: 30_000 }));
    return b;
  };
  for (const p of cfg.pools) for (const url of p.backends) addBackend(p.model, url);

  const refresh = () => fleet.refresh(clock.nowS());

  const recordFailure = (b: LiveBackend, connectionRefused: boolean) => {
    b.consecutiveFailures++;
    if (connectionRefused) b.healthy = false; // a passive health signal; the active check brings it back
    if (b.consecutiveFailures >= cfg.outlier.consecutiveFailures) {
      b.ejectedUntilS = clock.nowS() + cfg.outlier.ejectionS;
      b.ejections++;
      b.consecutiveFailures = 0;
    }
    refresh();
  };

  // Backends ready at the last health round. One that becomes ready signals its endpoint, as an instance that
  // becomes ready does in the simulator (`signal` below), once its first scrape has told the router its KV capacity
  // (before it, SageServe reads the endpoint as full and releases nothing).
  const wasReady = new Set<number>();
  const monitor = new BackendMonitor(fleet, cfg, clock, () => {
    refresh();
    pump();
    if (!router.endpointSignal) return;
    const newly = fleet.instances.filter((b) => b.state === 'ready' && !wasReady.has(b.id));
    for (const b of fleet.instances) if (b.state !== 'ready') wasReady.delete(b.id);
    if (newly.length === 0) return;
    for (const b of newly) wasReady.add(b.id);
    void monitor.scrapeNow(newly).then(() => {
      for (const model of new Set(newly.map((b) => b.model))) signal([model], new Set(newly.filter((b) => b.model === model).map((b) => b.region)));
    });
  });
  for (const b of fleet.instances) monitor.add(b);
  monitor.start();

  // ---- request path ------------------------------------------------------------------------------

  const finish = (p: Pending, status: string) => {
    if (p.done) return;
    p.done = true;
    if (p.timer) clearTimeout(p.timer);
    if (p.queueTimer) clearTimeout(p.queueTimer);
    metrics.countRequest(p.view.model, p.tier, status);
    if (status === '200') metrics.observeE2e(p.view.model, p.tier, (performance.now() - p.arrivalMs) / 1000);
  };

  const release = (p: Pending) => {
    const b = p.backend;
    if (!b) return;
    p.backend = null;
    p.cancel = null;
    b.inflight--;
    inflightTotal--;
    b.pending -= p.firstByte ? 1 : p.view.inputTokens + 1;
    b.tokensOut -= p.view.inputTokens + p.view.predictedOutputTokens;
    if (p.progress) b.active.delete(p.progress);
    p.progress = null;
    metrics.addInflight(p.view.model, -1);
    wakeDrain();
    if (b.inflight === 0) for (const w of backendWaiters.get(b.id)?.splice(0) ?? []) w();
    signal([p.view.model], new Set([b.region]));
  };
  const backendWaiters = new Map<number, (() => void)[]>();
  /** Wakes `close()` once nothing is in flight or queued (called wherever a request leaves either). */
  const wakeDrain = () => {
    if (draining && inflightTotal === 0 && queue.size === 0) for (const w of drainWaiters.splice(0)) w();
  };

  /**
   * Endpoint signals to a router that holds requests (`Router.endpointSignal`: SageServe's NIW queue manager
   * releases held requests only to endpoints that signal), as the simulator sends them: the region where a request
   * of the model finished, and every endpoint of every model each `heldSignalIntervalS`. The queue is then pumped
   * at the signal's instant, so the router sees the same time it was signalled at. Other routers: a plain pump.
   */
  let signalNowS: number | null = null;
  const signal = (forModels: readonly string[], regions: ReadonlySet<string> | null) => {
    if (!router.endpointSignal) return pump();
    const now = clock.nowS();
    for (const m of forModels) router.endpointSignal(m, regions, now);
    signalNowS = now;
    try {
      pump();
    } finally {
      signalNowS = null;
    }
  };
  const signalTimer = router.endpointSignal && router.heldSignalIntervalS !== undefined
    ? setInterval(() => signal(models, null), (router.heldSignalIntervalS * 1000) / clock.scale)
    : null;
  signalTimer?.unref();

  /**
   * Routes one request with the simulator's router; false when it defers (no backend can take it now), with
   * `p.waitsIn` set: a hold with a `queue` key (SageServe's `niwQueues: model-region`) waits in its own FIFO of the
   * model, as in the simulator, so a refusal there blocks only that FIFO; any other defer blocks the model.
   */
  const dispatch = (p: Pending): boolean => {
    fleet.now = signalNowS ?? clock.nowS();
    const d = router.route(p.view, p.tried.size > 0 ? excluding(fleet, p.tried) : fleet);
    if (d.kind === 'defer') {
      p.waitsIn = d.hold && d.queue !== undefined ? `${p.view.model}\u0000${d.queue}` : p.view.model;
      return false;
    }
    const b = fleet.instances[d.to];
    invariant(b !== undefined && b.state === 'ready' && b.model === p.view.model, `router ${router.name} chose a backend that cannot take the request`);
    metrics.countDecision(p.view.model, b.url, d.reason);
    forward(p, b);
    return true;
  };

  const autoscaled = new Set(cfg.autoscaler?.pools.map((p) => p.model) ?? []);
  /**
   * No backend of the model can take a request now or soon: none up, ejected for a while or still starting, and
   * no autoscaler that could add one. Such requests get a 503 at once rather than a queue timeout.
   */
  const unavailable = (model: string): boolean => {
    if (autoscaled.has(model)) return false;
    fleet.now = clock.nowS();
    for (const b of fleet.instances) {
      if (b.model !== model) continue;
      const h = fleet.health(b, cfg.health.startupGraceS);
      if (h === 'up' || h === 'ejected' || h === 'starting') return false;
    }
    return true;
  };
  /** Answers 503 when the request's model is unavailable; true if it did. */
  const refuseUnavailable = (p: Pending): boolean => {
    const model = p.view.model;
    if (!unavailable(model)) return false;
    const mine = fleet.instances.filter((b) => b.model === model && !b.removed);
    metrics.rejected.inc({ model, reason: 'no-backend' });
    const why = mine.length === 0 ? 'it has no backend' : `its ${mine.length === 1 ? 'backend is' : `${mine.length} backends are`} down or draining (failing health checks: see /health)`;
    sendError(p.res, 503, `no backend for model '${model}' can take requests: ${why}`, 'api_error', 'no_backend_available', { 'retry-after': String(cfg.admission.retryAfterS) });
    finish(p, '503');
    return true;
  };

  const pump = () => {
    if (queue.size === 0) return;
    // FIFOs whose head was refused in this pass (a model, or a model's keyed hold FIFO); every model: stop.
    const blocked = new Set<string>();
    let modelsBlocked = 0;
    queue.drain((p) => {
      if (blocked.has(p.view.model) || blocked.has(p.waitsIn)) return false;
      if (dispatch(p) || refuseUnavailable(p)) {
        setQueued(p, false);
        if (p.queueTimer) clearTimeout(p.queueTimer);
        p.queueTimer = null;
        return true;
      }
      blocked.add(p.waitsIn);
      if (p.waitsIn === p.view.model) modelsBlocked++;
      return modelsBlocked === models.length ? 'stop' : false;
    });
    wakeDrain(); // requests refused from the queue (503) leave nothing behind
  };

  const setQueued = (p: Pending, on: boolean) => {
    if (p.queued === on) return;
    p.queued = on;
    queuedByModel.set(p.view.model, (queuedByModel.get(p.view.model) ?? 0) + (on ? 1 : -1));
  };
  const enqueue = (p: Pending, front: boolean) => {
    setQueued(p, true);
    queue.push(p, p.priority, front);
    p.queueTimer = setTimeout(() => {
      if (!p.queued) return;
      queue.remove(p, p.priority);
      setQueued(p, false);
      metrics.rejected.inc({ model: p.view.model, reason: 'queue-timeout' });
      const retry = { 'retry-after': String(cfg.admission.retryAfterS) };
      if (fleet.ready(p.view.model).length === 0) {
        // Nothing was serving the model the whole time: an outage (503), not the client sending too much (429).
        sendError(p.res, 503, `no backend for model '${p.view.model}' became ready within ${cfg.admission.queueTimeoutS}s`, 'api_error', 'no_backend_ready', retry);
        finish(p, '503');
      } else {
        sendError(p.res, 429, `no backend for model '${p.view.model}' could take the request within ${cfg.admission.queueTimeoutS}s`, 'rate_limit_error', 'queue_timeout', retry);
        finish(p, '429');
      }
      wakeDrain();
    }, cfg.admission.queueTimeoutS * 1000);
  };

  /** After the backend failed before any response byte: another backend if attempts remain, else 502. */
  const retryOrFail = (p: Pending, b: LiveBackend, why: string) => {
    p.tried.add(b.id);
    if (p.attempts <= cfg.retries && !p.done) {
      metrics.retries.inc({ model: p.view.model });
      if (!dispatch(p) && !refuseUnavailable(p)) enqueue(p, true);
      return;
    }
    sendError(p.res, 502, `backend failed before responding: ${why}`, 'api_error', 'backend_unavailable');
    finish(p, '502');
  };

  const streamError = (p: Pending, message: string, code: string) => {
    // Headers (200, text/event-stream) are out: the only clean signal left is an SSE error event, which the
    // OpenAI clients raise as an APIError. A non-streaming body cut short is reported by closing the socket.
    if (p.stream && !p.res.writableEnded) p.res.end(`data: ${JSON.stringify({ error: { message, type: 'api_error', param: null, code } })}\n\n`);
    else p.res.destroy();
  };

  /**
   * Sends one attempt of a request to a backend through undici's dispatch API and streams the answer back.
   * One handler object per attempt instead of `pool.request` + AbortController + body stream: measured 87–95 →
   * 68–72 µs of CPU per request in a minimal proxy (bench/gateway.ts's setting), the largest share of the
   * gateway's own cost. Every undici callback after the attempt's outcome was handled is ignored (`settled`).
   */
  const forward = (p: Pending, b: LiveBackend) => {
    p.attempts++;
    p.backend = b;
    p.firstByte = false;
    b.inflight++;
    inflightTotal++;
    b.pending += p.view.inputTokens + 1;
    b.tokensOut += p.view.inputTokens + p.view.predictedOutputTokens;
    p.progress = new LiveRequest(p.view);
    b.active.add(p.progress);
    metrics.addInflight(p.view.model, 1);

    let controller: Dispatcher.DispatchController | null = null;
    let settled = false;
    let cancelled = false;
    let status = 0;
    /**
     * A stream's own timer (undici's headers timeout is off): `firstByteS` from sending to the first body byte (time
     * to first token; vLLM sends the headers at once), then at most `idleS` of silence between body chunks while the
     * client is keeping up. A non-stream's wait for its headers (vLLM sends them with the whole body) is bounded by
     * `requestS` alone, and its body by undici's `bodyTimeout` = `idleS`: a timer per request of our own cost 8 % of
     * the gateway's closed-loop throughput (bench/gateway.ts, 14.2k vs 15.3–16.1k req/s). undici's headers timeout
     * stays on for non-streams (at requestS): with it off (0), p99 added latency at 2k req/s went from ≈ 1.1 to 7–12 ms.
     */
    let timer: NodeJS.Timeout | null = null;
    let lastDataMs = 0;
    let paused = false;
    const idleMs = cfg.timeouts.idleS * 1000;
    const abortAttempt = (err: Error) => {
      if (controller) controller.abort(err);
      else {
        cancelled = true;
        failed(err);
      }
    };
    const watchIdle = () => {
      timer = null;
      if (settled) return;
      const left = paused ? idleMs : lastDataMs + idleMs - performance.now();
      if (left > 1) timer = setTimeout(watchIdle, left);
      else abortAttempt(IDLE_TIMEOUT);
    };
    const startIdleWatch = () => {
      if (timer) clearTimeout(timer);
      lastDataMs = performance.now();
      timer = setTimeout(watchIdle, idleMs);
    };
    const stopTimer = () => {
      if (timer) clearTimeout(timer);
      timer = null;
    };
    if (p.stream) timer = setTimeout(() => abortAttempt(FIRST_BYTE_TIMEOUT), cfg.timeouts.firstByteS * 1000);
    /** A backend 5xx without a JSON body (a proxy's HTML page, a crash dump): replaced by the gateway's own 502. */
    let opaqueError = false;
    const replaceOpaque = () => {
      sendError(p.res, 502, `backend ${b.url} answered ${status} without a JSON error body`, 'api_error', 'backend_error', { [BACKEND_HEADER]: b.url });
      finish(p, '502');
    };

    /** The attempt failed: before the response head (maybe retried elsewhere) or mid-body (the stream ends with an error). */
    const failed = (err: Error & { code?: string }) => {
      if (settled) return;
      settled = true;
      stopTimer();
      if (status === 0) {
        release(p);
        if (p.done) return;
        // undici's headers timeout (non-streams: requestS from dispatch) cannot beat the request's own timer (from
        // arrival), but if it does it is the same timeout, not a backend failure.
        if (p.timedOut || err.code === 'UND_ERR_HEADERS_TIMEOUT') {
          sendError(p.res, 504, `request exceeded ${cfg.timeouts.requestS}s`, 'timeout_error', 'timeout');
          finish(p, '504');
        } else if (err.code === FIRST_BYTE_TIMEOUT.code) {
          // A slow backend is not a failing one: no mark towards outlier ejection (nor for the stall below).
          sendError(p.res, 504, `backend sent no response within ${cfg.timeouts.firstByteS}s`, 'timeout_error', 'backend_timeout');
          finish(p, '504');
        } else if (CONNECT_ERRORS.has(err.code ?? '')) {
          recordFailure(b, err.code === 'ECONNREFUSED');
          retryOrFail(p, b, err.code ?? err.message);
        } else {
          recordFailure(b, false);
          sendError(p.res, 502, `backend request failed: ${err.code ?? err.message}`, 'api_error', 'backend_error');
          finish(p, '502');
        }
        return;
      }
      if (opaqueError && !p.done) {
        replaceOpaque();
      } else if (!p.done) {
        if (p.timedOut) streamError(p, `request exceeded ${cfg.timeouts.requestS}s`, 'timeout');
        else if (err.code === FIRST_BYTE_TIMEOUT.code) streamError(p, `backend sent no token within ${cfg.timeouts.firstByteS}s`, 'backend_timeout');
        else if (err.code === IDLE_TIMEOUT.code || err.code === 'UND_ERR_BODY_TIMEOUT') streamError(p, `backend sent nothing for ${cfg.timeouts.idleS}s`, 'backend_stalled');
        else {
          recordFailure(b, false);
          streamError(p, `backend connection lost mid-response (${err.code ?? err.message})`, 'backend_disconnected');
        }
        finish(p, p.timedOut ? 'timeout' : 'stream_error');
      }
      release(p);
    };

    p.cancel = () => {
      if (controller) controller.abort(CANCELLED);
      else {
        // Still waiting for a connection in the pool: answer now, abort the attempt once undici starts it.
        cancelled = true;
        failed(CANCELLED);
      }
    };

    pools.get(b.id)!.dispatch(
      { path: p.path, method: 'POST', headers: p.headers, body: p.body, headersTimeout: p.stream ? 0 : cfg.timeouts.requestS * 1000, bodyTimeout: p.stream ? 0 : idleMs },
      {
        onRequestStart(c) {
          controller = c;
          if (cancelled) c.abort(CANCELLED);
        },
        onResponseStart(c, statusCode, headers) {
          if (settled) return;
          if (p.done) {
            settled = true;
            stopTimer();
            c.abort(CANCELLED);
            release(p);
            return;
          }
          status = statusCode;
          if (statusCode >= 500) recordFailure(b, false);
          else b.consecutiveFailures = 0;
          opaqueError = statusCode >= 500 && !String(headers['content-type'] ?? '').includes('json');
          if (opaqueError) return;
          const out: Record<string, string | string[]> = { [BACKEND_HEADER]: b.url };
          for (const k in headers) if (!HOP_BY_HOP.has(k)) out[k] = headers[k] as string | string[];
          if (draining) out.connection = 'close';
          p.res.writeHead(statusCode, out);
        },
        onResponseData(c, chunk) {
          if (settled) return;
          lastDataMs = performance.now();
          if (opaqueError) return;
          if (!p.firstByte) {
            p.firstByte = true;
            b.pending -= p.view.inputTokens;
            p.progress?.started();
            if (status === 200) metrics.observeTtft(p.view.model, p.tier, (performance.now() - p.arrivalMs) / 1000);
            if (p.stream) startIdleWatch();
          }
          if (!p.res.write(chunk)) {
            // A slow client is not a stalled backend: the idle clock waits while the backend is paused.
            paused = true;
            c.pause();
            p.res.once('drain', () => {
              paused = false;
              lastDataMs = performance.now();
              c.resume();
            });
          }
        },
        onResponseEnd() {
          if (settled) return;
          settled = true;
          stopTimer();
          if (opaqueError) replaceOpaque();
          else {
            p.res.end();
            finish(p, String(status));
          }
          release(p);
        },
        onResponseError(_c, err) {
          failed(err);
        },
      },
    );
  };

  const handleCompletion = async (req: IncomingMessage, res: ServerResponse, path: string, arrivalMs: number) => {
    let buf: Buffer;
    try {
      buf = await readBody(req, cfg.maxBodyBytes);
    } catch (e) {
      if (e instanceof BodyTooLarge) {
        metrics.countRequest('', '', '413');
        sendError(res, 413, `request body exceeds ${cfg.maxBodyBytes} bytes`, 'invalid_request_error', 'body_too_large');
      }
      return;
    }
    const parsed = parseCompletion(buf, path === '/v1/chat/completions', req.headers, servedNames, cfg.tiers, cfg.chatDefaultOutputTokens, hashPrompts);
    if ('status' in parsed) {
      metrics.countRequest(parsed.model === undefined ? '' : poolOfName.get(parsed.model)!, '', String(parsed.status));
      return sendError(res, parsed.status, parsed.message, 'invalid_request_error', parsed.code, {}, parsed.param);
    }
    // An alias is served by its pool (routing, queues, scaling and metrics are per pool); the body goes out unchanged.
    const model = poolOfName.get(parsed.model)!;
    const { inputTokens, maxTokens, tier, priority } = parsed;
    const key = `${model}\u0000${tier}`;
    let a = arrivals.get(key);
    if (!a) arrivals.set(key, (a = { model, region: '', tier, requests: 0, inputTokens: 0, predictedOutputTokens: 0 }));
    a.requests++;
    a.inputTokens += inputTokens;
    a.predictedOutputTokens += maxTokens;
    if (draining) {
      metrics.countRequest(model, tier, '503');
      return sendError(res, 503, 'gateway is shutting down', 'api_error', 'draining', { connection: 'close' });
    }

    const headers = forwardedHeaders(req.headers);
    const p: Pending = {
      progress: null,
      view: {
        id: nextReqId++, arrivalS: clock.nowS(), inputTokens, predictedOutputTokens: maxTokens, model, tier, region: '', app: '', deadlineS: Infinity,
        ...(parsed.prefixHashes ? { prefixHashes: parsed.prefixHashes, prefixBlockTokens: PROMPT_HASH_BLOCK_TOKENS } : {}),
      },
      tier,
      priority,
      stream: parsed.stream,
      path,
      body: buf,
      headers,
      res,
      arrivalMs,
      attempts: 0,
      tried: new Set(),
      queued: false,
      done: false,
      timedOut: false,
      backend: null,
      firstByte: false,
      cancel: null,
      timer: null,
      queueTimer: null,
      waitsIn: '',
    };
    res.on('close', () => {
      if (p.done && res.writableFinished) return;
      if (p.queued) {
        queue.remove(p, p.priority);
        setQueued(p, false);
        wakeDrain();
      }
      if (!p.done) finish(p, 'client_closed');
      p.cancel?.();
    });
    p.timer = setTimeout(() => {
      p.timedOut = true;
      if (p.queued) {
        queue.remove(p, p.priority);
        setQueued(p, false);
        sendError(res, 504, `request exceeded ${cfg.timeouts.requestS}s`, 'timeout_error', 'timeout');
        finish(p, '504');
        wakeDrain();
      } else p.cancel?.();
    }, cfg.timeouts.requestS * 1000);

    if (queue.size === 0 && dispatch(p)) return;
    if (refuseUnavailable(p)) return;
    if (queue.full) {
      metrics.rejected.inc({ model, reason: 'queue-full' });
      sendError(res, 429, `gateway queue is full (${cfg.admission.maxQueue} waiting); retry later`, 'rate_limit_error', 'queue_full', { 'retry-after': String(cfg.admission.retryAfterS) });
      finish(p, '429');
      return;
    }
    enqueue(p, false);
    pump();
  };

  const server: Server = createServer((req, res) => {
    const arrivalMs = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q >= 0 ? url.slice(0, q) : url;
    if (req.method === 'POST' && (path === '/v1/completions' || path === '/v1/chat/completions')) {
      handleCompletion(req, res, path, arrivalMs).catch((e: unknown) => sendError(res, 500, `gateway error: ${(e as Error).message}`, 'api_error'));
      return;
    }
    if (isGet(req.method) && path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        },
        (e: unknown) => sendError(res, 500, String(e), 'api_error'),
      );
      return;
    }
    if (isGet(req.method) && path === '/health') {
      const up = !draining && models.every((m) => fleet.ready(m).length > 0);
      fleet.now = clock.nowS();
      const backends = fleet.instances.filter((b) => !b.removed).map((b) => ({ url: b.url, model: b.model, state: b.state, health: fleet.health(b, cfg.health.startupGraceS), inflight: b.inflight }));
      return sendJson(res, up ? 200 : 503, { status: draining ? 'draining' : up ? 'ok' : 'degraded', backends });
    }
    if (isGet(req.method) && path === '/v1/models') {
      const data = [...poolOfName].map(([id, pool]) => ({ id, object: 'model', created: 0, owned_by: 'llmfleet', root: pool, parent: id === pool ? null : pool }));
      return sendJson(res, 200, { object: 'list', data });
    }
    const allow = SERVER_ROUTES.get(path);
    metrics.countRequest('', '', allow ? '405' : '404');
    if (allow) sendError(res, 405, `method ${req.method} not allowed on ${path} (allowed: ${allow})`, 'invalid_request_error', 'method_not_allowed', { allow });
    else sendError(res, 404, `no route ${req.method} ${path}`, 'invalid_request_error', 'not_found');
  });
  server.keepAliveTimeout = 30_000;

  await monitor.fresh();
  try {
    await listen(server, cfg.port, cfg.host);
  } catch (e) {
    if (signalTimer) clearInterval(signalTimer);
    await monitor.stop();
    await Promise.all([...pools.values()].map((p) => p.destroy()));
    throw e;
  }
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${cfg.host}:${port}`,
    port,
    fleet,
    metrics,
    router,
    get queued() {
      return queue.size;
    },
    queuedFor: (model) => queuedByModel.get(model) ?? 0,
    recordScaling: (pools, proposed, governed) => metrics.recordScaling(pools, proposed, governed),
    takeArrivals() {
      const out = [...arrivals.values()].sort((x, y) => (x.model < y.model ? -1 : x.model > y.model ? 1 : x.tier < y.tier ? -1 : x.tier > y.tier ? 1 : 0));
      arrivals = new Map();
      return out;
    },
    addBackend(model, url) {
      const b = addBackend(model, url);
      monitor.add(b);
      void monitor.healthRound();
      return b;
    },
    drainBackend(id, timeoutS = cfg.drainTimeoutS) {
      const b = fleet.instances[id];
      invariant(b !== undefined, `no backend ${id}`);
      b.draining = true;
      refresh();
      const done = () => {
        b.removed = true;
        refresh();
        void pools.get(id)?.close();
        monitor.remove(id);
      };
      if (b.inflight === 0) {
        done();
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          done();
          resolve();
        }, timeoutS * 1000);
        let list = backendWaiters.get(id);
        if (!list) backendWaiters.set(id, (list = []));
        list.push(() => {
          clearTimeout(t);
          done();
          resolve();
        });
      });
    },
    probe: () => monitor.fresh(),
    async close() {
      draining = true;
      server.close();
      server.closeIdleConnections();
      if (inflightTotal > 0 || queue.size > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, cfg.drainTimeoutS * 1000);
          drainWaiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      if (signalTimer) clearInterval(signalTimer);
      await monitor.stop();
      server.closeAllConnections();
      await Promise.all([...pools.values()].map((p) => p.destroy()));
    },
  };
}
