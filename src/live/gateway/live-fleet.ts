import type { FleetView, InstanceState, InstanceView, RequestProgress, RequestView } from '../../policy/types.ts';
import { parsePromText, sumOf } from '../prom-text.ts';

/**
 * One backend as routers see it. Load signals mix the last scrape of its `/metrics` with the gateway's own
 * exact in-flight count, so a burst between two scrapes is not invisible: with R running + W waiting scraped
 * while the gateway had f₀ requests in flight, and f in flight now, outstanding = max(f, R + W + f − f₀).
 * (Scraped 3 running + 1 waiting at f₀ = 4, f = 7 now ⇒ 7; another client's 2 extra ⇒ R+W = 6 ⇒ 9.)
 */
export class LiveBackend implements InstanceView {
  state: InstanceState = 'provisioning';
  readonly pp = 1;
  readonly region = '';
  healthy = false;
  /** Passed a health check at least once: failing after that means down, not still starting. */
  wasHealthy = false;
  /** Gateway clock (s) when it was added; a backend never healthy counts as starting for health.startupGraceS. */
  addedAtS = 0;
  healthStreak = 0;
  failStreak = 0;
  consecutiveFailures = 0;
  ejectedUntilS = -1;
  ejections = 0;
  removed = false;
  draining = false;
  /** Gateway-side accounting, exact. */
  inflight = 0;
  /** Σ over in-flight requests: prompt + 1 before the first response byte, 1 after (SplitwiseSim's pending tokens). */
  pending = 0;
  /** Σ over in-flight requests of prompt + max_tokens not yet known to be done. */
  tokensOut = 0;
  // Last scrape.
  scrapedRunning = 0;
  scrapedWaiting = 0;
  scrapedKv = 0;
  inflightAtScrape = 0;
  scrapedAtS = -1;
  /** From vLLM's `vllm:cache_config_info{num_gpu_blocks, block_size}` (0 until a scrape shows it). */
  kvCapacityTokens = 0;
  /** The gateway's in-flight requests to this backend, in send order. */
  readonly active = new Set<LiveRequest>();

  constructor(
    readonly id: number,
    readonly url: string,
    readonly model: string,
    readonly hardware: string,
    readonly maxInflight: number,
    readonly tp = 1,
  ) {}

  get pool(): string {
    return this.model;
  }
  get outstandingRequests(): number {
    return Math.max(this.inflight, this.scrapedRunning + this.scrapedWaiting + this.inflight - this.inflightAtScrape);
  }
  get numRunning(): number {
    return Math.min(this.outstandingRequests, this.scrapedRunning);
  }
  get numWaiting(): number {
    return this.outstandingRequests - this.numRunning;
  }
  get kvUsedFraction(): number {
    return this.scrapedKv;
  }
  get outstandingTokens(): number {
    return this.tokensOut;
  }
  get pendingTokens(): number {
    return this.pending;
  }

  /**
   * What the gateway knows of its requests on this backend: before the first response byte a request counts as
   * waiting with its prompt to prefill; after it, as running with the prompt done and ≥ 1 token out. Tokens
   * streamed later are not parsed (the body is passed through), so `generated` stays a lower bound.
   */
  requests(): readonly RequestProgress[] {
    return [...this.active];
  }

  /**
   * Reads vLLM's gauges from a /metrics body (v1 `kv_cache_usage_perc`, else v0 `gpu_cache_usage_perc`). A
   * data-parallel server (`--data-parallel-size N`) exports one series per engine (label `engine`) of each gauge
   * and one `vllm:cache_config_info` per engine: running and waiting are summed, the KV capacity is summed over
   * distinct engines, and the KV usage is the engines' mean weighted by their capacity (a plain mean where a
   * capacity is unknown; vLLM's own aggregate logger averages it too). One engine reads as before.
   */
  applyScrape(text: string, nowS: number): void {
    const s = parsePromText(text);
    this.scrapedRunning = sumOf(s, 'vllm:num_requests_running') ?? 0;
    this.scrapedWaiting = sumOf(s, 'vllm:num_requests_waiting') ?? 0;
    const capByEngine = new Map<string, number>();
    for (const x of s) {
      if (x.name !== 'vllm:cache_config_info') continue;
      const engine = x.labels.engine ?? '';
      const cap = Number(x.labels.num_gpu_blocks) * Number(x.labels.block_size);
      if (Number.isFinite(cap) && cap > 0 && !capByEngine.has(engine)) capByEngine.set(engine, cap);
    }
    const kvName = s.some((x) => x.name === 'vllm:kv_cache_usage_perc') ? 'vllm:kv_cache_usage_perc' : 'vllm:gpu_cache_usage_perc';
    let n = 0;
    let sum = 0;
    let weighted = 0;
    let weights = 0;
    let capsKnown = true;
    for (const x of s) {
      if (x.name !== kvName) continue;
      n++;
      sum += x.value;
      const cap = capByEngine.get(x.labels.engine ?? '');
      if (cap === undefined) capsKnown = false;
      else {
        weighted += x.value * cap;
        weights += cap;
      }
    }
    this.scrapedKv = n === 0 ? 0 : n === 1 ? sum : capsKnown ? weighted / weights : sum / n;
    this.inflightAtScrape = this.inflight;
    if (capByEngine.size > 0) {
      let cap = 0;
      for (const c of capByEngine.values()) cap += c;
      this.kvCapacityTokens = cap;
    }
    this.scrapedAtS = nowS;
  }
}

