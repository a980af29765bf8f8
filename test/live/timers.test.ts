import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startEmulator } from '../../src/live/emulator/server.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { MAX_TIMER_MS, MAX_TIMER_S, parseTimerSecondsFlag, setLongTimeout, timerMs } from '../../src/live/timers.ts';
import { MODEL, sleep } from './helpers.ts';

const BIN = 'bin/llmfleet.js';

describe('durations that become Node timers (≤ 2^31 − 1 ms, else they fire after 1 ms)', { timeout: 30_000 }, () => {
  it('the limit is 2,147,483 s; flags and config fields above it are refused, at it accepted', () => {
    assert.equal(MAX_TIMER_MS, 2147483647);
    assert.equal(MAX_TIMER_S, 2147483);
    assert.equal(parseTimerSecondsFlag('--x', '2147483'), 2147483);
    assert.throws(() => parseTimerSecondsFlag('--x', '2147483.5'), /^UserError: --x: expected a number of seconds ≤ 2147483 \(about 24\.8 days/);
    assert.throws(() => parseTimerSecondsFlag('--x', 'Infinity'), /--x: expected a number of seconds ≥ 0, got 'Infinity'/);
    assert.equal(timerMs(MAX_TIMER_S, 'x'), 2147483000);
    assert.throws(() => timerMs(MAX_TIMER_S + 1, 'crashAfterS'), RangeError);
    const pools = [{ model: MODEL, backends: ['http://127.0.0.1:1'] }];
    assert.equal(gatewayConfigSchema.parse({ pools, timeouts: { requestS: MAX_TIMER_S } }).timeouts.requestS, MAX_TIMER_S);
    for (const over of [
      { timeouts: { requestS: 1e9 } },
      { timeouts: { firstByteS: 1e9 } },
      { timeouts: { idleS: 1e9 } },
      { admission: { queueTimeoutS: 1e9 } },
      { scrapeIntervalS: 1e9 },
      { health: { intervalS: 1e9 } },
      { health: { timeoutS: 1e7 } },
      { drainTimeoutS: 1e9 },
      { autoscaler: { policy: 'none', intervalS: 1e9, pools: [{ model: MODEL, maxCount: 1 }] } },
      { autoscaler: { policy: 'none', pools: [{ model: MODEL, maxCount: 1 }], actuator: { kind: 'process', healthTimeoutS: 1e9 } } },
    ]) {
      assert.equal(gatewayConfigSchema.safeParse({ pools, ...over }).success, false, JSON.stringify(over));
    }
    // Durations only compared with the clock (no timer) keep their range.
    assert.equal(gatewayConfigSchema.parse({ pools, outlier: { ejectionS: 1e9 } }).outlier.ejectionS, 1e9);
  });

  it('setLongTimeout waits past the limit instead of firing after 1 ms, and fires short delays as setTimeout', async () => {
    let long = false;
    const t = setLongTimeout(() => (long = true), MAX_TIMER_MS + 1000);
    let short = false;
    setLongTimeout(() => (short = true), 5);
    await sleep(100);
    t.clear();
    assert.equal(short, true);
    assert.equal(long, false, 'a delay past 2^31 − 1 ms must not fire at once');
  });

  it('startEmulator refuses an empty host or served name and a delay past the limit before listening', async () => {
    const base = { model: MODEL, hardware: 'h100-80gb', port: 0 };
    await assert.rejects(startEmulator({ ...base, host: '' }), /host: expected a non-empty listen address/);
    await assert.rejects(startEmulator({ ...base, servedNames: [''] }), /servedNames: expected non-empty model names/);
    await assert.rejects(startEmulator({ ...base, crashAfterS: 3e6 }), RangeError);
    await assert.rejects(startEmulator({ ...base, startupDelayS: 3e6 }), RangeError);
  });

  it('an emulator at a tiny time scale keeps its steps days long instead of running them at once', async () => {
    // At 1e-9× a decode step of ~10 ms is ~10^7 s of wall time: past the limit, so the old timer fired after 1 ms
    // and the answer came at once.
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', port: 0, timeScale: 1e-9 });
    try {
      const r = await fetch(`${emu.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, prompt: 'hi', max_tokens: 2 }),
        signal: AbortSignal.timeout(400),
      }).then(
        (res) => `answered ${res.status}`,
        (e: Error) => e.name,
      );
      assert.equal(r, 'TimeoutError');
      assert.equal(emu.backend.finished.length, 0);
    } finally {
      await emu.close();
    }
  });

  it('replay does not send a request due past the limit early (it used to go after 1 ms with late_s 0)', async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      // Completions only: replay first checks --model against /v1/models.
      if (req.url !== '/v1/models') requests++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"choices":[{"text":"x"}]}\n\ndata: {"choices":[],"usage":{"completion_tokens":1}}\n\ndata: [DONE]\n\n');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'llmfleet-timers-'));
    const trace = join(dir, 'far.csv');
    // The second request is due 3,000,000 s (34.7 days) after the first.
    writeFileSync(trace, 'arrival_s,input_tokens,output_tokens\n0,10,1\n3000000,10,1\n');
    const child = spawn(process.execPath, [BIN, 'replay', '--url', url, '--model', MODEL, '--trace', trace, '--no-ignore-eos', '--quiet', '--out', join(dir, 'out')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const deadline = Date.now() + 15_000;
      while (requests === 0 && child.exitCode === null && Date.now() < deadline) await sleep(50);
      assert.equal(requests, 1, `the first request was sent (${stderr})`);
      await sleep(1000);
      assert.equal(child.exitCode, null, `replay must still be waiting for the second request (${stderr})`);
      assert.equal(requests, 1, 'the second request must not be sent 34 days early');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      server.close();
    }
  });
});
