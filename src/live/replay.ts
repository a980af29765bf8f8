import { Pool, request } from 'undici';
import { UserError } from '../util/errors.ts';
import { Rng, hash32 } from '../util/rng.ts';
import type { TraceRequest } from '../workload/types.ts';
import { TIER_HEADER } from './gateway/parse-request.ts';
import { sleepMs, timerMs } from './timers.ts';

export interface ReplayRequest {
  arrivalS: number;
  inputTokens: number;
  outputTokens: number;
}

/** One replayed request as the client saw it; times in modelled seconds (wall × time scale). */
export interface ReplayResult {
  /** HTTP status; 0 when no response came (connection refused, timeout, client overload). */
  status: number;
  /** From sending to the first streamed token; NaN when none came. */
  ttftS: number;
  /** From sending to the end of the response (or the failure). */
  e2eS: number;
  /** Output tokens received: the server's usage count when it sends one, else the streamed chunks counted. */
  outputTokens: number;
  /** The gateway's `x-llmfleet-backend` header, '' without a gateway. */
  backend: string;
  /**
   * Why the request failed, as a category: '' (completed), 'http-4xx'/'http-5xx' (the status), 'timeout',
   * 'connection', 'incomplete' (stream cut short or empty, or carrying an SSE error event), 'no-usage' (a stream
   * that ended with [DONE] but without the usage chunk it was asked for), 'short-output' (with ignore_eos, fewer
   * tokens than max_tokens by the server's usage), 'client-overload', 'prompt-too-large' (not sent: over
   * MAX_REPLAY_PROMPT_TOKENS).
   */
  failure: string;
  /** The failure in words (the server's error body, the socket error, a stream's SSE error event as `code: message`). */
  error: string;
  /** How late it was sent against its trace time (event-loop delay, a client at its limit). */
  lateS: number;
}

/**
 * The longest prompt replay sends: 2^22 token ids (≈ 30 MB of JSON), past any model's context and any server's body
 * limit (the gateway's is 8 MiB). A row asking for more is recorded as failed, not sent: building a 1e9-id prompt
 * ran the client out of memory and lost the whole run.
 */
export const MAX_REPLAY_PROMPT_TOKENS = 2 ** 22;

export interface ReplayOptions {
  /** Arrivals are sent timeScale× faster and client-side times multiplied by it (an emulator at the same --time-scale). */
  timeScale: number;
  /** The `model` field of request r. */
  modelOf: (r: TraceRequest) => string;
  /** Wall seconds a request may take before it is abandoned. */
  timeoutS: number;
  /** Requests in flight beyond which a new one is counted as failed ('client overload') instead of sent. */
  maxInFlight: number;
  /** Send vLLM's `ignore_eos` so the server generates exactly the trace's output tokens (fewer: 'short-output'). */
  ignoreEos: boolean;
  /**
   * Sent as `Authorization: Bearer <key>` on every request (vLLM started with --api-key refuses /v1/* without it).
   * Default: the OPENAI_API_KEY environment variable when set, as the OpenAI SDKs do; '' sends none.
   */
  apiKey?: string;
  /** Called as each request ends, in completion order. */
  onResult?: (r: TraceRequest, res: ReplayResult) => void;
}

/**
 * Replays a workload against an OpenAI-compatible server (a gateway, vLLM, an emulator) in open loop: request r
 * is sent at wall time r.arrivalS / timeScale after the start, whatever is still in flight, as a streaming
 * `/v1/completions` whose prompt is `inputTokens` random token ids (`promptIds`) and `max_tokens` = outputTokens (with
 * `stream_options.include_usage`, so the server's own token count is used where it gives one). The source is
 * read lazily, one request ahead of the clock. A failed request (refused, timed out, a 4xx/5xx, a stream cut
 * short or carrying an error event, no usage chunk, fewer tokens than max_tokens with ignore_eos) is recorded with
 * its reason; the replay itself only throws for a bad `baseUrl`.
 */
