import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { startEmulator, type Emulator } from '../../src/live/emulator/server.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { startGateway } from '../../src/live/gateway/gateway.ts';
import { promptBlockHashes, PROMPT_HASH_BLOCK_TOKENS } from '../../src/live/prompt-hashes.ts';
import { MODEL } from './helpers.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replay } from '../../src/live/replay.ts';
import { openTrace } from '../../src/workload/trace.ts';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor } from '../helpers/sim.ts';

const BLOCK_BYTES = PROMPT_HASH_BLOCK_TOKENS * 4;

test('prompt hashes: one per full block, equal exactly as far as two prompts agree block by block', () => {
  const shared = 'S'.repeat(3 * BLOCK_BYTES);
  const a = promptBlockHashes({ prompt: shared + 'a'.repeat(BLOCK_BYTES + 10) }, false);
  const b = promptBlockHashes({ prompt: shared + 'b'.repeat(BLOCK_BYTES) }, false);
  assert.equal(a.length, 4, 'the partial fifth block has no hash');
  assert.equal(b.length, 4);
  assert.deepEqual(a.slice(0, 3), b.slice(0, 3));
  assert.notEqual(a[3], b[3]);
  // Chained: the same block after a different prefix hashes differently.
  const c = promptBlockHashes({ prompt: 'T'.repeat(BLOCK_BYTES) + 'S'.repeat(2 * BLOCK_BYTES) }, false);
  assert.notEqual(c[1], a[1]);
  assert.ok(a.every((h) => Number.isSafeInteger(h) && h >= 0));
  assert.deepEqual(promptBlockHashes({ prompt: 'short' }, false), []);
  // Token ids: blocks of 16 ids; a chat reads role and text.
  const ids = Array.from({ length: 40 }, (_, i) => i);
  assert.equal(promptBlockHashes({ prompt: ids }, false).length, 2);
  assert.deepEqual(promptBlockHashes({ prompt: ids }, false), promptBlockHashes({ prompt: [...ids.slice(0, 32), 7] }, false));
  const chat = (sys: string, user: string) => promptBlockHashes({ messages: [{ role: 'system', content: sys }, { role: 'user', content: [{ type: 'text', text: user }] }] }, true);
  const [x, y] = [chat(shared, 'question one'), chat(shared, 'another question')];
  assert.ok(x.length >= 3);
  assert.deepEqual(x.slice(0, 3), y.slice(0, 3));
  assert.notDeepEqual(chat('other system prompt'.repeat(20), 'q').slice(0, 1), x.slice(0, 1));
});

describe('prefix caching on the live plane', { timeout: 60_000 }, () => {
  it('replay turns a trace\'s hash_ids into prompts that share those prefixes: the emulator finds what the simulator finds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmfleet-prefix-replay-'));
    const path = join(dir, 'trace.jsonl');
    const rows = [
      { timestamp: 0, input_length: 1100, output_length: 2, hash_ids: [1, 2, 3] },
      { timestamp: 200, input_length: 1500, output_length: 2, hash_ids: [1, 2, 4] },
      { timestamp: 400, input_length: 700, output_length: 2, hash_ids: [1, 5] },
      { timestamp: 600, input_length: 1100, output_length: 2, hash_ids: [9, 2, 3] },
    ];
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const simulated = summarize(run(scenarioFor('', { workload: { trace: { path, format: 'mooncake' } }, engine: { prefixCache: true } }), 'fast'), 0).engine.prefixCache!;
    // Block 0 (512 tokens) again for the second and third, blocks 0–1 for the second: 1024 + 512 tokens.
    assert.equal(simulated.hitTokens, 1024 + 512);
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20, engine: { prefixCache: true } });
    try {
      const res = await replay(emu.url, openTrace(path, 'mooncake'), { timeScale: 20, modelOf: () => MODEL, timeoutS: 30, maxInFlight: 8, ignoreEos: true });
      assert.ok(res.every((r) => r.failure === ''), JSON.stringify(res));
      const m = await (await fetch(`${emu.url}/metrics`)).text();
      assert.equal(Number(/^vllm:prefix_cache_hits_total\{[^}]*\} (\d+)/m.exec(m)![1]), simulated.hitTokens);
      assert.equal(Number(/^vllm:prefix_cache_queries_total\{[^}]*\} (\d+)/m.exec(m)![1]), simulated.queryTokens);
    } finally {
      await emu.close();
    }
  });

  it('the emulator with --enable-prefix-caching reports vLLM\'s prefix-cache counters; prefix-aware routing keeps a prefix on one backend', async () => {
    const emus: Emulator[] = [];
    try {
      for (let i = 0; i < 2; i++) emus.push(await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 50, engine: { prefixCache: true } }));
      const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, routing: { policy: 'prefix-aware' }, pools: [{ model: MODEL, hardware: 'h100-80gb', backends: emus.map((e) => e.url) }] }));
      try {
        const families = ['A', 'B', 'C'].map((f) => f.repeat(40 * BLOCK_BYTES));
        const backendOf = new Map<string, Set<string>>();
        // One at a time (an idle fleet): each family's later requests find their prefix remembered on one backend.
        for (let i = 0; i < 9; i++) {
          const fam = families[i % 3]!;
          const r = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: fam + ` question ${i}`, max_tokens: 2 }) });
          await r.arrayBuffer();
          assert.equal(r.status, 200);
          const set = backendOf.get(fam) ?? new Set();
          set.add(r.headers.get('x-llmfleet-backend')!);
          backendOf.set(fam, set);
        }
        for (const s of backendOf.values()) assert.equal(s.size, 1, 'each family stays on one backend');
        let hits = 0;
        let queries = 0;
        for (const e of emus) {
          const m = await (await fetch(`${e.url}/metrics`)).text();
          hits += Number(/^vllm:prefix_cache_hits_total\{[^}]*\} (\d+)/m.exec(m)![1]);
          queries += Number(/^vllm:prefix_cache_queries_total\{[^}]*\} (\d+)/m.exec(m)![1]);
        }
        // 9 prompts of 640+ tokens; the 6 repeats each find 40 blocks (640 tokens) cached.
        assert.ok(queries >= 9 * 640, `${queries}`);
        assert.equal(hits, 6 * 40 * PROMPT_HASH_BLOCK_TOKENS);
      } finally {
        await gw.close();
      }
    } finally {
      await Promise.all(emus.map((e) => e.close()));
    }
  });
});
