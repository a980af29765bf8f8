import { Engine } from '../../engine/engine.ts';
import { SimRequest } from '../../engine/request.ts';
import { PROMPT_HASH_BLOCK_TOKENS } from '../prompt-hashes.ts';
import { UserError } from '../../util/errors.ts';
import { BUILTIN_CATALOG, getHardware, getModel, type Catalog } from '../../model/catalog.ts';
import type { PerfModel } from '../../perf/types.ts';
import { scenarioSchema, type EngineSpec } from '../../scenario/schema.ts';
import { resolvePools } from '../../sim/simulator.ts';
import type { PoolRuntime } from '../../sim/fleet.ts';
import type { LiveClock } from '../clock.ts';
import { MAX_TIMER_MS } from '../timers.ts';
import { TextHistogram, renderScalar } from '../prom-text.ts';

/** What one modelled GPU server runs: the same pieces a simulator pool is built from. */
export interface BackendSpec {
  model: string;
  hardware: string;
  tp?: number;
  /** Engine settings over the scenario defaults (vLLM V1's): e.g. kvBlocks, maxNumSeqs. */
  engine?: Partial<EngineSpec>;
  catalog?: Catalog;
  /** Replaces the roofline step-time model (tests). */
  perf?: PerfModel;
  /** Longest prompt + output accepted, as vLLM's --max-model-len (default and maximum: the model's context length). */
  maxModelLen?: number;
}

/** Receives a request's tokens as the engine produces them. */
export interface TokenSink {
  /** Output tokens [from, to) now exist. */
  onTokens(from: number, to: number): void;
  onFinish(): void;
}

/**
 * Builds the pool runtime exactly as `simulate` would for a one-pool scenario with this model and hardware,
 * so the emulator and the simulator share engine config, KV capacity and perf model.
 */
export function resolveBackendPool(spec: BackendSpec): PoolRuntime {
  const model = getModel(spec.model, spec.catalog ?? BUILTIN_CATALOG); // unknown names: a one-line UserError listing valid ones
  getHardware(spec.hardware, spec.catalog ?? BUILTIN_CATALOG);
  const tp = spec.tp ?? 1;
  // vLLM shards attention heads across the TP group and refuses a degree that does not divide them.
  if (model.heads % tp !== 0) throw new UserError(`--tp: ${tp} does not divide ${spec.model}'s ${model.heads} attention heads (vLLM refuses such a tensor-parallel degree)`);
  const mml = spec.maxModelLen;
  // vLLM refuses a --max-model-len over the model's own (without VLLM_ALLOW_LONG_MAX_MODEL_LEN).
  if (mml !== undefined && !(Number.isInteger(mml) && mml >= 1 && mml <= model.contextLength)) {
    throw new UserError(`--max-model-len: expected an integer in [1, ${model.contextLength}] (${spec.model}'s context length), got ${mml}`);
  }
  const sc = scenarioSchema.parse({
    workload: { trace: { path: 'unused' } },
    fleet: { pools: [{ model: spec.model, hardware: spec.hardware, tp, count: 1, ...(mml !== undefined ? { contextLength: mml } : {}), ...(spec.engine ? { engine: spec.engine } : {}) }] },
  });
  return resolvePools(sc, '.', 'step', spec.catalog ?? BUILTIN_CATALOG, spec.perf)[0]!;
}

const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

/** A finished request on the modelled timeline (seconds since the emulator started). */
export interface FinishedRecord {
  arrivalS: number;
  firstTokenS: number;
  finishS: number;
  inputTokens: number;
  outputTokens: number;
}

const HISTORY = 10_000;

interface Live {
  req: SimRequest;
  sink: TokenSink;
  sent: number;
  lastTokenS: number;
}

/**
 * The simulator's `Engine` (step mode: one event per iteration) driven by timers on a `LiveClock`. Each
 * iteration boundary fires at its modelled time; the engine always computes with the scheduled time (not the
 * late timer's), so timer jitter delays token delivery slightly but never changes the modelled schedule.
 */
