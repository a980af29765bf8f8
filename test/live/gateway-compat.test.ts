import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatTokens, completionFields, type FieldError } from '../../src/live/openai-request.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { startGateway } from '../../src/live/gateway/gateway.ts';
import { LiveFleet } from '../../src/live/gateway/live-fleet.ts';
import { parseCompletion, type BadRequest, type ParsedRequest } from '../../src/live/gateway/parse-request.ts';
import { MODEL } from './helpers.ts';

/** What vLLM 0.11 with `--data-parallel-size 2` exports (PrometheusStatLogger: one series per engine). */
function dpScrape(kv: [number, number], blocks: [number, number] | null, kvName = 'vllm:kv_cache_usage_perc'): string {
  const m = 'model_name="meta-llama/Llama-3.1-8B-Instruct"';
  const lines = [
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running{engine="0",${m}} 3.0`,
    `vllm:num_requests_running{engine="1",${m}} 4.0`,
    `vllm:num_requests_waiting{engine="0",${m}} 0.0`,
    `vllm:num_requests_waiting{engine="1",${m}} 1.0`,
    `${kvName}{engine="0",${m}} ${kv[0]}`,
    `${kvName}{engine="1",${m}} ${kv[1]}`,
  ];
  if (blocks) {
    lines.push(`vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",num_gpu_blocks="${blocks[0]}",enable_prefix_caching="True"} 1.0`);
    lines.push(`vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="1",num_gpu_blocks="${blocks[1]}",enable_prefix_caching="True"} 1.0`);
  }
  return lines.join('\n') + '\n';
}

const JSON_CT = { 'content-type': 'application/json' };
const TIERS = { default: 'standard', priorities: { premium: 0, standard: 1 } };

