import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { MODEL, sleep, startFleet } from './helpers.ts';

/** The prometheus binary: $PROMETHEUS_BIN, else the first `prometheus` on PATH. Never skipped: absent ⇒ fail. */
function findPrometheus(): string {
  const candidates = process.env.PROMETHEUS_BIN ? [process.env.PROMETHEUS_BIN] : (process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'prometheus'));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  assert.fail('the prometheus binary is not installed (Debian package `prometheus`): run .ci/live-deps.sh, or set PROMETHEUS_BIN');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('a real Prometheus server scraping the gateway', { timeout: 30_000 }, () => {
  it('reads the gateway request counter back through the Prometheus HTTP API', async () => {
    const bin = findPrometheus();
    const f = await startFleet(2);
    const dir = mkdtempSync(join(tmpdir(), 'llmfleet-prom-'));
    const port = await freePort();
    const target = f.gw.url.replace('http://', '');
    writeFileSync(join(dir, 'prometheus.yml'), `global:\n  scrape_interval: 500ms\n  evaluation_interval: 10s\nscrape_configs:\n  - job_name: llmfleet-gateway\n    static_configs:\n      - targets: ['${target}']\n`);
    const prom = spawn(bin, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    prom.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      for (let i = 0; i < 7; i++) await f.client.completions.create({ model: MODEL, prompt: 'count me', max_tokens: 3 });
      const query = `sum(llmfleet_gateway_requests_total{model="${MODEL}",status="200"})`;
      let value = NaN;
      const deadline = performance.now() + 20_000;
      while (performance.now() < deadline) {
        assert.equal(prom.exitCode, null, `prometheus exited early: ${stderr}`);
        try {
          const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(query)}`);
          if (r.ok) {
            const j = (await r.json()) as { status: string; data: { result: { value: [number, string] }[] } };
            if (j.status === 'success' && j.data.result.length > 0) {
              value = Number(j.data.result[0]!.value[1]);
              if (value === 7) break;
            }
          }
        } catch {
          // not listening yet
        }
        await sleep(200);
      }
      assert.equal(value, 7, `Prometheus never reported the 7 requests (last value ${value}); stderr: ${stderr.slice(-500)}`);
    } finally {
      prom.kill('SIGTERM');
      await new Promise((r) => (prom.exitCode !== null ? r(null) : prom.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
      await f.close();
    }
  });
});
