import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MODEL } from './helpers.ts';
import { startCli, stopCli } from '../helpers/cli.ts';

const BIN = 'bin/llmfleet.js';

describe('emulate and serve commands', { timeout: 90_000 }, () => {
  it('run as processes: serve discovers the model, proxies a request, and both exit 0 on SIGTERM', async () => {
    const kids: ChildProcess[] = [];
    try {
      const emu = await startCli(['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--time-scale', '20']);
      kids.push(emu.child);
      const gw = await startCli(['serve', '--port', '0', '--backend', emu.url, '--chat-output-tokens', '100']);
      kids.push(gw.child);
      const r = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'hi', max_tokens: 3 }) });
      const j = (await r.json()) as { usage: { completion_tokens: number } };
      assert.equal(r.status, 200);
      assert.equal(j.usage.completion_tokens, 3);
      assert.equal(await stopCli(gw.child), 0);
      assert.equal(await stopCli(emu.child), 0);
    } finally {
      for (const k of kids) if (k.exitCode === null) k.kill('SIGKILL');
    }
  });

  it('rejects bad flags and config files with exit 2 and one line naming the flag or file:line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmfleet-serve-'));
    const config = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const pool = (backends: string) => `pools:\n  - model: ${MODEL}\n    backends: [${backends}]\n`;
    const cases: [string[], RegExp][] = [
      [['emulate', '--model', 'nope', '--hardware', 'h100-80gb'], /nope/],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--tp', '3'], /--tp: 3 does not divide .* 32 attention heads/],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--time-scale', '0'], /--time-scale: expected a number > 0/],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--stall-after-tokens', '-1'], /--stall-after-tokens: expected an integer ≥ 0, got -1/],
      [['serve', '--backend', 'http://127.0.0.1:1', '--model', MODEL, '--port', '99999'], /^llmfleet: --port: expected 0\.\.65535, got 99999$/m],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--host', 'nohost.invalid'], /cannot listen on nohost\.invalid:8000: the host name does not resolve/],
      [['serve', '--backend', 'http://127.0.0.1:1', '--model', MODEL, '--routing', 'fastest'], /--routing/],
      [['serve', '--backend', 'http://127.0.0.1:1', '--model', MODEL, '--chat-output-tokens', '0'], /^llmfleet: --chat-output-tokens: expected a positive integer, got 0$/m],
      [['serve', '--backend', 'http://127.0.0.1:1', '--backend', 'http://127.0.0.1:1/', '--model', MODEL], /^llmfleet: --backend http:\/\/127\.0\.0\.1:1\/: given twice; each backend once$/m],
      [['serve', '--backend', 'http://127.0.0.1:1', '--model', MODEL, '--host', 'nohost.invalid'], /cannot listen on nohost\.invalid/],
      [['serve', '--backend', 'ftp://127.0.0.1:21', '--model', MODEL], /--backend: expected a base URL/],
      [['serve', '--config', config('ftp.yaml', pool('"ftp://127.0.0.1:21"'))], /ftp\.yaml:3 pools\[0\]\.backends\[0\]: expected a base URL like http:\/\/host:port/],
      [['serve', '--config', config('path.yaml', pool('"http://127.0.0.1:1/v1?x=1"'))], /path\.yaml:3 pools\[0\]\.backends\[0\]: expected a base URL/],
      [['serve', '--config', config('port.yaml', pool('"http://127.0.0.1:99999"'))], /port\.yaml:3 pools\[0\]\.backends\[0\]: expected a base URL/],
      [['serve', '--config', config('dup.yaml', pool('"http://127.0.0.1:1", "http://127.0.0.1:1/"'))], /dup\.yaml:3 pools\[0\]\.backends\[1\]: expected a backend not already listed \(pools\[0\]\.backends\[0\]\)/],
      [['serve', '--config', config('two.yaml', pool('"http://127.0.0.1:1"') + `  - model: ${MODEL}\n`)], /two\.yaml:4 pools\[1\]\.model: expected a model name not already served \('llama3\.1-8b' is pools\[0\]\.model\)/],
      [['serve', '--config', config('mig.yaml', pool('"http://127.0.0.1:1"') + 'routing:\n  policy: llumnix\n  options: { migration: { enabled: true } }\n')], /^llmfleet: routing\.options\.migration\.enabled: expected false in the live plane .*, got true$/m],
      [['serve', '--config', config('window.yaml', pool('"http://127.0.0.1:1"') + `autoscaler:\n  policy: preserve\n  intervalS: 10\n  options: { muPrefill: 1, muDecode: 1, muTotal: 1, windowS: 25 }\n  pools: [{ model: ${MODEL}, maxCount: 2 }]\n`)],
        /window\.yaml:7 autoscaler\.options\.windowS: expected a whole multiple of autoscaler\.intervalS \(10 s\): windows close at scaler ticks, got 25$/m],
      [['serve', '--config', config('opts.yaml', pool('"http://127.0.0.1:1"') + 'routing:\n  policy: jsq\n  options:\n    nonsense: 5\n')], /opts\.yaml:7 routing\.options\.nonsense: expected no unknown key/],
      // Durations past Node's timer limit (2^31 − 1 ms) fired after 1 ms: a 34-day crash at once, a "model load" skipped.
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--crash-after', '3000000'], /^llmfleet: --crash-after: expected a number of seconds ≤ 2147483 \(about 24\.8 days, the longest wait a Node timer holds\), got '3000000'$/m],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--startup-delay', '3000000'], /^llmfleet: --startup-delay: expected a number of seconds ≤ 2147483 .*, got '3000000'$/m],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--startup-delay', '-1'], /^llmfleet: --startup-delay: expected a number of seconds ≥ 0, got '-1'$/m],
      // An empty host listened on every interface; an empty served name served the model id ''.
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--host', ''], /^llmfleet: --host: expected a non-empty listen address, got ''$/m],
      [['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--served-name', ''], /^llmfleet: --served-name: expected a non-empty model name, got ''$/m],
      [['serve', '--backend', 'http://127.0.0.1:1', '--model', MODEL, '--port', '0', '--host', ''], /^llmfleet: --host: expected a non-empty listen address, got ''$/m],
      [['serve', '--config', config('host.yaml', pool('"http://127.0.0.1:1"') + 'host: ""\n')], /host\.yaml:4 host: expected a non-empty listen address \(an empty one would listen on every interface\), got ""$/m],
      ...(
        [
          ['timeouts', 'requestS', '1e9'],
          ['timeouts', 'firstByteS', '1e9'],
          ['timeouts', 'idleS', '1e9'],
          ['admission', 'queueTimeoutS', '1e9'],
          ['health', 'intervalS', '1e9'],
          ['health', 'timeoutS', '1e7'],
        ] as const
      ).map(([section, field, v]): [string[], RegExp] => [
        ['serve', '--config', config(`${field}.yaml`, pool('"http://127.0.0.1:1"') + `${section}:\n  ${field}: ${v}\n`)],
        new RegExp(`${field}\\.yaml:5 ${section}\\.${field}: expected ≤ 2147483 s \\(about 24\\.8 days, the longest wait a Node timer holds\\), got ${Number(v)}$`, 'm'),
      ]),
      [['serve', '--config', config('scrape.yaml', pool('"http://127.0.0.1:1"') + 'scrapeIntervalS: 1e9\n')], /scrape\.yaml:4 scrapeIntervalS: expected ≤ 2147483 s .*, got 1000000000$/m],
      [['serve', '--config', config('drain.yaml', pool('"http://127.0.0.1:1"') + 'drainTimeoutS: 2147484\n')], /drain\.yaml:4 drainTimeoutS: expected ≤ 2147483 s .*, got 2147484$/m],
      [
        ['serve', '--config', config('scaler.yaml', pool('"http://127.0.0.1:1"') + `autoscaler:\n  policy: none\n  intervalS: 1e9\n  pools: [{ model: ${MODEL}, maxCount: 2 }]\n`)],
        /scaler\.yaml:6 autoscaler\.intervalS: expected ≤ 2147483 s .*, got 1000000000$/m,
      ],
    ];
    for (const [args, message] of cases) {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^llmfleet: /);
      assert.match(r.stderr, message);
    }
  });
});