describe('live gateway: vLLM compatibility', () => {
  it('reads a data-parallel backend: running/waiting summed, KV capacity summed over engines, KV usage averaged by capacity', () => {
    const fleet = new LiveFleet();
    const b = fleet.add('http://dp', 'm', '', 10);
    b.applyScrape(dpScrape([0.6, 0.7], [1000, 1000]), 1);
    assert.deepEqual([b.scrapedRunning, b.scrapedWaiting], [7, 1]);
    assert.ok(Math.abs(b.kvUsedFraction - 0.65) < 1e-12, `kv ${b.kvUsedFraction}`);
    assert.equal(b.kvCapacityTokens, 32_000);
    // Unequal engines: weighted by capacity, (0.6·16000 + 0.2·48000) / 64000 = 0.3.
    b.applyScrape(dpScrape([0.6, 0.2], [1000, 3000]), 2);
    assert.ok(Math.abs(b.kvUsedFraction - 0.3) < 1e-12, `kv ${b.kvUsedFraction}`);
    assert.equal(b.kvCapacityTokens, 64_000);
    // No cache_config_info (or the v0 name): a plain mean, the last known capacity kept.
    b.applyScrape(dpScrape([0.2, 0.4], null, 'vllm:gpu_cache_usage_perc'), 3);
    assert.ok(Math.abs(b.kvUsedFraction - 0.3) < 1e-12, `kv ${b.kvUsedFraction}`);
    assert.equal(b.kvCapacityTokens, 64_000);
    // The same engine's info line twice counts once.
    const twice = dpScrape([0.5, 0.5], [1000, 1000]).replace(/^(vllm:cache_config_info.*engine="1".*)$/m, '$1\n$1');
    b.applyScrape(twice, 4);
    assert.equal(b.kvCapacityTokens, 32_000);
    // One engine (vLLM's engine="0" label, or none): exactly as before.
    const one = new LiveFleet().add('http://one', 'm', '', 10);
    one.applyScrape('vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.37\nvllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="1000"} 1\nvllm:num_requests_running{engine="0",model_name="m"} 2\n', 1);
    assert.deepEqual([one.kvUsedFraction, one.kvCapacityTokens, one.scrapedRunning], [0.37, 16_000, 2]);
  });

  it('accepts any non-empty chat role (ipython, Llama 3.1 tool results) and plain-string content parts, as vLLM does', () => {
    assert.equal(chatTokens([{ role: 'ipython', content: 'abcd' }]), 3 + 4 + 1);
    assert.equal(chatTokens([{ role: 'user', content: ['abcd'] }]), 3 + 4 + 1);
    assert.equal(chatTokens([{ role: 'user', content: ['abcd', { type: 'text', text: 'efgh' }, { type: 'image_url', image_url: { url: 'x' } }] }]), 3 + 4 + 2);
    const p = parseCompletion(Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'ipython', content: ['hello'] }], max_tokens: 5 })), true, JSON_CT, new Set(['m']), TIERS) as ParsedRequest;
    assert.deepEqual([p.model, p.maxTokens], ['m', 5]);
    const bad = (messages: unknown) => completionFields({ messages }, true, 16) as FieldError;
    assert.equal(bad([{ role: '', content: 'x' }]).param, 'messages[0].role');
    assert.match(bad([{ role: 5, content: 'x' }]).message, /non-empty string/);
    assert.equal(bad([{ role: 'user', content: [5] }]).param, 'messages[0].content[0]');
    assert.equal(bad([{ role: 'user', content: [{ text: 'x' }] }]).param, 'messages[0].content[0]');
    assert.equal(bad([{ role: 'ipython' }]).param, 'messages[0].content');
  });

  it('predicts chatDefaultOutputTokens (default 256) for a chat without a limit, 16 for /v1/completions; min_tokens is unbounded on such a chat', () => {
    const models = new Set(['m']);
    const parse = (body: Record<string, unknown>, chat: boolean, dflt?: number) => parseCompletion(Buffer.from(JSON.stringify({ model: 'm', ...body })), chat, JSON_CT, models, TIERS, dflt);
    const chat = { messages: [{ role: 'user', content: 'hi' }] };
    assert.equal((parse(chat, true) as ParsedRequest).maxTokens, 256);
    assert.equal((parse(chat, true, 1000) as ParsedRequest).maxTokens, 1000);
    assert.equal((parse({ ...chat, max_tokens: null }, true) as ParsedRequest).maxTokens, 256);
    assert.equal((parse({ ...chat, max_completion_tokens: 7 }, true) as ParsedRequest).maxTokens, 7);
    assert.equal((parse({ ...chat, min_tokens: 300 }, true) as ParsedRequest).maxTokens, 300, 'at least min_tokens are generated');
    assert.equal((parse({ ...chat, max_tokens: 10, min_tokens: 11 }, true) as BadRequest).param, 'min_tokens');
    assert.equal((parse({ prompt: 'hi' }, false) as ParsedRequest).maxTokens, 16);
    assert.equal((parse({ prompt: 'hi', min_tokens: 17 }, false) as BadRequest).param, 'min_tokens', 'vLLM refuses min_tokens > its default 16');
    assert.equal(gatewayConfigSchema.parse({ pools: [{ model: 'm' }] }).chatDefaultOutputTokens, 256);
    assert.equal(gatewayConfigSchema.safeParse({ pools: [{ model: 'm' }], chatDefaultOutputTokens: 0 }).success, false);
  });

  it('forwards end-to-end request headers (x-request-id, traceparent, the DP rank, …) and no hop-by-hop ones; uses chatDefaultOutputTokens', { timeout: 20_000 }, async () => {
    const seen: IncomingHttpHeaders[] = [];
    const fake = createServer((req, res) => {
      if (req.url === '/health') return res.writeHead(200).end();
      if (req.url === '/metrics') return res.writeHead(200, { 'content-type': 'text/plain' }).end('');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ ...req.headers, 'x-body-bytes': String(Buffer.concat(chunks).length) });
        res.writeHead(200, JSON_CT).end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [], usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } }));
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const backend = `127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [`http://${backend}`] }], chatDefaultOutputTokens: 64, outlier: { consecutiveFailures: 100 } }));
    const send = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
        const r = request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        r.on('error', reject);
        r.end(body);
      });
    try {
      const status = await send({
        authorization: 'Bearer k',
        'x-request-id': 'req-42',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'vendor=1',
        'x-data-parallel-rank': '1',
        'x-llmfleet-tier': 'premium',
        'x-custom': 'kept',
        connection: 'keep-alive, x-hop',
        'x-hop': 'dropped',
        'keep-alive': 'timeout=5',
        'proxy-authorization': 'Basic cHJveHk=',
        te: 'trailers',
      });
      assert.equal(status, 200);
      const h = seen[0]!;
      assert.deepEqual(
        [h['x-request-id'], h.traceparent, h.tracestate, h['x-data-parallel-rank'], h.authorization, h['x-llmfleet-tier'], h['x-custom'], h['content-type']],
        ['req-42', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=1', '1', 'Bearer k', 'premium', 'kept', 'application/json; charset=utf-8'],
      );
      for (const k of ['x-hop', 'keep-alive', 'proxy-authorization', 'te']) assert.equal(h[k], undefined, k);
      assert.equal(h.host, backend);
      assert.equal(h['content-length'], h['x-body-bytes']);
      // A client's `Expect: 100-continue` was answered by the gateway; forwarding it would fail the request.
      assert.equal(await send({ expect: '100-continue', 'x-request-id': 'req-43' }), 200);
      assert.equal(seen[1]!['x-request-id'], 'req-43');
      assert.equal(seen[1]!.expect, undefined);
      const arrivals = gw.takeArrivals();
      assert.deepEqual(
        arrivals.map((a) => [a.tier, a.requests, a.predictedOutputTokens]),
        [
          ['premium', 1, 64],
          ['standard', 1, 64],
        ],
      );
    } finally {
      await gw.close();
      fake.close();
    }
  });
});
