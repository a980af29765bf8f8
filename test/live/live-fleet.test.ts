import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { completionFields, type FieldError } from '../../src/live/openai-request.ts';
import { AdmissionQueue } from '../../src/live/gateway/admission.ts';
import { LiveFleet } from '../../src/live/gateway/live-fleet.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { parseCompletion, type BadRequest } from '../../src/live/gateway/parse-request.ts';
import { parsePromText, sumOf } from '../../src/live/prom-text.ts';

const SCRAPE = `# HELP vllm:num_requests_running x
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3
vllm:num_requests_waiting{model_name="m"} 1
vllm:gpu_cache_usage_perc{model_name="m"} 0.25
vllm:kv_cache_usage_perc{model_name="m"} 0.5
vllm:cache_config_info{block_size="16",num_gpu_blocks="1000"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="m",le="+Inf"} 7
garbage line
`;

describe('live fleet view and gateway helpers', () => {
  it('parses Prometheus text, including labels, +Inf and junk lines', () => {
    const s = parsePromText(SCRAPE);
    assert.equal(sumOf(s, 'vllm:num_requests_running'), 3);
    assert.equal(s.find((x) => x.name === 'vllm:e2e_request_latency_seconds_bucket')!.labels.le, '+Inf');
    assert.equal(sumOf(s, 'absent'), undefined);
  });

  it('combines the last scrape with in-flight counts: outstanding = max(f, R + W + f − f₀)', () => {
    const fleet = new LiveFleet();
    const b = fleet.add('http://a', 'm', 'h100-80gb', 10);
    b.inflight = 4;
    b.applyScrape(SCRAPE, 1);
    assert.equal(b.outstandingRequests, 4); // 3 + 1 + 4 − 4
    assert.equal(b.kvUsedFraction, 0.5, 'the v1 name wins over the v0 one');
    assert.equal(b.kvCapacityTokens, 16_000);
    b.inflight = 7;
    assert.equal(b.outstandingRequests, 7);
    assert.equal(b.numRunning, 3);
    assert.equal(b.numWaiting, 4);
    b.inflight = 1; // three finished since the scrape
    assert.equal(b.outstandingRequests, 1);
  });

  it('lists only healthy, non-ejected, non-draining backends below their cap as routable, by id', () => {
    const fleet = new LiveFleet();
    const [a, b, c, d] = [0, 1, 2, 3].map((i) => fleet.add(`http://b${i}`, 'm', '', 2));
    for (const x of [a!, b!, c!, d!]) x.healthy = true;
    c!.ejectedUntilS = 10;
    d!.draining = true;
    fleet.refresh(5);
    assert.deepEqual(fleet.routable('m').map((x) => x.id), [0, 1]);
    a!.inflight = 2;
    assert.deepEqual(fleet.routable('m').map((x) => x.id), [1]);
    fleet.refresh(10);
    assert.deepEqual(fleet.routable('m').map((x) => x.id), [1, 2]);
    assert.deepEqual([a!.state, d!.state], ['ready', 'draining']);
  });

  it('serves the admission queue by priority, FIFO within one, and refuses beyond capacity', () => {
    const q = new AdmissionQueue<string>(3);
    q.push('b1', 2);
    q.push('s1', 1);
    q.push('b2', 2);
    assert.equal(q.full, true);
    const order: string[] = [];
    q.drain((x) => (order.push(x), x !== 'b1'));
    assert.deepEqual(order, ['s1', 'b1', 'b2']);
    assert.equal(q.size, 1);
    q.push('p', 0, true);
    const next: string[] = [];
    q.drain((x) => (next.push(x), 'stop'));
    assert.deepEqual(next, ['p']);
  });

  it('turns bad completion bodies into 4xx with a code, and good ones into routing inputs', () => {
    const tiers = { default: 'standard', priorities: { premium: 0, standard: 1 } };
    const models = new Set(['m']);
    const raw = (body: unknown, headers: Record<string, string>) => parseCompletion(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), false, headers, models, tiers);
    const p = (body: unknown, headers = {}) => raw(body, { 'content-type': 'application/json', ...headers });
    assert.deepEqual(p({ model: 'm', prompt: [1, 2, 3], max_tokens: 9, stream: true }, { 'x-llmfleet-tier': 'premium' }), { model: 'm', inputTokens: 3, maxTokens: 9, stream: true, tier: 'premium', priority: 0 });
    assert.equal((p('nope') as { code: string }).code, 'invalid_json');
    assert.equal((p({ model: 'm', prompt: 'a' }, { 'content-type': 'application/x-www-form-urlencoded' }) as { status: number }).status, 415);
    // Only application/json, as vLLM's validate_json_request: no Content-Type and `+json` types are refused too.
    assert.equal((p({ model: 'm', prompt: 'a' }, { 'content-type': 'application/vnd.api+json' }) as { status: number }).status, 415);
    assert.equal((raw({ model: 'm', prompt: 'a' }, {}) as { status: number }).status, 415);
    assert.equal((p({ model: 'm', prompt: 'a' }, { 'content-type': 'Application/JSON; charset=utf-8' }) as { model: string }).model, 'm');
    assert.equal((p({ model: 'm', prompt: 'a', stream_options: { include_usage: true } }) as { param: string }).param, 'stream_options');
    assert.equal((p({ model: 'x', prompt: 'a' }) as { status: number }).status, 404);
    assert.equal((p({ model: 'm' }) as { code: string }).code, 'invalid_prompt');
    assert.equal((p({ model: 'm', prompt: 'a', max_tokens: 1.5 }) as { code: string }).code, 'invalid_max_tokens');
    assert.equal((p({ model: 'm', prompt: 'a' }, { 'x-llmfleet-tier': 'gold' }) as { code: string }).code, 'invalid_tier');
  });

  it('knows only configured tiers: inherited names (constructor, __proto__, toString) are unknown, in requests and in the config', () => {
    const tiers = { default: 'standard', priorities: { premium: 0, standard: 1 } };
    const models = new Set(['m']);
    for (const tier of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const r = parseCompletion(Buffer.from(JSON.stringify({ model: 'm', prompt: 'a' })), false, { 'content-type': 'application/json', 'x-llmfleet-tier': tier }, models, tiers) as BadRequest;
      assert.equal(r.status, 400, tier);
      assert.equal(r.code, 'invalid_tier', tier);
      assert.match(r.message, /valid: premium, standard$/);
      const cfg = gatewayConfigSchema.safeParse({ pools: [{ model: 'm' }], tiers: { default: tier } });
      assert.equal(cfg.success, false, `tiers.default: ${tier}`);
    }
    assert.equal(gatewayConfigSchema.safeParse({ pools: [{ model: 'm' }], tiers: { default: 'gold', priorities: { gold: 0 } } }).success, true);
  });

  it('checks every completion field a client can get wrong and names it (message and param)', () => {
    const bad = (body: Record<string, unknown>, chat = false) => completionFields(body, chat, 16) as FieldError;
    const cases: [Record<string, unknown>, boolean, string, RegExp][] = [
      [{ prompt: '' }, false, 'prompt', /non-empty string/],
      [{ prompt: ['a', 'b'] }, false, 'prompt', /batch of several prompts is not supported/],
      [{ prompt: 'a', max_completion_tokens: 'x' }, false, 'max_completion_tokens', /'max_completion_tokens' must be an integer from 1 to 2\^31 − 1, got "x"/],
      // 1e308 is an integer to JS: it passed, and the gateway's token count per backend lost every other request's tokens.
      [{ prompt: 'a', max_tokens: 1e308 }, false, 'max_tokens', /'max_tokens' must be an integer from 1 to 2\^31 − 1, got 1e\+308/],
      [{ messages: [{ role: 'user', content: 'hi' }], min_tokens: 2 ** 53 }, true, 'min_tokens', /'min_tokens' must be an integer in \[0, 2147483647\]/],
      [{ prompt: 'a', temperature: Infinity }, false, 'temperature', /got Infinity$/],
      [{ prompt: 'a', temperature: 'hot' }, false, 'temperature', /number ≥ 0/],
      [{ prompt: 'a', temperature: -1 }, false, 'temperature', /got -1/],
      [{ prompt: 'a', top_p: 0 }, false, 'top_p', /in \(0, 1\]/],
      [{ prompt: 'a', n: 0 }, false, 'n', /integer ≥ 1/],
      [{ prompt: 'a', n: 2 }, false, 'n', /not supported/],
      [{ prompt: 'a', stream: 'yes' }, false, 'stream', /true or false/],
      [{ prompt: 'a', stream_options: 'x' }, false, 'stream_options', /object/],
      [{ prompt: 'a', logprobs: 50 }, false, 'logprobs', /in \[0, 20\]/],
      [{ messages: [{ role: '', content: 'hi' }] }, true, 'messages[0].role', /non-empty string/],
      [{ messages: [{ role: 'user' }] }, true, 'messages[0].content', /string or a list of content parts, got nothing/],
      [{ messages: [{ role: 'user', content: [5, null] }] }, true, 'messages[0].content[0]', /content part/],
      [{ messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }, true, 'messages[0].content[0].text', /string/],
      [{ messages: [{ role: 'user', content: 'a' }], logprobs: 3 }, true, 'logprobs', /true or false/],
    ];
    for (const [body, chat, param, message] of cases) {
      const e = bad(body, chat);
      assert.equal(e.param, param, JSON.stringify(body));
      assert.match(e.message, message);
    }
    assert.deepEqual(completionFields({ prompt: 'abcd', temperature: 0.7, top_p: 1, n: 1, stream: true, stream_options: { include_usage: true }, logprobs: 2 }, false, 16), { inputTokens: 1, maxTokens: 16, stream: true, includeUsage: true });
  });

  it('checks the ignored fields docs/LIVE.md says are checked: stop, min_tokens, ignore_eos; top_p in (0, 1]', () => {
    const bad = (body: Record<string, unknown>) => completionFields(body, false, 16) as FieldError;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ prompt: 'a', stop: 5 }, 'stop', /'stop' must be a string or a list of strings, got 5/],
      [{ prompt: 'a', stop: ['x', 3] }, 'stop', /list of strings/],
      [{ prompt: 'a', min_tokens: -1 }, 'min_tokens', /'min_tokens' must be an integer in \[0, 16\], got -1/],
      [{ prompt: 'a', max_tokens: 4, min_tokens: 5 }, 'min_tokens', /in \[0, 4\]/],
      [{ prompt: 'a', ignore_eos: 'no' }, 'ignore_eos', /'ignore_eos' must be true or false/],
      [{ prompt: 'a', top_p: 0 }, 'top_p', /'top_p' must be a number in \(0, 1\], got 0/],
    ];
    for (const [body, param, message] of cases) {
      const e = bad(body);
      assert.equal(e.param, param, JSON.stringify(body));
      assert.match(e.message, message);
    }
    assert.deepEqual(completionFields({ prompt: 'a', stop: ['x', 'y'], min_tokens: 16, ignore_eos: true, top_p: 0.5 }, false, 16), { inputTokens: 1, maxTokens: 16, stream: false, includeUsage: false });
    assert.deepEqual(completionFields({ prompt: 'a', stop: 'x', min_tokens: null, ignore_eos: null }, false, 16), { inputTokens: 1, maxTokens: 16, stream: false, includeUsage: false });
  });
});
