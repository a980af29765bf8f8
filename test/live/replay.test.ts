import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { startEmulator } from '../../src/live/emulator/server.ts';
import { checkServedModel, firstServedModel, replay } from '../../src/live/replay.ts';
import { MODEL, startFleet } from './helpers.ts';

const run = promisify(execFile);
const BIN = 'bin/llmfleet.js';

/** Runs `llmfleet replay …`; resolves with exit code, stdout and stderr whatever the code. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, 'replay', ...args]);
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** A server answering its n-th request with the n-th of `bodies` as an SSE stream. */
async function sseServer(bodies: readonly string[]): Promise<{ server: ReturnType<typeof createServer>; url: string }> {
  let i = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(bodies[i++]);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('replay: a workload sent to a live server', { timeout: 120_000 }, () => {
  it("sends the scenario's requests in open loop and reports them like simulate: every token received, same requests as simulate", async () => {
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', port: 0, timeScale: 20 });
    try {
      const out = mkdtempSync(join(tmpdir(), 'llmfleet-replay-'));
      const r = await cli(['--url', emu.url, '--set', 'workload.transforms.limit=25', '--time-scale', '20', '--out', out]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /replayed 25 requests of default \(seed 1\) against http:\/\/127\.0\.0\.1:\d+: 25 completed, 0 failed/);
      const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      assert.deepEqual(s.requests, { total: 25, completed: 25, failed: 0, failReasons: {} });
      assert.ok(s.ttft.p50 > 0 && s.e2e.p99 >= s.e2e.p50 && s.tpot.p50 > 0, JSON.stringify(s));
      assert.equal(s.queue, undefined, 'queue time is not observable from the client');
      const rows = readFileSync(join(out, 'requests.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
      assert.equal(rows.length, 25);
      for (const c of rows) {
        assert.equal(c[5], '200');
        assert.equal(c[8], c[3], 'tokens received = the trace output tokens (ignore_eos)');
      }
      // The rows are the first 25 of the conversation trace, as `simulate` reads them.
      assert.deepEqual(rows.slice(0, 2).map((c) => c.slice(1, 4)), [['0', '374', '44'], ['4.314579', '396', '109']]);
      // The emulator saw exactly these prompts.
      assert.deepEqual(emu.backend.finished.map((d) => d.inputTokens).sort((a, b) => a - b), rows.map((c) => Number(c[2])).sort((a, b) => a - b));

      // A --model the server does not list is refused before anything is sent (exit 2); a request for a model the
      // server does not serve is recorded as the server's 404.
      const bad = await cli(['--url', emu.url, '--model', 'gpt-9', '--set', 'workload.transforms.limit=3', '--time-scale', '20', '--out', out]);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /^llmfleet: --model gpt-9: not served at http:\/\/127\.0\.0\.1:\d+ \(its \/v1\/models lists llama3\.1-8b\)\n$/);
      const [miss] = await replay(emu.url, [{ id: 0, arrivalS: 0, inputTokens: 10, outputTokens: 2 }], { timeScale: 20, modelOf: () => 'gpt-9', timeoutS: 5, maxInFlight: 10, ignoreEos: true });
      assert.deepEqual([miss!.status, miss!.failure], [404, 'http-404']);
      assert.match(miss!.error, /^HTTP 404: .*model_not_found/);
    } finally {
      await emu.close();
    }
  });

  it('leaves the requests arriving before output.warmupS out of its figures, the same ones simulate leaves out', async () => {
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', port: 0, timeScale: 20 });
    try {
      const out = mkdtempSync(join(tmpdir(), 'llmfleet-replay-warmup-'));
      const set = ['--set', 'workload.transforms.limit=8', '--set', 'output.warmupS=5'];
      const r = await cli(['--url', emu.url, ...set, '--time-scale', '20', '--out', out]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      const sim = await run(process.execPath, [BIN, 'simulate', ...set, '--quiet', '--out', join(out, 'sim')]);
      assert.equal(sim.stderr, '');
      const simS = JSON.parse(readFileSync(join(out, 'sim', 'summary.json'), 'utf8'));
      assert.deepEqual([s.requests.warmup, s.requests.total], [4, 4], JSON.stringify(s.requests));
      assert.deepEqual([s.requests.warmup, s.requests.total], [simS.requests.warmup, simS.requests.total]);
      assert.equal(s.requests.warmup + s.requests.total, 8);
      assert.match(r.stdout, new RegExp(`warm-up \\(output\\.warmupS\\): ${s.requests.warmup} more sent`));
      assert.equal(s.requests.completed, s.requests.total);
    } finally {
      await emu.close();
    }
  });

  it('records a stalled stream as a timeout and a refused connection as such, and finishes the rest', async () => {
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', port: 0, timeScale: 50, stallAfterTokens: 3 });
    const src = [
      { id: 0, arrivalS: 0, inputTokens: 10, outputTokens: 2 },
      { id: 1, arrivalS: 0, inputTokens: 10, outputTokens: 20 },
    ];
    try {
      const res = await replay(emu.url, src, { timeScale: 1, modelOf: () => MODEL, timeoutS: 1, maxInFlight: 10, ignoreEos: true });
      assert.deepEqual(res.map((r) => [r.status, r.failure, r.outputTokens]), [[200, '', 2], [200, 'timeout', 3]]);
      const one = await replay(emu.url, src, { timeScale: 1, modelOf: () => MODEL, timeoutS: 1, maxInFlight: 1, ignoreEos: true });
      assert.equal(one[1]!.failure, 'client-overload');
    } finally {
      await emu.close();
    }
    const refused = await replay(emu.url, src.slice(0, 1), { timeScale: 1, modelOf: () => MODEL, timeoutS: 1, maxInFlight: 10, ignoreEos: true });
    assert.equal(refused[0]!.failure, 'connection');
    assert.match(refused[0]!.error, /ECONNREFUSED/);
    // A prompt too long to build is recorded, not sent (a 1e9-token row ran the client out of memory, run lost).
    const huge = await replay(emu.url, [{ id: 0, arrivalS: 0, inputTokens: 1e9, outputTokens: 4 }], { timeScale: 1, modelOf: () => MODEL, timeoutS: 1, maxInFlight: 10, ignoreEos: true });
    assert.deepEqual([huge[0]!.status, huge[0]!.failure], [0, 'prompt-too-large']);
    assert.match(huge[0]!.error, /^1000000000 prompt tokens; at most 4194304 are sent$/);
  });

  it("sends each request's tier to the gateway and reports per-tier blocks with each tier's SLO", async () => {
    const f = await startFleet(1, { timeScale: 20 });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'llmfleet-replay-'));
      const trace = join(dir, 'tiers.csv');
      writeFileSync(trace, 'arrival_s,input_tokens,output_tokens,tier\n0,50,5,premium\n0.1,50,5,batch\n0.2,50,5,gold\n');
      const r = await cli(['--url', f.gw.url, '--trace', trace, '--set', 'slo.tiers={premium: {ttftS: 0.5}}', '--time-scale', '20', '--out', dir]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
      assert.deepEqual(s.requests.failReasons, { 'http-400': 1 }, 'the gateway refuses the unknown tier gold');
      assert.deepEqual(Object.keys(s.tiers), ['batch', 'gold', 'premium']);
      assert.equal(s.tiers.premium.slo.ttftS, 0.5);
      assert.equal(s.tiers.premium.requests.completed, 1);
      assert.equal(s.tiers.gold.requests.dropped, 1);
      assert.match(readFileSync(join(dir, 'requests.csv'), 'utf8'), /invalid_tier/);
    } finally {
      await f.close();
    }
  });

  it("keeps a stream's SSE error event (message and code) in the failure it records", async () => {
    const chunk = 'data: {"choices":[{"text":"x"}]}\n\n';
    const error = 'data: {"error":{"message":"backend connection lost mid-response (UND_ERR_SOCKET)","type":"api_error","param":null,"code":"backend_disconnected"}}\n\n';
    const bodies = [chunk + error, chunk + error + 'data: [DONE]\n\n', chunk];
    const { server, url } = await sseServer(bodies);
    try {
      const res = [];
      for (let k = 0; k < bodies.length; k++) res.push(...(await replay(url, [{ id: k, arrivalS: 0, inputTokens: 4, outputTokens: 3 }], { timeScale: 1, modelOf: () => MODEL, timeoutS: 5, maxInFlight: 10, ignoreEos: true })));
      assert.deepEqual(res.map((r) => r.failure), ['incomplete', 'incomplete', 'incomplete']);
      assert.equal(res[0]!.error, 'stream error event (no [DONE]): backend_disconnected: backend connection lost mid-response (UND_ERR_SOCKET)');
      assert.equal(res[1]!.error, 'stream error event: backend_disconnected: backend connection lost mid-response (UND_ERR_SOCKET)');
      assert.equal(res[2]!.error, 'stream ended without [DONE]');
    } finally {
      server.close();
    }
  });

  it("fails a stream with vLLM ≤ 0.10.0's top-level error event, one without the usage chunk asked for, and one short of max_tokens with ignore_eos", async () => {
    const tok = 'data: {"choices":[{"text":"x","finish_reason":null}]}\n\n';
    const usage = (n: number) => `data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":${n},"total_tokens":${4 + n}}}\n\n`;
    const done = 'data: [DONE]\n\n';
    // vLLM ≤ 0.10.0 (before PR #22099): the ErrorResponse itself, no `error` key; no usage chunk; then [DONE].
    const oldError = 'data: {"object":"error","message":"prompt too long for the KV cache","type":"BadRequestError","param":null,"code":400}\n\n';
    const bodies = [tok + tok + oldError + done, tok + tok + done, tok + tok + usage(2) + done, tok + tok + usage(2) + done, tok + tok + tok + usage(3) + done];
    const { server, url } = await sseServer(bodies);
    try {
      const res = [];
      for (let k = 0; k < bodies.length; k++) {
        const ignoreEos = k !== 3; // without ignore_eos a server may stop early (EOS): 2 of 3 is complete
        res.push(...(await replay(url, [{ id: k, arrivalS: 0, inputTokens: 4, outputTokens: 3 }], { timeScale: 1, modelOf: () => MODEL, timeoutS: 5, maxInFlight: 10, ignoreEos })));
      }
      assert.deepEqual(
        res.map((r) => [r.failure, r.outputTokens]),
        [['incomplete', 2], ['no-usage', 2], ['short-output', 2], ['', 2], ['', 3]],
      );
      assert.equal(res[0]!.error, 'stream error event: 400: prompt too long for the KV cache');
      assert.match(res[1]!.error, /without the usage chunk/);
      assert.match(res[2]!.error, /2 output tokens .* max_tokens 3 with ignore_eos/);
    } finally {
      server.close();
    }
  });

  it('sends the API key as Authorization: Bearer on every request, model discovery included (default OPENAI_API_KEY)', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(req.headers.authorization);
        // vLLM with --api-key: 401 on /v1/* without the right key
        if (req.headers.authorization !== 'Bearer k1' && req.headers.authorization !== 'Bearer env-key') return res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Unauthorized"}');
        if (req.url === '/v1/models') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"served-m"}]}');
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"choices":[{"text":"x"}]}\n\ndata: {"choices":[],"usage":{"completion_tokens":1}}\n\ndata: [DONE]\n\n');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const saved = process.env.OPENAI_API_KEY;
    const opts = { timeScale: 1, modelOf: () => MODEL, timeoutS: 5, maxInFlight: 10, ignoreEos: true };
    const src = [{ id: 0, arrivalS: 0, inputTokens: 4, outputTokens: 1 }];
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      delete process.env.OPENAI_API_KEY;
      assert.equal(await firstServedModel(url, 5, 'k1'), 'served-m');
      assert.deepEqual((await replay(url, src, { ...opts, apiKey: 'k1' })).map((r) => [r.status, r.failure]), [[200, '']]);
      const noKey = await replay(url, src, opts);
      assert.deepEqual([noKey[0]!.failure, noKey[0]!.error], ['http-401', 'HTTP 401: {"error":"Unauthorized"}']);
      await assert.rejects(firstServedModel(url, 5), /--url: cannot list models at .*\/v1\/models \(HTTP 401: \{"error":"Unauthorized"\}\); pass --api-key \(or set OPENAI_API_KEY\), or --model/);
      process.env.OPENAI_API_KEY = 'env-key';
      assert.equal(await firstServedModel(url, 5), 'served-m');
      assert.equal((await replay(url, src, opts))[0]!.failure, '');
      assert.equal((await replay(url, src, { ...opts, apiKey: '' }))[0]!.failure, 'http-401', "apiKey '' sends none");
      assert.deepEqual(seen, ['Bearer k1', 'Bearer k1', undefined, undefined, 'Bearer env-key', 'Bearer env-key', undefined]);
      // The CLI's --api-key reaches discovery and the request.
      delete process.env.OPENAI_API_KEY;
      const out = mkdtempSync(join(tmpdir(), 'llmfleet-replay-key-'));
      const r = await cli(['--url', url, '--api-key', 'k1', '--set', 'workload.transforms.limit=1', '--out', out, '--quiet']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(seen.slice(7), ['Bearer k1', 'Bearer k1']);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
      server.close();
    }
  });

  it('--model that the server does not list, or a server that cannot be reached, exits 2 before sending anything', async () => {
    let completions = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/v1/models') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"served-m"}]}');
        completions++;
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"model not found"}');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const out = mkdtempSync(join(tmpdir(), 'llmfleet-replay-model-'));
      const r = await cli(['--url', url, '--model', 'served_m', '--set', 'workload.transforms.limit=2', '--out', out]);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.equal(r.stderr, `llmfleet: --model served_m: not served at ${url} (its /v1/models lists served-m)\n`);
      assert.equal(completions, 0);
      await checkServedModel(url, 'served-m', 5);
    } finally {
      server.close();
    }
    // https:// to a plain-HTTP server: OpenSSL's text ends in a newline; the message stays one line, with a hint.
    const plain = createServer((_req, res) => res.end('{}'));
    await new Promise<void>((ok) => plain.listen(0, '127.0.0.1', ok));
    try {
      const tlsUrl = `https://127.0.0.1:${(plain.address() as AddressInfo).port}`;
      await assert.rejects(checkServedModel(tlsUrl, 'm', 5), (e: Error) => !e.message.includes('\n') && e.message.includes('(an https:// URL to a server that speaks plain HTTP? try http://); is the server up?'));
    } finally {
      plain.close();
    }
    // Nothing listening: with --model too (it used to send every request, fail each and exit 0).
    const out = mkdtempSync(join(tmpdir(), 'llmfleet-replay-down-'));
    const down = await cli(['--url', 'http://127.0.0.1:1', '--model', 'm', '--set', 'workload.transforms.limit=2', '--out', out]);
    assert.equal(down.code, 2, down.stdout + down.stderr);
    assert.match(down.stderr, /^llmfleet: --url: cannot list models at http:\/\/127\.0\.0\.1:1\/v1\/models \(.*\); is the server up\?\n$/);
  });

  it('sends prompts that share no KV block, so a server with prefix caching cannot skip their prefill', async () => {
    const prompts: number[][] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        prompts.push((JSON.parse(body) as { prompt: number[] }).prompt);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"choices":[{"text":"x"}]}\n\ndata: {"choices":[],"usage":{"completion_tokens":1}}\n\ndata: [DONE]\n\n');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const src = [0, 1, 2, 3].map((id) => ({ id, arrivalS: 0, inputTokens: 40, outputTokens: 1 }));
      const res = await replay(url, src, { timeScale: 1, modelOf: () => MODEL, timeoutS: 5, maxInFlight: 10, ignoreEos: true });
      assert.deepEqual(res.map((r) => r.failure), ['', '', '', '']);
      assert.equal(prompts.length, 4);
      const firstBlocks = new Set(prompts.map((p) => p.slice(0, 16).join(' ')));
      assert.equal(firstBlocks.size, 4, 'no two prompts start with the same 16-token block');
      for (const p of prompts) {
        assert.equal(p.length, 40);
        assert.ok(p.every((t) => Number.isInteger(t) && t >= 1000 && t < 31000), 'ids inside a 32k vocabulary, past the special ones');
      }
    } finally {
      server.close();
    }
  });

  it('bad flags exit 2 with one line naming the flag', async () => {
    for (const [args, msg] of [
      [['--url', 'http://127.0.0.1:1/v1'], /--url: expected a base URL like http:\/\/host:port \(http or https, port ≤ 65535, no path or query\); requests go to \/v1\/completions under it; got 'http:\/\/127\.0\.0\.1:1\/v1'$/m],
      [['--url', 'localhost:8000'], /--url: expected a base URL like http:\/\/host:port/],
      [['--url', 'http://user:pw@127.0.0.1:1'], /--url: expected a base URL like http:\/\/host:port/],
      [['--url', 'http://127.0.0.1:1', '--time-scale', '0'], /--time-scale: expected a number > 0, got '0'$/m],
      [['--url', 'http://127.0.0.1:1', '--max-in-flight', '0'], /--max-in-flight: expected an integer ≥ 1/],
      // Past Node's timer limit AbortSignal.timeout fired at once (or threw): every request failed as 'connection', exit 0.
      [['--url', 'http://127.0.0.1:1', '--model', MODEL, '--timeout', '5000000'], /^llmfleet: --timeout: expected a number of seconds ≤ 2147483 \(about 24\.8 days, the longest wait a Node timer holds\), got '5000000'$/m],
      [['--url', 'http://127.0.0.1:1', '--model', MODEL, '--timeout', '0'], /^llmfleet: --timeout: expected a number of seconds ≥ 0\.001, got '0'$/m],
      [['--url', 'http://127.0.0.1:1'], /--url: cannot list models at http:\/\/127\.0\.0\.1:1\/v1\/models .*pass --model/],
      // A key with a line break or non-ASCII: every request 'failed (connection)' with exit 0 (or --url blamed).
      [['--url', 'http://127.0.0.1:1', '--model', MODEL, '--api-key', 'abc\r\nX-Evil: 1'], /^llmfleet: --api-key: expected printable ASCII with no line breaks \(an HTTP header value\), got U\+000D at character 4/m],
      [['--url', 'http://127.0.0.1:1', '--api-key', 'ключ'], /^llmfleet: --api-key: expected printable ASCII .* got U\+043A at character 1$/m],
    ] as const) {
      const r = await cli([...args, '--out', mkdtempSync(join(tmpdir(), 'llmfleet-replay-'))]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, msg);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    // An empty --out wrote summary.json and requests.csv into the current folder.
    const r = await cli(['--url', 'http://127.0.0.1:1', '--model', MODEL, '--out', '']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^llmfleet: --out: expected a non-empty output folder/m);
  });
});
