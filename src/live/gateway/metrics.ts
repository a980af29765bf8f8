import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LiveFleet } from './live-fleet.ts';
import { netChange, type PoolStatus, type ScaleAction } from '../../policy/scaling/types.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** The gateway's own Prometheus metrics (one registry per gateway, so several can live in one process). */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'model' | 'tier' | 'status'>;
  readonly ttft: Histogram<'model' | 'tier'>;
  readonly e2e: Histogram<'model' | 'tier'>;
  readonly inflight: Gauge<'model'>;
  readonly decisions: Counter<'model' | 'backend' | 'reason'>;
  readonly retries: Counter<'model'>;
  readonly rejected: Counter<'model' | 'reason'>;
  readonly queueDepth: Gauge;
  /** The autoscaler's view at its last tick (only with `autoscaler:`): what HPA or KEDA can scale on in advisory mode. */
  readonly currentReplicas: Gauge<'pool'>;
  readonly desiredReplicas: Gauge<'pool'>;
  readonly scaleDecisions: Counter<'pool' | 'action' | 'reason'>;

  // Bound children by label values: prom-client hashes a labels object on every call (sorting its keys),
  // which is a measurable share of the per-request budget; these maps make it one string lookup.
  private readonly requestKids = new Map<string, Counter.Internal>();
  private readonly ttftKids = new Map<string, Histogram.Internal<'model' | 'tier'>>();
  private readonly e2eKids = new Map<string, Histogram.Internal<'model' | 'tier'>>();
  private readonly inflightKids = new Map<string, Gauge.Internal<'model'>>();
  private readonly decisionKids = new Map<string, Counter.Internal>();

  countRequest(model: string, tier: string, status: string): void {
    const k = `${model}\u0000${tier}\u0000${status}`;
    let c = this.requestKids.get(k);
    if (!c) this.requestKids.set(k, (c = this.requests.labels(model, tier, status)));
    c.inc();
  }
  observeTtft(model: string, tier: string, s: number): void {
    const k = `${model}\u0000${tier}`;
    let h = this.ttftKids.get(k);
    if (!h) this.ttftKids.set(k, (h = this.ttft.labels(model, tier)));
    h.observe(s);
  }
  observeE2e(model: string, tier: string, s: number): void {
    const k = `${model}\u0000${tier}`;
    let h = this.e2eKids.get(k);
    if (!h) this.e2eKids.set(k, (h = this.e2e.labels(model, tier)));
    h.observe(s);
  }
  addInflight(model: string, d: number): void {
    let g = this.inflightKids.get(model);
    if (!g) this.inflightKids.set(model, (g = this.inflight.labels(model)));
    g.inc(d);
  }
  countDecision(model: string, backend: string, reason: string): void {
    const k = `${model}\u0000${backend}\u0000${reason}`;
    let c = this.decisionKids.get(k);
    if (!c) this.decisionKids.set(k, (c = this.decisions.labels(model, backend, reason)));
    c.inc();
  }

  /** One autoscaler tick: the pools' counts before it, the policy's requests and what the governor let through. */
  recordScaling(pools: readonly PoolStatus[], proposed: readonly ScaleAction[], governed: readonly ScaleAction[]): void {
    for (const p of pools) {
      const current = p.ready + p.provisioning;
      this.currentReplicas.set({ pool: p.name }, current);
      this.desiredReplicas.set({ pool: p.name }, current + netChange(governed, p.name));
    }
    for (const a of proposed) if (a.kind !== 'hold') this.scaleDecisions.inc({ pool: a.pool, action: a.kind, reason: a.reason });
  }

  constructor(fleet: LiveFleet, queueSize: () => number) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'llmfleet_gateway_requests_total', help: 'Requests answered, by model, tier and HTTP status.', labelNames: ['model', 'tier', 'status'], registers });
    this.ttft = new Histogram({ name: 'llmfleet_gateway_ttft_seconds', help: 'Arrival at the gateway to the first response body byte.', labelNames: ['model', 'tier'], buckets: LATENCY_BUCKETS, registers });
    this.e2e = new Histogram({ name: 'llmfleet_gateway_e2e_seconds', help: 'Arrival at the gateway to the last response byte.', labelNames: ['model', 'tier'], buckets: LATENCY_BUCKETS, registers });
    this.inflight = new Gauge({ name: 'llmfleet_gateway_inflight_requests', help: 'Requests sent to a backend and not finished.', labelNames: ['model'], registers });
    this.decisions = new Counter({ name: 'llmfleet_gateway_routing_decisions_total', help: 'Router decisions by chosen backend and reason code.', labelNames: ['model', 'backend', 'reason'], registers });
    this.retries = new Counter({ name: 'llmfleet_gateway_retries_total', help: 'Requests re-sent after a connection failure before the first byte.', labelNames: ['model'], registers });
    this.rejected = new Counter({ name: 'llmfleet_gateway_rejected_total', help: 'Requests refused at admission (queue full, queue timeout, draining).', labelNames: ['model', 'reason'], registers });
    this.queueDepth = new Gauge({ name: 'llmfleet_gateway_queue_depth', help: 'Requests waiting in the admission queue.', registers, collect() { this.set(queueSize()); } });
    this.currentReplicas = new Gauge({ name: 'llmfleet_autoscaler_current_replicas', help: 'Ready and provisioning instances of the pool at the last autoscaler tick.', labelNames: ['pool'], registers });
    this.desiredReplicas = new Gauge({ name: 'llmfleet_autoscaler_desired_replicas', help: 'Instances the autoscaler wants for the pool after its last tick (the policy, then the governor: bounds, cooldowns, step).', labelNames: ['pool'], registers });
    this.scaleDecisions = new Counter({ name: 'llmfleet_autoscaler_decisions_total', help: "The policy's scaling requests by pool, action (add, remove) and reason code, applied or not.", labelNames: ['pool', 'action', 'reason'], registers });
    const perBackend = (name: string, help: string, value: (b: LiveFleet['instances'][number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['backend', 'model'],
        registers,
        collect() {
          this.reset();
          for (const b of fleet.instances) if (!b.removed) this.set({ backend: b.url, model: b.model }, value(b));
        },
      });
    perBackend('llmfleet_gateway_backend_inflight', 'Gateway requests in flight to the backend.', (b) => b.inflight);
    perBackend('llmfleet_gateway_backend_running', 'vllm:num_requests_running at the last scrape.', (b) => b.scrapedRunning);
    perBackend('llmfleet_gateway_backend_waiting', 'vllm:num_requests_waiting at the last scrape.', (b) => b.scrapedWaiting);
    perBackend('llmfleet_gateway_backend_kv_usage', 'KV-cache usage (0..1) at the last scrape.', (b) => b.scrapedKv);
    perBackend('llmfleet_gateway_backend_up', '1 when the backend is routable (healthy, not ejected, not draining).', (b) => (b.state === 'ready' ? 1 : 0));
    new Counter({
      name: 'llmfleet_gateway_backend_ejections_total',
      help: 'Times the backend was ejected as an outlier.',
      labelNames: ['backend', 'model'],
      registers,
      collect() {
        // A counter read off the fleet (which keeps the count) at scrape time, like the gauges above.
        this.reset();
        for (const b of fleet.instances) if (!b.removed) this.inc({ backend: b.url, model: b.model }, b.ejections);
      },
    });
  }
}
