import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { startCli, stopCli } from '../helpers/cli.ts';
import { MODEL, startFleet } from './helpers.ts';

const post = (url: string, model: string) =>
  fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, prompt: 'hi', max_tokens: 2 }) });

describe('several model names per backend (vLLM --served-model-name a b, LoRA adapters)', { timeout: 90_000 }, () => {
  it('routes a request naming an alias to its pool and forwards the name unchanged; /v1/models lists every name', async () => {
    const f = await startFleet(2, { servedNames: [MODEL, 'chat'] }, { pools: [{ model: MODEL, aliases: ['chat'], backends: [] }] });
    try {
      // startFleet's pool override has no backends: add the emulators to it.
      for (const e of f.emus) f.gw.addBackend(MODEL, e.url);
      await new Promise((r) => setTimeout(r, 500));
      const r = await post(f.gw.url, 'chat');
      assert.equal(r.status, 200);
      assert.equal(((await r.json()) as { model: string }).model, 'chat', 'the backend saw (and echoed) the alias');
      assert.equal((await post(f.gw.url, 'other')).status, 404);
      const models = (await (await fetch(`${f.gw.url}/v1/models`)).json()) as { data: { id: string; parent: string | null }[] };
      assert.deepEqual(
        models.data.map((m) => [m.id, m.parent]),
        [
          [MODEL, null],
          ['chat', MODEL],
        ],
      );
    } finally {
      await f.close();
    }
  });

  it('refuses a name served twice, alias or model, naming both places', () => {
    const r = gatewayConfigSchema.safeParse({ pools: [{ model: 'a', aliases: ['b'] }, { model: 'c', aliases: ['b'] }] });
    assert.equal(r.success, false);
    const issue = r.error!.issues[0];
    assert.deepEqual(issue.path, ['pools', 1, 'aliases', 0]);
    assert.match(issue.message, /'b' is pools\[0\]\.aliases\[0\]/);
    const r2 = gatewayConfigSchema.safeParse({ pools: [{ model: 'a', aliases: ['a'] }] });
    assert.match(r2.error!.issues[0].message, /'a' is pools\[0\]\.model/);
  });

  it('serve --backend discovers every name a backend lists and refuses backends of one model that disagree', async () => {
    const kids: ChildProcess[] = [];
    try {
      const emu = await startCli(['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--time-scale', '20', '--served-name', 'base', '--served-name', 'chat']);
      kids.push(emu.child);
      const other = await startCli(['emulate', '--model', MODEL, '--hardware', 'h100-80gb', '--port', '0', '--time-scale', '20', '--served-name', 'base']);
      kids.push(other.child);
      const gw = await startCli(['serve', '--port', '0', '--backend', emu.url]);
      kids.push(gw.child);
      assert.equal((await post(gw.url, 'chat')).status, 200);
      assert.equal((await post(gw.url, 'base')).status, 200);
      assert.equal(await stopCli(gw.child), 0);
      const bad = await startCli(['serve', '--port', '0', '--backend', emu.url, '--backend', other.url]).then(
        () => assert.fail('serve started over backends that disagree'),
        (e: Error) => e.message,
      );
      assert.match(bad, /^exited 2: llmfleet: --backend http:\/\/127\.0\.0\.1:\d+: backends of model 'base' serve different names .*serves base, chat; .*serves base\); list them in a --config file's pools\[\]\.aliases/);
      assert.equal(await stopCli(emu.child), 0);
      assert.equal(await stopCli(other.child), 0);
    } finally {
      for (const k of kids) if (k.exitCode === null) k.kill('SIGKILL');
    }
  });
});
