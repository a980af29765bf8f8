import { Client } from 'undici';
import type { LiveClock } from '../clock.ts';
import type { GatewayConfig } from './config.ts';
import type { LiveBackend, LiveFleet } from './live-fleet.ts';

/**
 * Active health checks (`GET /health`) and metric scrapes (`GET /metrics`) of every backend, each on its own
 * small undici client so that long streams on the proxy pool can never starve them. One round of each kind
 * runs at a time; `fresh()` waits for a running round and then runs a new one (a probe started after the call).
 */
export class BackendMonitor {
  private readonly clients = new Map<number, Client>();
  private healthRun: Promise<void> | null = null;
  private scrapeRun: Promise<void> | null = null;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly fleet: LiveFleet,
    private readonly cfg: Pick<GatewayConfig, 'health' | 'scrapeIntervalS'>,
    private readonly clock: LiveClock,
    /** Called after every health round (the gateway recomputes routability and retries its queue). */
    private readonly afterHealth: () => void,
  ) {}

  add(b: LiveBackend): void {
    const ms = this.cfg.health.timeoutS * 1000;
    this.clients.set(b.id, new Client(b.url, { pipelining: 1, headersTimeout: ms, bodyTimeout: ms }));
  }

  remove(id: number): void {
    void this.clients.get(id)?.close();
    this.clients.delete(id);
  }

  start(): void {
    this.timers.push(setInterval(() => void this.healthRound(), this.cfg.health.intervalS * 1000));
    this.timers.push(setInterval(() => void this.scrapeRound(), this.cfg.scrapeIntervalS * 1000));
    for (const t of this.timers) t.unref();
  }

  async stop(): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    await Promise.all([...this.clients.values()].map((c) => c.destroy()));
    this.clients.clear();
  }

  healthRound(): Promise<void> {
    if (this.healthRun) return this.healthRun;
    this.healthRun = Promise.all(this.live().map((b) => this.check(b))).then(() => {
      this.healthRun = null;
      this.afterHealth();
    });
    return this.healthRun;
  }

  scrapeRound(): Promise<void> {
    if (this.scrapeRun) return this.scrapeRun;
    this.scrapeRun = Promise.all(this.live().filter((b) => b.healthy).map((b) => this.scrape(b))).then(() => {
      this.scrapeRun = null;
    });
    return this.scrapeRun;
  }

  /** Scrapes these backends now (a backend just become ready: its KV capacity is unknown until its first scrape). */
  scrapeNow(backends: readonly LiveBackend[]): Promise<void> {
    return Promise.all(backends.map((b) => this.scrape(b))).then(() => {});
  }

  async fresh(): Promise<void> {
    if (this.healthRun) await this.healthRun;
    await this.healthRound();
    if (this.scrapeRun) await this.scrapeRun;
    await this.scrapeRound();
  }

  private live(): LiveBackend[] {
    return this.fleet.instances.filter((b) => !b.removed && this.clients.has(b.id));
  }

  private async check(b: LiveBackend): Promise<void> {
    const h = this.cfg.health;
    let ok = false;
    try {
      const r = await this.clients.get(b.id)!.request({ path: '/health', method: 'GET', signal: AbortSignal.timeout(h.timeoutS * 1000) });
      await r.body.dump();
      ok = r.statusCode === 200;
    } catch {
      ok = false;
    }
    if (ok) {
      b.failStreak = 0;
      b.healthStreak++;
      if (!b.healthy && b.healthStreak >= h.healthyAfter) b.healthy = b.wasHealthy = true;
    } else {
      b.healthStreak = 0;
      b.failStreak++;
      if (b.failStreak >= h.unhealthyAfter) b.healthy = false;
    }
  }

  private async scrape(b: LiveBackend): Promise<void> {
    try {
      const r = await this.clients.get(b.id)!.request({ path: '/metrics', method: 'GET', signal: AbortSignal.timeout(this.cfg.health.timeoutS * 1000) });
      const text = await r.body.text();
      if (r.statusCode === 200) b.applyScrape(text, this.clock.nowS());
    } catch {
      // a failed scrape keeps the last values; health checks decide routability
    }
  }
}