export class EmulatedBackend {
  readonly pool: PoolRuntime;
  readonly engine: Engine;
  readonly contextLength: number;
  private readonly live = new Map<number, Live>();
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private pendingAtS = NaN;
  /** The latest time handed to the engine: its clock must never go back. */
  private lastS = 0;
  private nextId = 0;
  private closed = false;
  private prev: SimRequest[] = [];
  // vLLM metric state (modelled seconds).
  promptTokensTotal = 0;
  generationTokensTotal = 0;
  requestsFinished = 0;
  /** The last 10,000 finished requests (tests compare them with the simulator's log). */
  readonly finished: FinishedRecord[] = [];
  private readonly ttft = new TextHistogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT_BUCKETS);
  private readonly itl = new TextHistogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL_BUCKETS);
  /** vLLM V1's older name of the inter-token latency: observed per token, with the same values as `itl`. */
  private readonly tpot = new TextHistogram('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', ITL_BUCKETS);
  /** Per finished request: (finish − first token) / (output tokens − 1). */
  private readonly requestTpot = new TextHistogram('vllm:request_time_per_output_token_seconds', 'Histogram of time_per_output_token_seconds per request.', ITL_BUCKETS);
  private readonly e2e = new TextHistogram('vllm:e2e_request_latency_seconds', 'Histogram of end to end request latency in seconds.', E2E_BUCKETS);

  constructor(
    spec: BackendSpec,
    private readonly clock: LiveClock,
  ) {
    this.pool = resolveBackendPool(spec);
    // The pool's context length: --max-model-len when given, else the model's (as the simulator's pool).
    this.contextLength = this.pool.contextLength;
    this.engine = new Engine(0, this.pool.engine, this.pool.perf, this.pool.queueOrder(), { onFinish: () => {} });
  }

  get model(): string {
    return this.pool.model;
  }

  /** Why a request cannot be served at all (vLLM answers these with 400), or undefined. */
  reject(inputTokens: number, outputTokens: number): string | undefined {
    if (inputTokens + outputTokens > this.contextLength) {
      return `This model's maximum context length is ${this.contextLength} tokens. However, you requested ${inputTokens + outputTokens} tokens (${inputTokens} in the messages, ${outputTokens} in the completion).`;
    }
    const blocks = Math.ceil((inputTokens + outputTokens) / this.pool.engine.blockTokens);
    if (blocks > this.pool.engine.kvBlocks) return `request needs ${blocks} KV blocks; the instance has ${this.pool.engine.kvBlocks}`;
    return undefined;
  }

  /**
   * Queues a request now; its tokens go to `sink`. `prefixHashes`: its prompt's block hashes (prompt-hashes.ts),
   * read by the engine's prefix cache when it has one. Returns the engine request (read-only for callers).
   */
  submit(inputTokens: number, outputTokens: number, sink: TokenSink, prefixHashes?: readonly number[]): SimRequest {
    // Boundaries due before this arrival happen first, so the engine sees events in time order.
    const now = this.catchUp();
    const prefix = prefixHashes ? { prefixHashes, prefixBlockTokens: PROMPT_HASH_BLOCK_TOKENS } : {};
    const r = new SimRequest({ id: this.nextId++, arrivalS: now, inputTokens, outputTokens, ...prefix }, this.pool.model);
    this.live.set(r.id, { req: r, sink, sent: 0, lastTokenS: now });
    this.promptTokensTotal += inputTokens;
    const next = this.engine.enqueue(r, now);
    if (!Number.isNaN(next)) this.schedule(next);
    return r;
  }

  /** The client went away: its tokens stop, and the engine aborts it at the next boundary, freeing its KV (as vLLM does). */
  detach(id: number): void {
    const l = this.live.get(id);
    if (!l) return;
    this.live.delete(id);
    const now = this.catchUp();
    const next = this.engine.abort(l.req, now);
    if (!Number.isNaN(next)) this.schedule(next);
  }

  /** Runs the boundaries that were due by now (the process was busy or starved); returns the engine's new clock. */
  private catchUp(): number {
    const wall = this.clock.nowS();
    while (!Number.isNaN(this.pendingAtS) && this.pendingAtS <= wall) this.fire();
    this.lastS = Math.max(wall, this.lastS);
    return this.lastS;
  }

  close(): void {
    this.closed = true;
    this.cancelTimer();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  /**
   * Node timers fire ≥ 1 ms late, which at a time scale of 20 is 20 modelled ms per iteration, more than a
   * decode step: so a boundary due within 1 ms of wall time runs on the next turn of the event loop
   * (setImmediate: I/O still interleaves), and a later one by a timer set 1 ms early. Tokens thus leave
   * within about ±1 ms wall of their modelled time instead of drifting later by ~1 ms per iteration.
   */
  private schedule(atS: number): void {
    if (this.closed) return;
    this.cancelTimer();
    this.pendingAtS = atS;
    const d = this.clock.delayMs(atS);
    if (d <= 1) this.immediate = setImmediate(this.fire);
    // At a tiny time scale a boundary can be more than a Node timer holds (24.8 days) away: wait in pieces
    // rather than let the timer overflow and fire after 1 ms (src/live/timers.ts).
    else if (d - 1 > MAX_TIMER_MS) this.timer = setTimeout(() => this.schedule(atS), MAX_TIMER_MS);
    else this.timer = setTimeout(this.fire, d - 1);
  }

  private readonly fire = (): void => {
    this.cancelTimer();
    const t = Math.max(this.pendingAtS, this.lastS);
    this.pendingAtS = NaN;
    this.lastS = t;
    // The iteration that ends now is the batch built at the previous boundary.
    const prev = this.prev;
    prev.length = 0;
    for (const r of this.engine.batch) prev.push(r);
    const next = this.engine.onBoundary(t);
    for (const r of prev) {
      const l = this.live.get(r.id);
      if (!l || r.generated <= l.sent) continue;
      if (l.sent === 0) this.ttft.observe(t - r.arrivalS);
      else {
        const gap = (t - l.lastTokenS) / (r.generated - l.sent);
        for (let i = l.sent; i < r.generated; i++) {
          this.itl.observe(gap);
          this.tpot.observe(gap);
        }
      }
      this.generationTokensTotal += r.generated - l.sent;
      const from = l.sent;
      l.sent = r.generated;
      l.lastTokenS = t;
      l.sink.onTokens(from, r.generated);
      if (r.status === 'done') {
        this.live.delete(r.id);
        this.requestsFinished++;
        if (this.finished.length === HISTORY) this.finished.shift();
        this.finished.push({ arrivalS: r.arrivalS, firstTokenS: r.firstTokenS, finishS: t, inputTokens: r.inputTokens, outputTokens: r.outputTokens });
        this.e2e.observe(t - r.arrivalS);
        if (r.outputTokens > 1) this.requestTpot.observe((t - r.firstTokenS) / (r.outputTokens - 1));
        l.sink.onFinish();
      }
    }
    if (!Number.isNaN(next)) this.schedule(next);
  };

  get kvUsedFraction(): number {
    return this.engine.usedBlocks / this.engine.cfg.kvBlocks;
  }

  /** vLLM's /metrics names (v0 and v1 spellings of KV usage both emitted), labelled by model_name: the served name, as vLLM does. */
  renderMetrics(modelName: string = this.pool.model): string {
    const lb = `model_name=${JSON.stringify(modelName)}`;
    return [
      renderScalar('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', lb, this.engine.numRunning),
      renderScalar('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', lb, this.engine.numWaiting),
      renderScalar('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', lb, this.kvUsedFraction),
      renderScalar('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', lb, this.kvUsedFraction),
      renderScalar('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig.', `block_size="${this.pool.engine.blockTokens}",num_gpu_blocks="${this.pool.engine.kvBlocks}"`, 1),
      renderScalar('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemptions.', lb, this.engine.preemptions),
      ...(this.engine.prefixCache
        ? [
            renderScalar('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', lb, this.engine.prefixQueryTokens),
            renderScalar('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', lb, this.engine.prefixHitTokens),
          ]
        : []),
      renderScalar('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', lb, this.promptTokensTotal),
      renderScalar('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', lb, this.generationTokensTotal),
      // vLLM labels it by finish reason; the emulator always generates max_tokens (as with ignore_eos), so every one is `length`.
      renderScalar('vllm:request_success_total', 'counter', 'Count of successfully processed requests.', `${lb},finished_reason="stop"`, 0),
      `vllm:request_success_total{${lb},finished_reason="length"} ${this.requestsFinished}`,
      this.ttft.render(lb),
      this.itl.render(lb),
      this.tpot.render(lb),
      this.requestTpot.render(lb),
      this.e2e.render(lb),
      '',
    ].join('\n');
  }
}

