import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startEmulator, type Emulator } from '../../src/live/emulator/server.ts';
import { parsePromText, sumOf } from '../../src/live/prom-text.ts';
import { chatTokens, promptTokens } from '../../src/live/openai-request.ts';
import { MODEL, sleep } from './helpers.ts';

const post = (e: Emulator, path: string, body: unknown) => fetch(`${e.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((x) => x.startsWith('data: '))
    .map((x) => x.slice(6));
}

describe('emulator (vLLM-compatible server on a modelled GPU)', { timeout: 20_000 }, () => {
  it('counts prompt tokens from text (⌈bytes/4⌉), exactly from token ids, and per chat message', () => {
    assert.equal(promptTokens('abcdefgh'), 2);
    assert.equal(promptTokens('abcdefghi'), 3);
    assert.equal(promptTokens([5, 6, 7]), 3);
    assert.equal(promptTokens(['abcd']), 1);
    // Ids that cannot exist (1e300 passed as an integer, as did -0.0) are the client's error, param 'prompt'.
    for (const ids of [[1e300], [5e20, 1], [-0], [2 ** 31]]) assert.equal((promptTokens(ids) as { param: string }).param, 'prompt', JSON.stringify(ids));
    assert.equal(promptTokens([0, 2 ** 31 - 1]), 2);
    assert.equal(chatTokens([{ role: 'user', content: 'abcd' }]), 3 + 4 + 1);
    assert.equal(chatTokens([{ role: 'user', content: [{ type: 'text', text: 'abcd' }, { type: 'image_url', image_url: { url: 'x' } }] }]), 3 + 4 + 1);
    assert.equal(chatTokens([{ role: 'assistant' }]), 3 + 4);
  });

  it('streams one SSE chunk per token (the last one with finish_reason, no empty chunk after it), then usage when asked, then [DONE]', async () => {
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20 });
    try {
      const r = await post(e, '/v1/completions', { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 7, stream: true, stream_options: { include_usage: true } });
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      const ev = sseEvents(await r.text());
      assert.equal(ev.at(-1), '[DONE]');
      const chunks = ev.slice(0, -1).map((x) => JSON.parse(x) as { object: string; choices: { text: string; finish_reason: string | null }[]; usage?: { prompt_tokens: number; completion_tokens: number } });
      // 7 token chunks and the usage chunk: vLLM puts finish_reason on the last token's chunk, with no empty one after it.
      assert.equal(chunks.length, 8);
      assert.ok(chunks.slice(0, 7).every((c) => c.choices[0]!.text !== ''));
      assert.deepEqual(chunks.slice(0, 7).map((c) => c.choices[0]!.finish_reason), [null, null, null, null, null, null, 'length']);
      assert.deepEqual(chunks.at(-1)!.choices, []);
      assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
      assert.ok(chunks.every((c) => c.object === 'text_completion'));

      const plain = await post(e, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'abcd' }], max_tokens: 4, stream: true });
      const chat = sseEvents(await plain.text()).slice(0, -1).map((x) => JSON.parse(x) as { object: string; usage?: unknown; choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[] });
      // The role chunk, then 4 token chunks, the last with finish_reason; no usage (not asked), no empty chunk.
      assert.equal(chat.length, 5);
      assert.deepEqual(chat.map((c) => [c.choices[0]!.delta.content !== '', c.choices[0]!.finish_reason]), [[false, null], [true, null], [true, null], [true, null], [true, 'length']]);
      assert.ok(chat.every((c) => c.usage === undefined && c.object === 'chat.completion.chunk'));

      const whole = (await (await post(e, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'abcd' }], max_tokens: 3 })).json()) as { usage: { prompt_tokens: number; completion_tokens: number }; choices: { message: { content: string } }[] };
      assert.deepEqual([whole.usage.prompt_tokens, whole.usage.completion_tokens], [8, 3]);
      assert.equal(whole.choices[0]!.message.content, ' the model says');
    } finally {
      await e.close();
    }
  });

  it('sends stream headers at once and a chat stream\'s first chunk (the role) only with the first token, as vLLM does', async () => {
    // stallAfterTokens 0: the engine runs the request but no token is ever sent, so what arrives is only what is sent before output.
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20, stallAfterTokens: 0 });
    const acs: AbortController[] = [];
    try {
      const open = async (path: string, body: Record<string, unknown>) => {
        const ac = new AbortController();
        acs.push(ac);
        let t: NodeJS.Timeout | undefined;
        const r = await Promise.race([
          fetch(`${e.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, max_tokens: 2, stream: true, ...body }), signal: ac.signal }),
          new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`no response headers from ${path} within 10 s`)), 10_000))),
        ]).finally(() => clearTimeout(t));
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), 'text/event-stream');
        let got = '';
        const reader = r.body!.getReader();
        void (async () => {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            got += Buffer.from(value).toString('utf8');
          }
        })().catch(() => {});
        return () => got;
      };
      const completion = await open('/v1/completions', { prompt: 'x' });
      const chat = await open('/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] });
      for (let i = 0; i < 500 && e.backend.requestsFinished < 2; i++) await sleep(10);
      assert.equal(e.backend.requestsFinished, 2, 'the engine generated both outputs');
      await sleep(50);
      assert.equal(completion(), '');
      assert.equal(chat(), '', 'no role chunk before the first token');
    } finally {
      for (const ac of acs) ac.abort();
      await e.close();
    }
    // With output, the role chunk comes first, in the same write as the first token.
    const n = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20 });
    try {
      const ev = sseEvents(await (await post(n, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 2, stream: true })).text());
      const deltas = ev.slice(0, -1).map((x) => (JSON.parse(x) as { choices: { delta: Record<string, unknown> }[] }).choices[0]!.delta);
      assert.deepEqual(deltas.slice(0, 2), [{ role: 'assistant', content: '' }, { content: ' the' }]);
    } finally {
      await n.close();
    }
  });

  it('bounds a chat without max_tokens by the context left after the prompt (max_model_len − prompt), as vLLM, and stops it at its emulated EOS; completions keep 16', async () => {
    await assert.rejects(startEmulator({ model: MODEL, hardware: 'h100-80gb', maxModelLen: 200_000 }), /--max-model-len: expected an integer in \[1, 131072\]/);
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 50, maxModelLen: 64 });
    try {
      const models = (await (await fetch(`${e.url}/v1/models`)).json()) as { data: { max_model_len: number }[] };
      assert.equal(models.data[0]!.max_model_len, 64);
      const messages = [{ role: 'user', content: 'abcd' }]; // 8 prompt tokens
      const usage = async (path: string, body: Record<string, unknown>) => {
        const r = await post(e, path, { model: MODEL, ...body });
        assert.equal(r.status, 200);
        return ((await r.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
      };
      assert.deepEqual(await usage('/v1/chat/completions', { messages }), { prompt_tokens: 8, completion_tokens: 56, total_tokens: 64 });
      assert.equal((await usage('/v1/chat/completions', { messages, max_tokens: null, min_tokens: 56 })).completion_tokens, 56, 'min_tokens up to the context left');
      assert.equal((await usage('/v1/chat/completions', { messages, max_completion_tokens: 5 })).completion_tokens, 5);
      assert.equal((await usage('/v1/completions', { prompt: [1, 2, 3] })).completion_tokens, 16);
      // A streamed one ends with finish_reason on its 56th token.
      const ev = sseEvents(await (await post(e, '/v1/chat/completions', { model: MODEL, messages, stream: true })).text());
      const tokens = ev.slice(0, -1).map((x) => JSON.parse(x) as { choices: { delta: { content?: string }; finish_reason: string | null }[] }).filter((c) => c.choices[0]!.delta.content);
      assert.equal(tokens.length, 56);
      assert.equal(tokens.at(-1)!.choices[0]!.finish_reason, 'length');

      const over = await post(e, '/v1/chat/completions', { model: MODEL, messages, min_tokens: 57 });
      assert.equal(over.status, 400);
      const err = ((await over.json()) as { error: { param: string; message: string } }).error;
      assert.equal(err.param, 'min_tokens');
      assert.match(err.message, /\[0, 56\]/);
      const full = await post(e, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(4 * 57) }] }); // 3 + 4 + 57 = 64 tokens: none left
      assert.equal(full.status, 400);
      assert.match(((await full.json()) as { error: { message: string } }).error.message, /maximum context length is 64 tokens.*64 tokens in the messages/);
    } finally {
      await e.close();
    }
    // With room left, a chat without a limit stops at its emulated EOS (chatOutputTokens, default 256), raised to min_tokens.
    for (const [opts, body, want] of [
      [{}, {}, 256],
      [{ chatOutputTokens: 10 }, {}, 10],
      [{ chatOutputTokens: 10 }, { min_tokens: 20 }, 20],
    ] as const) {
      const big = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 200, ...opts });
      try {
        const r = await post(big, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'abcd' }], ...body });
        assert.equal(((await r.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, want);
      } finally {
        await big.close();
      }
    }
  });

  it('aborts a request whose client disconnects mid-stream: its KV blocks are freed and the others go on', async () => {
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 5 });
    try {
      const ac = new AbortController();
      const r = await fetch(`${e.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: [1, 2, 3], max_tokens: 5000, stream: true }), signal: ac.signal });
      const reader = r.body!.getReader();
      await reader.read(); // the first token arrived: the request holds KV now
      assert.ok(e.backend.engine.usedBlocks > 0);
      const other = post(e, '/v1/completions', { model: MODEL, prompt: [1, 2, 3], max_tokens: 20 });
      ac.abort();
      await reader.cancel().catch(() => {});
      const done = (await (await other).json()) as { usage: { completion_tokens: number } };
      assert.equal(done.usage.completion_tokens, 20);
      for (let i = 0; i < 50 && e.backend.engine.isBusy; i++) await sleep(20);
      assert.equal(e.backend.engine.isBusy, false, 'nothing left running: the 5,000-token request was aborted');
      assert.equal(e.backend.engine.usedBlocks, 0);
    } finally {
      await e.close();
    }
  });

  it('exposes vLLM metric names with counters that add up', async () => {
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20 });
    try {
      await Promise.all([1, 2, 3].map((i) => post(e, '/v1/completions', { model: MODEL, prompt: new Array(10 * i).fill(0), max_tokens: 5 * i }).then((r) => r.text())));
      const s = parsePromText(await (await fetch(`${e.url}/metrics`)).text());
      assert.equal(sumOf(s, 'vllm:prompt_tokens_total'), 60);
      assert.equal(sumOf(s, 'vllm:generation_tokens_total'), 30);
      assert.equal(sumOf(s, 'vllm:num_requests_running'), 0);
      assert.equal(sumOf(s, 'vllm:num_requests_waiting'), 0);
      assert.equal(sumOf(s, 'vllm:kv_cache_usage_perc'), 0);
      assert.equal(sumOf(s, 'vllm:gpu_cache_usage_perc'), 0);
      assert.equal(sumOf(s, 'vllm:time_to_first_token_seconds_count'), 3);
      assert.equal(sumOf(s, 'vllm:e2e_request_latency_seconds_count'), 3);
      assert.equal(sumOf(s, 'vllm:inter_token_latency_seconds_count'), 30 - 3);
      // vLLM V1: time_per_output_token is the inter-token latency's older name (per token, same values); the per-request mean has its own name.
      assert.equal(sumOf(s, 'vllm:time_per_output_token_seconds_count'), 30 - 3);
      assert.equal(sumOf(s, 'vllm:time_per_output_token_seconds_sum'), sumOf(s, 'vllm:inter_token_latency_seconds_sum'));
      assert.equal(sumOf(s, 'vllm:request_time_per_output_token_seconds_count'), 3);
      const success = s.filter((x) => x.name === 'vllm:request_success_total');
      assert.deepEqual(success.map((x) => [x.labels.finished_reason, x.labels.model_name, x.value]), [['stop', MODEL, 0], ['length', MODEL, 3]]);
      assert.ok(s.some((x) => x.name === 'vllm:time_to_first_token_seconds_bucket' && x.labels.le === '+Inf' && x.labels.model_name === MODEL));
    } finally {
      await e.close();
    }
  });

  it('labels its metrics with the served name, as vLLM does', async () => {
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20, servedNames: ['my-org/chat'] });
    try {
      const s = parsePromText(await (await fetch(`${e.url}/metrics`)).text());
      const running = s.filter((x) => x.name === 'vllm:num_requests_running');
      assert.deepEqual(running.map((x) => x.labels.model_name), ['my-org/chat']);
    } finally {
      await e.close();
    }
  });

  it('answers 503 until the startup delay has passed, and rejects impossible requests with 400/404/413', async () => {
    const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', startupDelayS: 0.3 });
    try {
      assert.equal((await fetch(`${e.url}/health`)).status, 503);
      assert.equal((await post(e, '/v1/completions', { model: MODEL, prompt: 'x' })).status, 503);
      await sleep(350);
      assert.equal((await fetch(`${e.url}/health`)).status, 200);
      assert.equal((await post(e, '/v1/completions', { model: MODEL, prompt: 'x', max_tokens: 200_000 })).status, 400);
      assert.equal((await post(e, '/v1/completions', { model: 'other', prompt: 'x' })).status, 404);
      assert.equal((await post(e, '/v1/completions', { model: MODEL })).status, 400);
      const typed = await post(e, '/v1/completions', { model: 5, prompt: 'x' });
      assert.equal(typed.status, 400);
      assert.equal(((await typed.json()) as { error: { param: string } }).error.param, 'model');
      const role = await post(e, '/v1/chat/completions', { messages: [{ role: '', content: 'hi' }] });
      assert.equal(((await role.json()) as { error: { param: string } }).error.param, 'messages[0].role');
      const plain = await fetch(`${e.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ model: MODEL, prompt: 'x' }) });
      assert.equal(plain.status, 400); // fetch sends a string body as text/plain, which vLLM refuses
      assert.match(((await plain.json()) as { error: { message: string } }).error.message, /Content-Type must be application\/json/);
      const get = await fetch(`${e.url}/v1/completions`);
      assert.equal(get.status, 405);
      assert.equal(get.headers.get('allow'), 'POST');
      const models = (await (await fetch(`${e.url}/v1/models`)).json()) as { data: { id: string }[] };
      assert.equal(models.data[0]!.id, MODEL);
      // HEAD wherever GET is (load-balancer health probes): 200 with no body; it was a 405.
      for (const route of ['/health', '/v1/models', '/metrics']) {
        const head = await fetch(`${e.url}${route}`, { method: 'HEAD' });
        assert.equal(head.status, 200, route);
        assert.equal(await head.text(), '');
      }
      assert.equal((await fetch(`${e.url}/health`, { method: 'DELETE' })).headers.get('allow'), 'GET, HEAD');
      // A body over 8 MiB: 413 naming the limit, with the gateway's code (it said only "request body too large").
      const big = await post(e, '/v1/completions', { model: MODEL, prompt: 'x'.repeat(9 << 20) });
      assert.equal(big.status, 413);
      assert.deepEqual(((await big.json()) as { error: { message: string; code: string } }).error, { message: 'request body exceeds 8388608 bytes', type: 'invalid_request_error', param: null, code: 'body_too_large' });
    } finally {
      await e.close();
    }
  });

  it('injects errors at the configured rate, reproducibly for a seed, and crashes on time', async () => {
    const statuses = async (seed: number) => {
      const e = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 50, errorRate: 0.5, seed });
      try {
        const out: number[] = [];
        for (let i = 0; i < 20; i++) {
          const r = await post(e, '/v1/completions', { model: MODEL, prompt: 'x', max_tokens: 1 });
          await r.arrayBuffer();
          out.push(r.status);
        }
        return out;
      } finally {
        await e.close();
      }
    };
    const a = await statuses(3);
    assert.deepEqual(a, await statuses(3));
    const errors = a.filter((s) => s === 500).length;
    assert.ok(errors >= 4 && errors <= 16, `${errors} of 20 failed`);
    assert.ok(a.every((s) => s === 200 || s === 500));

    let crashed = false;
    const c = await startEmulator({ model: MODEL, hardware: 'h100-80gb', crashAfterS: 0.2, onCrash: () => (crashed = true) });
    try {
      assert.equal((await fetch(`${c.url}/health`)).status, 200);
      await sleep(300);
      assert.ok(crashed);
      await assert.rejects(fetch(`${c.url}/health`));
    } finally {
      await c.close();
    }
  });
});
