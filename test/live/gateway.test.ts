import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startEmulator } from '../../src/live/emulator/server.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { startGateway } from '../../src/live/gateway/gateway.ts';
import { MODEL, sleep, startFleet } from './helpers.ts';

/** Streams a chat completion and returns the number of content chunks, or the error it ended with. */
async function streamCount(client: OpenAI, maxTokens: number, onChunk?: (n: number) => void): Promise<{ n: number; err?: Error }> {
  let n = 0;
  try {
    const s = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'tell me more' }], max_tokens: maxTokens, stream: true });
    for await (const c of s) {
      if (c.choices[0]?.delta?.content) {
        n++;
        onChunk?.(n);
      }
    }
    return { n };
  } catch (e) {
    return { n, err: e as Error };
  }
}

describe('gateway over emulators (loopback, openai client)', { timeout: 40_000 }, () => {
  it('serves streaming and non-streaming completions with exact token counts and spreads them round-robin', async () => {
    const f = await startFleet(3);
    try {
      const byBackend = new Map<string, number>();
      const jobs: Promise<void>[] = [];
      for (let i = 0; i < 12; i++) {
        jobs.push(
          (async () => {
            const { data, response } = await f.client.completions.create({ model: MODEL, prompt: 'word '.repeat(40 + i), max_tokens: 8 + i }).withResponse();
            assert.equal(data.usage?.completion_tokens, 8 + i);
            assert.equal(data.usage?.prompt_tokens, Math.ceil((5 * (40 + i)) / 4));
            const b = response.headers.get('x-llmfleet-backend')!;
            byBackend.set(b, (byBackend.get(b) ?? 0) + 1);
          })(),
        );
      }
      await Promise.all(jobs);
      assert.deepEqual([...byBackend.values()], [4, 4, 4]);
      const s = await f.client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 17, stream: true, stream_options: { include_usage: true } });
      let text = 0;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const c of s) {
        if (c.choices[0]?.text) text++;
        if (c.usage) usage = c.usage;
      }
      assert.equal(text, 17);
      assert.equal(usage?.completion_tokens, 17);
      const chat = await streamCount(f.client, 9);
      assert.deepEqual(chat, { n: 9 });
    } finally {
      await f.close();
    }
  });

  it('a client that goes away mid-stream releases its backend slot and is counted as client_closed', async () => {
    const f = await startFleet(1, { timeScale: 2 });
    try {
      const ac = new AbortController();
      let n = 0;
      try {
        const s = await f.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 200, stream: true }, { signal: ac.signal });
        for await (const c of s) if (c.choices[0]?.delta?.content && ++n === 3) ac.abort();
      } catch {
        // the client may or may not raise on its own abort; what matters is the gateway side
      }
      assert.ok(n >= 3 && n < 200, `aborted after ${n} tokens`);
      const b = f.gw.fleet.instances[0]!;
      for (let i = 0; i < 200 && b.inflight > 0; i++) await sleep(5);
      assert.equal(b.inflight, 0);
      assert.equal(b.pendingTokens, 0);
      assert.equal(b.requests().length, 0);
      const m = await f.gw.metrics.requests.get();
      assert.equal(m.values.find((v) => v.labels.status === 'client_closed')?.value, 1);
    } finally {
      await f.close();
    }
  });

  it('answers bad requests with OpenAI-style 4xx JSON errors', async () => {
    const f = await startFleet(1);
    try {
      const post = async (body: string, headers: Record<string, string> = {}) => {
        const r = await fetch(`${f.gw.url}/v1/completions`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
        return { status: r.status, body: (await r.json()) as { error: { message: string; type: string; code: string } } };
      };
      const bad = await post('{not json');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'invalid_json');
      assert.equal((await post(JSON.stringify({ prompt: 'x' }))).body.error.code, 'missing_model');
      // A model that is not a string is named as such ("'model' is required" read as if it were missing).
      const num = await post(JSON.stringify({ model: 5, prompt: 'x' }));
      assert.deepEqual([num.status, num.body.error.code], [400, 'invalid_model']);
      assert.match(num.body.error.message, /^'model' must be a string, got 5; served: /);
      assert.equal((await post(JSON.stringify({ model: 'gpt-9', prompt: 'x' }))).status, 404);
      assert.equal((await post(JSON.stringify({ model: MODEL, prompt: 'x', max_tokens: 0 }))).body.error.code, 'invalid_max_tokens');
      assert.equal((await post(JSON.stringify({ model: MODEL, prompt: 'x' }), { 'x-llmfleet-tier': 'gold' })).body.error.code, 'invalid_tier');
      for (const tier of ['constructor', '__proto__', 'toString']) {
        const r = await post(JSON.stringify({ model: MODEL, prompt: 'x' }), { 'x-llmfleet-tier': tier });
        assert.deepEqual([r.status, r.body.error.code], [400, 'invalid_tier'], tier);
      }
      const tierLabels = new Set((await f.gw.metrics.requests.get()).values.map((v) => v.labels.tier));
      assert.deepEqual([...tierLabels].filter((t) => t !== '' && t !== 'standard'), [], 'no label value for a tier that is not configured');
      const plain = await post(JSON.stringify({ model: MODEL, prompt: 'x' }), { 'content-type': 'text/plain;charset=UTF-8' });
      assert.equal(plain.status, 415);
      assert.equal(plain.body.error.code, 'unsupported_media_type');
      assert.match(plain.body.error.message, /Content-Type must be application\/json, got 'text\/plain;charset=UTF-8'/);
      assert.equal((await post(JSON.stringify({ model: MODEL, prompt: 'x', max_tokens: 1 }), { 'content-type': 'application/json; charset=utf-8' })).status, 200);
      assert.equal((await fetch(`${f.gw.url}/v1/completions`)).status, 405);
      const head = await fetch(`${f.gw.url}/health`, { method: 'HEAD' });
      assert.equal(head.status, 200); // HEAD wherever GET is; it was a 405
      assert.equal(await head.text(), '');
      assert.equal((await fetch(`${f.gw.url}/v2/nothing`)).status, 404);
      await assert.rejects(f.client.completions.create({ model: 'nope', prompt: 'x' }), (e: unknown) => e instanceof OpenAI.NotFoundError);
    } finally {
      await f.close();
    }
  });

  it('a backend killed mid-stream gives its streams a clean error, later requests retry elsewhere, and the pool heals', async () => {
    // Slow clock (2×) so streams are still running when the backend dies; health checks by hand (probe).
    const f = await startFleet(3, { timeScale: 2 }, { health: { intervalS: 60, timeoutS: 0.5, unhealthyAfter: 1, healthyAfter: 1 }, outlier: { consecutiveFailures: 3, ejectionS: 0.3 } });
    try {
      const started: number[] = [0, 0, 0, 0, 0, 0];
      const streams = started.map((_, i) => streamCount(f.client, 120, (n) => (started[i] = n)));
      while (started.some((n) => n < 3)) await sleep(10);
      const dead = f.emus[0]!;
      dead.crash();
      const results = await Promise.all(streams);
      const failed = results.filter((r) => r.err);
      assert.equal(failed.length, 2, 'round-robin put 2 of 6 streams on the killed backend');
      for (const r of failed) {
        assert.ok(r.err instanceof OpenAI.APIError, `expected an APIError, got ${r.err}`);
        assert.match(r.err.message, /backend connection lost/);
        assert.ok(r.n >= 3 && r.n < 120);
      }
      for (const r of results.filter((x) => !x.err)) assert.equal(r.n, 120);
      // Connection refused before the first byte: retried on another backend, never seen by the client.
      for (let i = 0; i < 6; i++) {
        const r = await f.client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2 });
        assert.equal(r.usage?.completion_tokens, 2);
      }
      const retries = await f.gw.metrics.retries.get();
      assert.ok((retries.values[0]?.value ?? 0) >= 1, 'at least one request was retried');
      const exposition = await f.gw.metrics.registry.metrics();
      assert.match(exposition, /# TYPE llmfleet_gateway_backend_ejections_total counter/);
      const ejected = f.gw.fleet.instances[0]!.ejections;
      assert.ok(exposition.includes(`llmfleet_gateway_backend_ejections_total{backend="${dead.url}",model="${MODEL}"} ${ejected}`), `ejections of ${dead.url} (${ejected}) exported`);
      assert.equal(f.gw.fleet.instances[0]!.state, 'provisioning');
      // Same port comes back: the next health round makes it routable again and it gets traffic.
      f.emus[0] = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20, port: dead.port });
      await sleep(350); // past the outlier ejection
      await f.gw.probe();
      assert.equal(f.gw.fleet.instances[0]!.state, 'ready');
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const { response } = await f.client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2 }).withResponse();
        seen.add(response.headers.get('x-llmfleet-backend')!);
      }
      assert.ok(seen.has(dead.url), 'the healed backend receives requests again');
    } finally {
      await f.close();
    }
  });

  it('answers 503 at once when every backend of the model is down, and after the queue timeout while one is still starting', async () => {
    const f = await startFleet(1, {}, { health: { intervalS: 60, timeoutS: 0.5, unhealthyAfter: 1, healthyAfter: 1, startupGraceS: 300 } });
    const post = () => fetch(`${f.gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'x', max_tokens: 2 }) });
    try {
      await f.emus[0]!.close(); // was healthy, now refuses connections
      const t0 = performance.now();
      const r = await post();
      assert.equal(r.status, 503);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'no_backend_available');
      assert.ok(performance.now() - t0 < 1000, `answered after ${(performance.now() - t0).toFixed(0)} ms`);
      const health = (await (await fetch(`${f.gw.url}/health`)).json()) as { backends: { health: string }[] };
      assert.equal(health.backends[0]!.health, 'down');
      const counted = (await f.gw.metrics.requests.get()).values.find((v) => v.labels.status === '503');
      assert.equal(counted?.value, 1);
    } finally {
      await f.close();
    }
    // A backend that has never answered a health check, within its startup grace: the request waits for it,
    // and the queue timeout is an outage (503), not a rate limit (429).
    const cfg = (graceS: number) => gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: ['http://127.0.0.1:9'] }], health: { intervalS: 60, startupGraceS: graceS }, admission: { queueTimeoutS: 0.3 } });
    for (const [graceS, code, minMs] of [[300, 'no_backend_ready', 250], [0, 'no_backend_available', 0]] as const) {
      const gw = await startGateway(cfg(graceS));
      try {
        const t0 = performance.now();
        const r = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'x' }) });
        assert.equal(r.status, 503);
        assert.equal(((await r.json()) as { error: { code: string } }).error.code, code);
        assert.ok(performance.now() - t0 >= minMs);
      } finally {
        await gw.close();
      }
    }
  });

  it('replaces a backend 5xx without a JSON body by its own 502 JSON error, counts its own 4xx, and names allowed methods', async () => {
    const html = createServer((req, res) => {
      if (req.url === '/health') return res.writeHead(200).end();
      res.writeHead(500, { 'content-type': 'text/html' }).end('<html>Internal Server Error</html>');
    });
    await new Promise<void>((r) => html.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [url] }], outlier: { consecutiveFailures: 100 } }));
    try {
      const r = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'x' }) });
      assert.equal(r.status, 502);
      const body = (await r.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'backend_error');
      assert.match(body.error.message, /answered 500 without a JSON error body/);
      const bad = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'x', temperature: 'hot' }) });
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { error: { param: string } }).error.param, 'temperature');
      const wrong = await fetch(`${gw.url}/v1/completions`);
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.get('allow'), 'POST');
      const byStatus = new Map((await gw.metrics.requests.get()).values.map((v) => [v.labels.status, v.value]));
      assert.deepEqual([byStatus.get('502'), byStatus.get('400'), byStatus.get('405')], [1, 1, 1]);
    } finally {
      await gw.close();
      html.close();
    }
  });

  it('a stalled backend ends streams with an error event after the idle timeout and non-streams with 504 at requestS, and is not ejected for it', async () => {
    // One failure would eject: timeouts must not count as failures.
    const f = await startFleet(1, { stallAfterTokens: 3 }, { timeouts: { requestS: 2, firstByteS: 0.5, idleS: 0.4 }, outlier: { consecutiveFailures: 1, ejectionS: 60 } });
    try {
      const r = await streamCount(f.client, 50);
      assert.ok(r.err instanceof OpenAI.APIError);
      assert.match(r.err.message, /backend sent nothing for 0.4s/);
      assert.equal(r.n, 3);
      // A non-streaming answer comes whole (headers last): firstByteS does not apply, requestS does.
      await assert.rejects(f.client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 50 }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 504 && /request exceeded 2s/.test(e.message));
      const b = f.gw.fleet.instances[0]!;
      assert.deepEqual([b.ejections, b.consecutiveFailures, b.state], [0, 0, 'ready'], 'a timeout is no mark against the backend');
    } finally {
      await f.close();
    }
  });

  it('serves slow but healthy requests: a non-streaming answer longer than firstByteS, a chat stream whose first token takes longer than idleS', async () => {
    // At time scale 0.25 an 8,000-token prefill takes ≈ 1 s wall (> idleS) and 80 tokens ≥ 80 × 10 ms × 4 ≈ 3.3 s (> firstByteS):
    // lower bounds, since an emulator's tokens are never early. Each token of the stream then follows within ≈ 40 ms.
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 0.25 });
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [emu.url] }], timeouts: { requestS: 60, firstByteS: 3, idleS: 0.6 }, outlier: { consecutiveFailures: 1 } }));
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
      const whole = client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 80 });
      let n = 0;
      const s = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(32_000) }], max_tokens: 4, stream: true });
      for await (const c of s) if (c.choices[0]?.delta?.content) n++;
      assert.equal(n, 4);
      assert.equal((await whole).usage?.completion_tokens, 80);
      assert.ok(emu.backend.finished.some((r) => r.inputTokens > 8000 && r.firstTokenS - r.arrivalS > 0.6 * 0.25), 'the stream waited longer than idleS for its first token');
      assert.deepEqual([gw.fleet.instances[0]!.ejections, gw.fleet.instances[0]!.state], [0, 'ready']);
    } finally {
      await gw.close();
      await emu.close();
    }
  });

  it('a stream whose backend never sends a token ends with backend_timeout after firstByteS, with no TTFT observed', async () => {
    const f = await startFleet(1, { stallAfterTokens: 0 }, { timeouts: { requestS: 30, firstByteS: 0.5, idleS: 0.2 }, outlier: { consecutiveFailures: 1, ejectionS: 60 } });
    try {
      const r = await streamCount(f.client, 5);
      assert.ok(r.err instanceof OpenAI.APIError, String(r.err));
      assert.match(r.err.message, /backend sent no token within 0.5s/);
      assert.equal(r.n, 0);
      const ttft = (await f.gw.metrics.ttft.get()).values.find((v) => v.metricName === 'llmfleet_gateway_ttft_seconds_count');
      assert.equal(ttft?.value ?? 0, 0, 'TTFT is the first token, not a chunk sent before prefill');
      assert.deepEqual([f.gw.fleet.instances[0]!.ejections, f.gw.fleet.instances[0]!.state], [0, 'ready']);
    } finally {
      await f.close();
    }
  });

  it('times out a request still waiting for a backend connection with 504 and frees its slot', async () => {
    // One connection to a backend that never answers: the second request waits inside undici's pool, so its
    // timeout must cancel an attempt that has not started yet.
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20, stallAfterTokens: 1 });
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [emu.url], connections: 1 }], timeouts: { requestS: 0.4 } }));
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
      const t0 = performance.now();
      const statuses = await Promise.all(
        [0, 1].map(() => client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 20 }).then(() => 200, (e: unknown) => (e instanceof OpenAI.APIError ? e.status : -1))),
      );
      assert.deepEqual(statuses, [504, 504]);
      assert.ok(performance.now() - t0 < 2000, `answered after ${(performance.now() - t0).toFixed(0)} ms`);
      const b = gw.fleet.instances[0]!;
      for (let i = 0; i < 100 && b.inflight > 0; i++) await sleep(5);
      assert.equal(b.inflight, 0);
      assert.equal(b.pendingTokens, 0);
    } finally {
      await gw.close();
      await emu.close();
    }
  });

  it('under overload refuses with 429 + Retry-After and loses no accepted request', async () => {
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 2 });
    const gw = await startGateway(
      gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [emu.url], maxInflightPerBackend: 2 }], admission: { maxQueue: 3, queueTimeoutS: 20, retryAfterS: 2 } }),
    );
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () =>
          client.completions
            .create({ model: MODEL, prompt: 'y'.repeat(100), max_tokens: 30 })
            .withResponse()
            .then(
              (r) => ({ ok: r.data.usage?.completion_tokens === 30, status: 200, retryAfter: null as string | null }),
              (e: unknown) => ({ ok: false, status: e instanceof OpenAI.APIError ? (e.status ?? -1) : -1, retryAfter: e instanceof OpenAI.APIError ? (e.headers?.get('retry-after') ?? null) : null }),
            ),
        ),
      );
      const ok = outcomes.filter((o) => o.status === 200);
      const limited = outcomes.filter((o) => o.status === 429);
      assert.equal(ok.length + limited.length, 20, `every request is served or refused: ${JSON.stringify(outcomes.map((o) => o.status))}`);
      assert.equal(ok.length, 5, '2 in flight + 3 queued are accepted');
      assert.ok(ok.every((o) => o.ok), 'accepted requests complete with all their tokens');
      assert.ok(limited.every((o) => o.retryAfter === '2'));
    } finally {
      await gw.close();
      await emu.close();
    }
  });

  it('serves a premium request from the queue before earlier batch ones', async () => {
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 5 });
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [emu.url], maxInflightPerBackend: 1 }] }));
    try {
      const order: string[] = [];
      const send = (tier: string, tag: string, maxTokens = 5) =>
        fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-llmfleet-tier': tier }, body: JSON.stringify({ model: MODEL, prompt: 'p', max_tokens: maxTokens }) }).then(async (r) => {
          assert.equal(r.status, 200);
          await r.arrayBuffer();
          order.push(tag);
        });
      const until = async (cond: () => boolean) => {
        while (!cond()) await sleep(2);
      };
      const jobs = [send('standard', 'first', 300)]; // ~0.9 s wall: everything else queues behind it
      await until(() => gw.fleet.instances[0]!.inflight === 1);
      jobs.push(send('batch', 'batch1'));
      await until(() => gw.queued === 1);
      jobs.push(send('batch', 'batch2'));
      await until(() => gw.queued === 2);
      jobs.push(send('premium', 'premium'));
      await Promise.all(jobs);
      assert.deepEqual(order, ['first', 'premium', 'batch1', 'batch2']);
    } finally {
      await gw.close();
      await emu.close();
    }
  });

  it('draining one backend lets its streams finish while new requests go to the others', async () => {
    const f = await startFleet(2, { timeScale: 4 });
    try {
      const started = [0, 0];
      const streams = started.map((_, i) => streamCount(f.client, 60, (n) => (started[i] = n)));
      while (started.some((n) => n < 1)) await sleep(5);
      assert.equal(f.gw.fleet.instances[0]!.inflight, 1);
      let drained = false;
      const draining = f.gw.drainBackend(0).then(() => (drained = true));
      for (let i = 0; i < 3; i++) {
        const { response } = await f.client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2 }).withResponse();
        assert.equal(response.headers.get('x-llmfleet-backend'), f.emus[1]!.url);
      }
      assert.equal(drained, false, 'still streaming');
      assert.deepEqual(await Promise.all(streams), [{ n: 60 }, { n: 60 }]);
      await draining;
      assert.equal(f.gw.fleet.instances[0]!.state, 'stopped');
    } finally {
      await f.close();
    }
  });

  it('shutdown returns once the last queued request has left, by queue timeout or by its client going away', async () => {
    // A backend that never becomes healthy, within its startup grace: requests wait in the queue for it.
    const cfg = (queueTimeoutS: number) => gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: ['http://127.0.0.1:9'] }], health: { intervalS: 60 }, admission: { queueTimeoutS }, drainTimeoutS: 120 });
    const post = (gw: { url: string }, signal?: AbortSignal) => fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'x' }), signal });
    /** close(), or 'stuck' if it has not returned long after its queue emptied (drainTimeoutS is 120 s). */
    let closing: Promise<void> | undefined;
    const closeOrStuck = (gw: { close(): Promise<void> }) => {
      let t: NodeJS.Timeout | undefined;
      closing = gw.close();
      return Promise.race([closing.then(() => 'closed'), new Promise<string>((r) => (t = setTimeout(() => r('stuck'), 15_000)))]).finally(() => clearTimeout(t));
    };
    const a = await startGateway(cfg(0.3));
    try {
      const r = post(a);
      while (a.queued === 0) await sleep(5);
      const closed = closeOrStuck(a);
      assert.equal((await r).status, 503);
      assert.equal(await closed, 'closed');
    } finally {
      await (closing ?? a.close());
    }
    closing = undefined;
    const b = await startGateway(cfg(60));
    try {
      const ac = new AbortController();
      const r = post(b, ac.signal).catch(() => 'aborted');
      while (b.queued === 0) await sleep(5);
      const closed = closeOrStuck(b);
      ac.abort();
      assert.equal(await r, 'aborted');
      assert.equal(await closed, 'closed');
      assert.equal(b.queued, 0);
    } finally {
      await (closing ?? b.close());
    }
  });

  it('drains in-flight streams on shutdown and refuses new connections', async () => {
    const f = await startFleet(2, { timeScale: 4 });
    try {
      const started = [0, 0, 0];
      const streams = started.map((_, i) => streamCount(f.client, 60, (n) => (started[i] = n)));
      while (started.some((n) => n < 1)) await sleep(5);
      const closing = f.gw.close();
      const results = await Promise.all(streams);
      await closing;
      assert.deepEqual(results, [{ n: 60 }, { n: 60 }, { n: 60 }]);
      await assert.rejects(fetch(`${f.gw.url}/v1/models`));
    } finally {
      await f.close();
    }
  });
});