export async function replay(baseUrl: string, src: Iterable<TraceRequest>, o: ReplayOptions): Promise<ReplayResult[]> {
  // One connection per request in flight: a request never waits inside the client for a socket (Node raises
  // its open-file limit to the hard limit at start, so 10,000 sockets fit where the system allows them).
  // Checked before the first request: past Node's timer limit the abort would fire at once (or throw).
  const timeoutMs = timerMs(o.timeoutS, 'timeoutS');
  const pool = new Pool(baseUrl, { connections: o.maxInFlight, pipelining: 1 });
  const results: ReplayResult[] = [];
  const running = new Set<Promise<void>>();
  const t0 = performance.now() + 20;
  const prompts = new Rng(1).fork('replay-prompts');
  const auth = authHeader(o.apiKey);
  const one = async (r: TraceRequest, due: number): Promise<ReplayResult> => {
    const sent = performance.now();
    const lateS = (Math.max(0, sent - due) / 1000) * o.timeScale;
    const body = JSON.stringify({
      model: o.modelOf(r),
      prompt: promptIds(prompts, r.inputTokens, r),
      max_tokens: r.outputTokens,
      stream: true,
      stream_options: { include_usage: true },
      ...(o.ignoreEos ? { ignore_eos: true } : {}),
    });
    const since = (t: number) => ((t - sent) / 1000) * o.timeScale;
    let first = -1;
    let chunks = 0;
    let usage = -1;
    let status = 0;
    let backend = '';
    /**
     * An SSE error event in the stream, as `code: message`: `data: {"error": {message, code}}` (the gateway's, vLLM's
     * since 0.10.1) or vLLM ≤ 0.10.0's top-level `data: {"object": "error", "message", "code"}`, which has no
     * `error` key and is followed by [DONE], so without this it would pass for a completed stream.
     */
    let sseError = '';
    try {
      const res = await pool.request({
        path: '/v1/completions',
        method: 'POST',
        // The gateway's tier header (`llmfleet serve` orders its queue by it); other servers ignore it.
        headers: { 'content-type': 'application/json', ...auth, ...(r.tier ? { [TIER_HEADER]: r.tier } : {}) },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.statusCode;
      const b = res.headers['x-llmfleet-backend'];
      backend = typeof b === 'string' ? b : '';
      if (status !== 200) {
        const text = (await res.body.text()).slice(0, 200).replace(/\s+/g, ' ');
        return { status, ttftS: NaN, e2eS: since(performance.now()), outputTokens: 0, backend, failure: `http-${status}`, error: `HTTP ${status}: ${text}`, lateS };
      }
      let carry = '';
      let done = false;
      for await (const chunk of res.body) {
        const events = (carry + (chunk as Buffer).toString('utf8')).split('\n\n');
        carry = events.pop()!;
        for (const ev of events) {
          const data = ev.split('\n').find((l) => l.startsWith('data:'))?.slice(5).trim();
          if (data === undefined) continue;
          if (data === '[DONE]') {
            done = true;
            continue;
          }
          const j = JSON.parse(data) as {
            object?: unknown;
            message?: unknown;
            code?: unknown;
            choices?: { text?: string }[];
            usage?: { completion_tokens?: number } | null;
            error?: { message?: unknown; code?: unknown } | string | null;
          };
          const e = j.error ? j.error : j.object === 'error' ? j : null;
          if (e && !sseError) {
            if (typeof e === 'string') sseError = e;
            else {
              const code = e.code === null || e.code === undefined ? '' : `${String(e.code)}: `;
              sseError = `${code}${typeof e.message === 'string' ? e.message : JSON.stringify(e)}`;
            }
          }
          if (j.choices && j.choices.length > 0) {
            if (first < 0) first = performance.now();
            chunks++;
          }
          if (typeof j.usage?.completion_tokens === 'number') usage = j.usage.completion_tokens;
        }
      }
      const end = performance.now();
      const tokens = usage >= 0 ? usage : chunks;
      const incomplete = sseError
        ? `stream error event${done ? '' : ' (no [DONE])'}: ${sseError}`
        : !done
          ? 'stream ended without [DONE]'
          : tokens === 0 || first < 0
            ? 'no output token'
            : '';
      // Every request asks for include_usage, and vLLM sends the usage chunk only for a stream that finished:
      // one that failed (an error event of a shape not recognised above, an aborted request) ends with [DONE]
      // but no usage. Counting its chunks instead would record a broken stream as completed.
      // With ignore_eos the server must generate exactly max_tokens; fewer by its own count means the output was
      // cut (a server-side abort, a limit below max_tokens), and its latency would flatter the server.
      const [failure, error] = incomplete
        ? ['incomplete', incomplete]
        : usage < 0
          ? ['no-usage', `stream ended without the usage chunk asked for (stream_options.include_usage); ${chunks} chunks received`]
          : o.ignoreEos && usage < r.outputTokens
            ? ['short-output', `${usage} output tokens by the server's usage, max_tokens ${r.outputTokens} with ignore_eos`]
            : ['', ''];
      return { status, ttftS: first < 0 ? NaN : since(first), e2eS: since(end), outputTokens: tokens, backend, failure, error, lateS };
    } catch (e) {
      const err = e as Error & { code?: string; cause?: { code?: string } };
      const timeout = err.name === 'TimeoutError';
      const why = (timeout ? `timed out after ${o.timeoutS} s` : `${err.code ?? err.cause?.code ?? err.name}: ${err.message}`) + (sseError ? ` after a stream error event: ${sseError}` : '');
      const failure = timeout ? 'timeout' : status === 200 ? 'incomplete' : 'connection';
      return { status, ttftS: first < 0 ? NaN : since(first), e2eS: since(performance.now()), outputTokens: usage >= 0 ? usage : chunks, backend, failure, error: why, lateS };
    }
  };
  try {
    for (const r of src) {
      const due = t0 + (r.arrivalS * 1000) / o.timeScale;
      const wait = due - performance.now();
      // A wait may be longer than a Node timer holds (a small time scale): sleepMs chains timers, so the request
      // is never sent before its time (lateS counts only lateness; it would hide an early send).
      if (wait > 1) await sleepMs(wait);
      const slot = results.length;
      results.push(undefined as unknown as ReplayResult);
      const unsent = running.size >= o.maxInFlight ? { failure: 'client-overload', error: `${o.maxInFlight} requests already in flight` }
        : r.inputTokens > MAX_REPLAY_PROMPT_TOKENS ? { failure: 'prompt-too-large', error: `${r.inputTokens} prompt tokens; at most ${MAX_REPLAY_PROMPT_TOKENS} are sent` }
        : null;
      if (unsent) {
        const res: ReplayResult = { status: 0, ttftS: NaN, e2eS: 0, outputTokens: 0, backend: '', ...unsent, lateS: 0 };
        results[slot] = res;
        o.onResult?.(r, res);
        continue;
      }
      const p: Promise<void> = one(r, due).then((res) => {
        results[slot] = res;
        running.delete(p);
        o.onResult?.(r, res);
      });
      running.add(p);
    }
    await Promise.all(running);
  } finally {
    await pool.close();
  }
  return results;
}

/** `Authorization: Bearer <key>` for `apiKey`, else OPENAI_API_KEY; none for an empty or absent key. */
function authHeader(apiKey: string | undefined): Record<string, string> {
  const key = apiKey ?? process.env.OPENAI_API_KEY;
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** GET /v1/models: the ids, or why it gave none (an HTTP status); a UserError when the server cannot be reached. */
async function listModels(base: string, timeoutS: number, apiKey: string | undefined, orModel: string): Promise<{ ids: string[]; refused: string }> {
  let status: number;
  let text: string;
  try {
    const res = await request(`${base}/v1/models`, { headers: authHeader(apiKey), signal: AbortSignal.timeout(Math.min(timeoutS, 30) * 1000) });
    status = res.statusCode;
    text = await res.body.text();
  } catch (e) {
    // One line: OpenSSL's text (an https:// URL to a plain-HTTP server) ends in a newline.
    const why = (e as Error).message.replace(/\s+/g, ' ').trim();
    const tls = /wrong version number|SSL routines/i.test(why) ? ' (an https:// URL to a server that speaks plain HTTP? try http://)' : '';
    throw new UserError(`--url: cannot list models at ${base}/v1/models (${why})${tls}; is the server up?${orModel}`);
  }
  if (status !== 200) return { ids: [], refused: `HTTP ${status}: ${text.slice(0, 200).replace(/\s+/g, ' ')}` };
  let body: { data?: { id?: unknown }[] } | null;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { ids: [], refused: `HTTP 200, not JSON: ${text.slice(0, 80).replace(/\s+/g, ' ')}` };
  }
  const data = Array.isArray(body?.data) ? body.data : [];
  return { ids: data.map((m) => m?.id).filter((id): id is string => typeof id === 'string'), refused: '' };
}

/**
 * The first model id of GET /v1/models (with the API key as `replay` sends it: `apiKey`, else OPENAI_API_KEY), or a
 * UserError saying what went wrong and to pass --model (and --api-key for a 401/403).
 */
export async function firstServedModel(base: string, timeoutS: number, apiKey?: string): Promise<string> {
  const { ids, refused } = await listModels(base, timeoutS, apiKey, ' (or pass --model)');
  if (refused) {
    const hint = /^HTTP 40[13]\b/.test(refused) ? 'pass --api-key (or set OPENAI_API_KEY), or --model' : 'pass --model';
    throw new UserError(`--url: cannot list models at ${base}/v1/models (${refused}); ${hint}`);
  }
  if (ids.length === 0) throw new UserError(`--url: ${base}/v1/models lists no model; pass --model`);
  return ids[0]!;
}

/**
 * Checks `--model` against GET /v1/models before any request is sent: a UserError when the server cannot be
 * reached or lists other models only (every request would fail, and the run would look like a measurement). A
 * server that does not list its models (an error status, an empty list) is taken at its word: the requests tell.
 */
export async function checkServedModel(base: string, model: string, timeoutS: number, apiKey?: string): Promise<void> {
  const { ids } = await listModels(base, timeoutS, apiKey, '');
  if (ids.length > 0 && !ids.includes(model)) {
    const shown = ids.length > 10 ? `${ids.slice(0, 10).join(', ')}, … (${ids.length})` : ids.join(', ');
    throw new UserError(`--model ${model}: not served at ${base} (its /v1/models lists ${shown})`);
  }
}

/**
 * A prompt of n token ids, uniform in [1000, 31000): inside every common vocabulary (Llama-2 and Mistral have
 * 32,000 ids) and past the special ones. Random, not one id repeated: with prefix caching on (vLLM V1's default)
 * a server would otherwise find every later prompt's blocks cached and skip almost all its prefill, which the
 * simulator does not model without block hashes; and a mixture-of-experts model would route every token alike.
 * A request whose trace gives block hashes (`prefix`: Mooncake's, Qwen-Bailian's `hash_ids`) gets, for each full
 * block, ids drawn from a stream seeded by that block's hash: prompts share exactly the prefixes their hashes say,
 * so a server's prefix cache finds what the simulator's `engine.prefixCache` finds.
 */
export function promptIds(rng: Rng, n: number, prefix?: { prefixHashes?: readonly number[]; prefixBlockTokens?: number }): number[] {
  const ids = new Array<number>(n);
  let i = 0;
  const hashes = prefix?.prefixHashes;
  const bt = prefix?.prefixBlockTokens ?? 0;
  if (hashes && bt > 0) {
    const full = Math.min(Math.floor(n / bt), hashes.length);
    for (let k = 0; k < full; k++) {
      const block = new Rng(hash32(`block/${hashes[k]}`));
      for (let j = 0; j < bt; j++) ids[i++] = 1000 + block.int(30000);
    }
  }
  for (; i < n; i++) ids[i] = 1000 + rng.int(30000);
  return ids;
}

/** Replays plain requests with one model name and generous limits (the parity test's use). */
export async function replayTrace(baseUrl: string, model: string, reqs: readonly ReplayRequest[], timeScale: number): Promise<ReplayResult[]> {
  const src = reqs.map((r, id) => ({ id, ...r }));
  return replay(baseUrl, src, { timeScale, modelOf: () => model, timeoutS: 600, maxInFlight: 256, ignoreEos: false });
}