/** A request in flight from the gateway, as policies see it (see `LiveBackend.requests`). */
export class LiveRequest implements RequestProgress {
  status = 'waiting';
  generated = 0;
  kvTokens = 0;
  prefilled = 0;
  readonly prefillTarget: number;
  readonly id: number;
  readonly arrivalS: number;
  readonly inputTokens: number;
  readonly predictedOutputTokens: number;
  readonly model: string;
  readonly tier: string;
  readonly region: string;
  readonly app: string;
  readonly deadlineS: number;

  constructor(v: RequestView) {
    this.id = v.id;
    this.arrivalS = v.arrivalS;
    this.inputTokens = v.inputTokens;
    this.predictedOutputTokens = v.predictedOutputTokens;
    this.model = v.model;
    this.tier = v.tier;
    this.region = v.region;
    this.app = v.app;
    this.deadlineS = v.deadlineS;
    this.prefillTarget = v.inputTokens;
  }

  /** The first response byte came: the prompt is done and one token exists. */
  started(): void {
    this.status = 'running';
    this.prefilled = this.prefillTarget;
    this.generated = 1;
    this.kvTokens = this.inputTokens;
  }
}

/**
 * The live fleet as a `FleetView`: the same interface the simulator's `Fleet` implements, so routers from
 * src/policy/routing run unchanged. `routable(model)` lists backends that are healthy, not ejected, not
 * draining and below their in-flight cap, in id order.
 */
export class LiveFleet implements FleetView {
  now = 0;
  readonly instances: LiveBackend[] = [];
  private readonly byModel = new Map<string, LiveBackend[]>();
  private readonly scratch: LiveBackend[] = [];

  add(url: string, model: string, hardware: string, maxInflight: number, nowS = this.now): LiveBackend {
    const b = new LiveBackend(this.instances.length, url, model, hardware, maxInflight);
    b.addedAtS = nowS;
    this.instances.push(b);
    return b;
  }

  /**
   * What a backend can do for new requests: `up` (routable), `ejected` (healthy, out for an outlier ejection,
   * back soon), `starting` (never healthy yet, within `startupGraceS` of being added), `down` (failing its health
   * checks after having passed them, or never healthy past the grace), `draining` or `removed`.
   */
  health(b: LiveBackend, startupGraceS: number): 'up' | 'ejected' | 'starting' | 'down' | 'draining' | 'removed' {
    if (b.removed) return 'removed';
    if (b.draining) return 'draining';
    if (b.healthy) return b.state === 'ready' ? 'up' : 'ejected';
    return !b.wasHealthy && this.now - b.addedAtS < startupGraceS ? 'starting' : 'down';
  }

  /** Recomputes each backend's state and the per-model ready lists (after health, ejection or drain changes). */
  refresh(nowS: number): void {
    this.now = nowS;
    this.byModel.clear();
    for (const b of this.instances) {
      if (b.removed) b.state = 'stopped';
      else if (b.draining) b.state = 'draining';
      else if (b.healthy && nowS >= b.ejectedUntilS) b.state = 'ready';
      else b.state = 'provisioning';
      if (b.state !== 'ready') continue;
      let list = this.byModel.get(b.model);
      if (!list) this.byModel.set(b.model, (list = []));
      list.push(b);
    }
  }

  /** All ready backends of a model, caps ignored. */
  ready(model: string): readonly LiveBackend[] {
    return this.byModel.get(model) ?? EMPTY;
  }

  routable(model: string): readonly LiveBackend[] {
    const all = this.byModel.get(model);
    if (!all) return EMPTY;
    let full = false;
    for (const b of all) if (b.inflight >= b.maxInflight) full = true;
    if (!full) return all;
    const out = this.scratch;
    out.length = 0;
    for (const b of all) if (b.inflight < b.maxInflight) out.push(b);
    return out;
  }
}

const EMPTY: readonly LiveBackend[] = [];

/** A view that hides some backends (those a retried request already failed on); routers see no difference. */
export function excluding(view: LiveFleet, tried: ReadonlySet<number>): FleetView {
  return {
    get now() {
      return view.now;
    },
    instances: view.instances,
    routable: (model) => view.routable(model).filter((b) => !tried.has(b.id)),
  };
}
