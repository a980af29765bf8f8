import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startEmulator, type Emulator } from '../../src/live/emulator/server.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { startGateway } from '../../src/live/gateway/gateway.ts';
import { ROUTER_NAMES } from '../../src/policy/routing/registry.ts';
import { MODEL } from './helpers.ts';

describe('simulator routers on the live fleet view', { timeout: 60_000 }, () => {
  it('every registered router, with default options, serves requests through the gateway', async () => {
    const emus: Emulator[] = [];
    try {
      for (let i = 0; i < 2; i++) emus.push(await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 50 }));
      const failures: string[] = [];
      for (const policy of ROUTER_NAMES) {
        let gw;
        try {
          gw = await startGateway(gatewayConfigSchema.parse({ port: 0, routing: { policy }, pools: [{ model: MODEL, hardware: 'h100-80gb', backends: emus.map((e) => e.url) }] }));
        } catch (e) {
          failures.push(`${policy}: cannot start (${(e as Error).message})`);
          continue;
        }
        try {
          const statuses = await Promise.all(
            Array.from({ length: 6 }, (_, i) =>
              fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'x'.repeat(40 * (i + 1)), max_tokens: 4 }) }).then(async (r) => {
                await r.arrayBuffer();
                return r.status;
              }),
            ),
          );
          if (!statuses.every((s) => s === 200)) failures.push(`${policy}: statuses ${statuses.join(',')}`);
        } finally {
          await gw.close();
        }
      }
      assert.deepEqual(failures, []);
    } finally {
      await Promise.all(emus.map((e) => e.close()));
    }
  });

  it('least-requests sends more work to a faster backend (an H100 beside an L4)', async () => {
    // 40 output tokens: ≈ 0.2 s modelled on the H100, ≈ 2 s on the L4 (11× less memory bandwidth); at 2× and one
    // arrival every 25 ms wall, the L4 always holds a request or two while the H100 keeps emptying.
    const fast = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 2 });
    const slow = await startEmulator({ model: MODEL, hardware: 'l4', timeScale: 2 });
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, routing: { policy: 'least-requests' }, pools: [{ model: MODEL, backends: [fast.url, slow.url] }] }));
    try {
      const counts = new Map<string, number>();
      const jobs: Promise<void>[] = [];
      for (const e of [fast, slow]) await (await fetch(`${e.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'warm', max_tokens: 1 }) })).text();
      for (let i = 0; i < 24; i++) {
        jobs.push(
          fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: new Array(500).fill(1), max_tokens: 40 }) }).then(async (r) => {
            await r.arrayBuffer();
            const b = r.headers.get('x-llmfleet-backend')!;
            counts.set(b, (counts.get(b) ?? 0) + 1);
          }),
        );
        await new Promise((r) => setTimeout(r, 25));
      }
      await Promise.all(jobs);
      assert.ok((counts.get(fast.url) ?? 0) >= 2 * (counts.get(slow.url) ?? 0), JSON.stringify(Object.fromEntries(counts)));
    } finally {
      await gw.close();
      await fast.close();
      await slow.close();
    }
  });
});

it('the gateway refuses a router that would migrate running requests, naming the option', async () => {
  const cfg = gatewayConfigSchema.parse({ port: 0, routing: { policy: 'llumnix', options: { migration: { enabled: true } } }, pools: [{ model: MODEL, backends: ['http://127.0.0.1:9'] }] });
  await assert.rejects(startGateway(cfg), /routing\.options\.migration\.enabled/);
});
