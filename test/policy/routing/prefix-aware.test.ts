import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRouter } from '../../../src/policy/routing/registry.ts';
import type { RequestView } from '../../../src/policy/types.ts';
import { summarize } from '../../../src/metrics/summary.ts';
import { Rng } from '../../../src/util/rng.ts';
import { run, scenarioFor } from '../../helpers/sim.ts';
import { fleetView, instance, newReq } from '../preserve/helpers.ts';

const ctx = { rng: new Rng(1) };
const withHashes = (hashes: number[], inputTokens = 2048, id = 1): RequestView => ({ ...newReq(inputTokens, 10, id), prefixHashes: hashes, prefixBlockTokens: 512 });

test('prefix-aware: cost = overlapWeight × uncached prompt tokens + KV in use + pending prompt tokens; ties to the lowest id', () => {
  // Instance 0 carries 1,000 tokens (600 in KV, 400 pending); instance 1 is idle.
  const busy = instance(0, [], { kvCapacityTokens: 10_000, kvUsedFraction: 0.06, pendingTokens: 400 });
  const idle = instance(1, [], { kvCapacityTokens: 10_000 });
  const v = fleetView([busy, idle]);
  const pick = (overlapWeight: number, second: RequestView) => {
    const r = createRouter('prefix-aware', { overlapWeight }, ctx);
    // Only instance 0 can take the first request: its 4 blocks are remembered there.
    assert.equal((r.route(withHashes([1, 2, 3, 4]), fleetView([busy])) as { to: number }).to, 0);
    return r.route(second, v) as { to: number; reason: string };
  };
  // Sharing 3 blocks: instance 0 costs 1 × 512 + 1000 = 1512 < 2048 on instance 1.
  assert.deepEqual(pick(1, withHashes([1, 2, 3, 5], 2048, 2)), { kind: 'send', to: 0, reason: 'prefix-hit' });
  // At weight 0.5: 256 + 1000 = 1256 > 1024.
  assert.deepEqual(pick(0.5, withHashes([1, 2, 3, 5], 2048, 2)), { kind: 'send', to: 1, reason: 'least-load' });
  // Exactly equal costs (2 × 512 + 1000 = 2000 = 2 × 1000) go to the lowest id.
  assert.deepEqual(pick(2, withHashes([1, 2, 3, 5], 1536 + 464, 2)), { kind: 'send', to: 0, reason: 'prefix-hit' });
  // No hashes, or another prefix: load alone.
  assert.equal(pick(1, newReq(2048, 10, 2)).to, 1);
  assert.equal(pick(1, withHashes([9, 2, 3, 4], 2048, 2)).to, 1);
  assert.equal(createRouter('prefix-aware', {}, ctx).route(newReq(10, 10), fleetView([])).kind, 'defer');
});

test('prefix-aware: forgets the least recently sent blocks beyond an instance\'s KV capacity', () => {
  const small = instance(0, [], { kvCapacityTokens: 4 * 512 });
  const other = instance(1, [], { kvCapacityTokens: 4 * 512, pendingTokens: 100 });
  const r = createRouter('prefix-aware', {}, ctx);
  r.route(withHashes([1, 2, 3, 4]), fleetView([small]));
  r.route(withHashes([5, 6, 7, 8]), fleetView([small]));
  // [1, 2, 3, 4] was pushed out: no overlap on 0, which carries less load than 1 only by the pending 100 tokens.
  assert.deepEqual(r.route(withHashes([1, 2, 3, 4], 2048, 3), fleetView([small, other])), { kind: 'send', to: 0, reason: 'least-load' });
  assert.deepEqual(r.route(withHashes([5, 6, 7, 9], 2048, 4), fleetView([other, small])), { kind: 'send', to: 0, reason: 'least-load' });
});

test('prefix-aware with engine.prefixCache: keeps each shared prefix on one instance and finds more of the prompt cached than round-robin', () => {
  // Three prompt families (3 shared 512-token blocks each) in turn on two instances, far apart in time (idle fleet).
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-prefix-route-'));
  const path = join(dir, 'trace.jsonl');
  const lines = Array.from({ length: 12 }, (_, i) => {
    const g = i % 3;
    return JSON.stringify({ timestamp: i * 10_000, input_length: 2048, output_length: 4, hash_ids: [g * 100, g * 100 + 1, g * 100 + 2, 1000 + i] });
  });
  writeFileSync(path, lines.join('\n') + '\n');
  const hitRate = (policy: string) => {
    const sc = scenarioFor('', {
      workload: { trace: { path, format: 'mooncake' } },
      fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 2 }] },
      engine: { prefixCache: true },
      routing: { policy },
    });
    return summarize(run(sc, 'fast'), 0).engine.prefixCache!.hitRate;
  };
  // Round-robin sends each family to both instances (misses on each first visit: 6 of 12); prefix-aware, on an idle
  // fleet, keeps them all on one (3 misses).
  const total = 12 * 2048;
  assert.equal(hitRate('round-robin'), (6 * 1536) / total);
  assert.equal(hitRate('prefix-aware'), (9 * 1536) / total);
});
