import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrefixCache } from '../../src/engine/prefix-cache.ts';
import { summarize, type Summary } from '../../src/metrics/summary.ts';
import { scenarioSchema } from '../../src/scenario/schema.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { openTrace } from '../../src/workload/trace.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { outcomes, run, scenarioFor, writeTrace } from '../helpers/sim.ts';

test('PrefixCache: a hit is the leading run of cached blocks; eviction takes a prompt\'s tail before its head', () => {
  const c = new PrefixCache(4 * 512);
  c.insert([1, 2, 3], 512, 3);
  assert.equal(c.match([1, 2, 3, 4], 512, 4), 3 * 512);
  assert.equal(c.match([1, 9, 3], 512, 3), 512, 'stops at the first miss');
  assert.equal(c.match([1, 2, 3], 512, 2), 2 * 512, 'only the full blocks asked for');
  // Two more blocks overflow the 4-block capacity by one: the least recent, block 3 (the first prompt's tail) goes.
  c.insert([7, 8], 512, 2);
  assert.equal(c.size, 4 * 512);
  assert.equal(c.match([1, 2, 3], 512, 3), 2 * 512);
  assert.equal(c.match([7, 8], 512, 2), 2 * 512);
  // A refresh makes blocks most recent: 1, 2 survive the next insertion, 7 and 8 do not.
  c.insert([1, 2], 512, 2);
  c.insert([5, 6], 512, 2);
  assert.equal(c.match([1, 2], 512, 2), 1024);
  assert.equal(c.match([7], 512, 1), 0);
});

test('PrefixCache: held blocks are never evicted; the last release frees a block as the most recent; a request\'s own run shrinks from its tail', () => {
  const c = new PrefixCache(Infinity, 16);
  c.hold(1, 16);
  c.hold(1, 16);
  c.hold(2, 16);
  assert.equal(c.heldTokens, 32, 'a block held twice is stored once');
  assert.equal(c.holders(1), 2);
  c.putRun(7.5, 64);
  c.evictTo(0);
  assert.equal(c.runTokens(7.5), 0, 'free entries go');
  assert.ok(c.has(1) && c.has(2) && c.heldTokens === 32, 'held ones stay');
  c.release(1);
  assert.equal(c.heldTokens, 32, 'one holder left');
  c.release(2);
  c.release(1); // free, oldest first: 2, 1
  assert.equal(c.heldTokens, 0);
  assert.equal(c.size, 32);
  c.putRun(3.5, 64); // free: 2, 1, the run
  c.evictTo(80);
  assert.ok(!c.has(2) && c.has(1) && c.runTokens(3.5) === 64);
  c.evictTo(40); // block 1 goes, then the run loses two 16-token blocks
  assert.ok(!c.has(1));
  assert.equal(c.runTokens(3.5), 32);
});

/** A Mooncake trace (512-token blocks) of the given rows. */
function mooncake(rows: { t: number; in: number; out: number; hashes?: number[] }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-prefix-'));
  const path = join(dir, 'trace.jsonl');
  writeFileSync(path, rows.map((r) => JSON.stringify({ timestamp: r.t * 1000, input_length: r.in, output_length: r.out, ...(r.hashes ? { hash_ids: r.hashes } : {}) })).join('\n') + '\n');
  return path;
}

const rows = [
  { t: 0, in: 2048, out: 4, hashes: [1, 2, 3, 4] },
  { t: 10, in: 2048, out: 4, hashes: [1, 2, 3, 5] }, // shares 3 blocks with the first
  { t: 20, in: 2048, out: 4, hashes: [9, 10, 11, 12] }, // shares none
  { t: 30, in: 2048, out: 4, hashes: [1, 2, 3, 4] }, // the first prompt again: all but its last token cached
  { t: 40, in: 2048, out: 4 }, // no hashes: never a hit
];
const scenario = (prefixCache: boolean) => scenarioFor('', { workload: { trace: { path: mooncake(rows), format: 'mooncake' } }, engine: { prefixCache } });

test('engine.prefixCache: a prompt skips the prefill of its cached prefix (a wholly cached one recomputes its last engine block, as vLLM); summary counts the hits', () => {
  const on = run(scenario(true), 'fast');
  const off = run(scenario(false), 'fast');
  const ttft = (res: typeof on) => Array.from({ length: rows.length }, (_, i) => res.log.ttft[i]!);
  const [a, b, c, d, e] = ttft(on);
  // linearPerf's prefill: 1 ms + 0.01 ms a token.
  assert.ok(Math.abs(a! - (0.001 + 2048e-5)) < 1e-12, `${a}`);
  assert.ok(Math.abs(b! - (0.001 + 512e-5)) < 1e-12, `${b}`);
  assert.ok(Math.abs(c! - a!) < 1e-12 && Math.abs(e! - a!) < 1e-12);
  assert.ok(Math.abs(d! - (0.001 + 16e-5)) < 1e-12, `${d}`); // its last 16-token block
  for (const t of ttft(off)) assert.ok(Math.abs(t - a!) < 1e-12, 'without the cache every prompt is prefilled whole');
  const s = summarize(on, 0);
  assert.deepEqual(s.engine.prefixCache, { queryTokens: 5 * 2048, hitTokens: 1536 + 2032, hitRate: (1536 + 2032) / (5 * 2048) });
  assert.equal(summarize(off, 0).engine.prefixCache, undefined);
  assert.deepEqual(outcomes(run(scenario(true), 'step')), outcomes(on), 'step mode agrees with fast mode');
});

test('engine.prefixCache: in a small KV cache a prefix loses its tail blocks first and the rest still hits; vllm-v0 hits too', () => {
  // 3,072 tokens of KV (6 trace blocks): the first prompt's blocks stay cached in the free KV until the third prompt
  // (4 blocks + its decodes) leaves room for only one of them: its tail goes first, and its head still hits.
  const small = (scheduler: string) => scenarioFor('', {
    workload: { trace: { path: mooncake([rows[0]!, rows[2]!, { ...rows[3]!, t: 30 }]), format: 'mooncake' } },
    engine: { prefixCache: true, kvCapacityTokens: 3072, scheduler, ...(scheduler === 'vllm-v0' ? { chunkedPrefill: false } : {}) },
  });
  const s = summarize(run(small('vllm'), 'fast'), 0);
  assert.equal(s.engine.prefixCache!.hitTokens, 512);
  const big = scenarioFor('', { workload: { trace: { path: mooncake(rows.slice(0, 2)), format: 'mooncake' } }, engine: { prefixCache: true, scheduler: 'vllm-v0', chunkedPrefill: false } });
  assert.equal(summarize(run(big, 'fast'), 0).engine.prefixCache!.hitTokens, 1536);
});

test('engine.prefixCache: running requests that share a prefix store its blocks once, so more of them fit in KV', () => {
  // 4,096 tokens of KV. A's 2,048-token prompt becomes shared blocks when its prefill ends; B and C share its first
  // three 512-token blocks. Stored once: 2,048 + 512 + 512 tokens plus decodes fit, so B and C start at once.
  // Per request (2,048 each plus decodes) they would not: B and C wait for A to finish (~1 s of decodes).
  const trace = mooncake([
    { t: 0, in: 2048, out: 200, hashes: [1, 2, 3, 4] },
    { t: 0.1, in: 2048, out: 20, hashes: [1, 2, 3, 5] },
    { t: 0.1, in: 2048, out: 20, hashes: [1, 2, 3, 6] },
  ]);
  const sc = (prefixCache: boolean) => scenarioFor('', { workload: { trace: { path: trace, format: 'mooncake' } }, engine: { prefixCache, kvCapacityTokens: 4096 } });
  const on = run(sc(true), 'fast');
  for (const i of [1, 2]) assert.ok(on.log.ttft[i]! < 0.05, `request ${i} TTFT ${on.log.ttft[i]} s: it should start beside A`);
  assert.deepEqual(Array.from(on.log.preemptions.slice(0, 3)), [0, 0, 0]);
  assert.equal(summarize(on, 0).engine.prefixCache!.hitTokens, 2 * 1536);
  assert.deepEqual(outcomes(run(sc(true), 'step')), outcomes(on), 'step mode agrees with fast mode');
  const off = run(sc(false), 'fast');
  assert.ok(off.log.ttft[2]! > 0.5, `without the cache C waits for A: TTFT ${off.log.ttft[2]} s`);
});

test('engine.prefixCache: a preempted request finds its own blocks still cached when it resumes, less those the KV growth since evicted', () => {
  // No block hashes: only a request's own blocks can hit. 1,024 tokens of KV; two 400-token prompts decode until B
  // (the newer) is preempted at 512 tokens of context. Its blocks stay cached in the free KV, and A's growth to 700
  // tokens evicts B's tail: 320 tokens (20 blocks) are left when A finishes and B resumes, so B recomputes 320
  // fewer tokens (3.2 ms at 0.01 ms a token) than without the cache.
  const trace = writeTrace([
    { t: 0, in: 400, out: 300 },
    { t: 0, in: 400, out: 300 },
  ]);
  const sc = (prefixCache: boolean) => scenarioFor(trace, { engine: { prefixCache, kvCapacityTokens: 1024 } });
  const on = run(sc(true), 'fast');
  const off = run(sc(false), 'fast');
  assert.deepEqual(Array.from(on.log.preemptions.slice(0, 2)), [0, 1]);
  assert.equal(summarize(on, 0).engine.prefixCache!.hitTokens, 320);
  assert.ok(Math.abs(off.log.e2e[1]! - on.log.e2e[1]! - 320e-5) < 1e-9, `${off.log.e2e[1]} vs ${on.log.e2e[1]}`);
  assert.deepEqual(outcomes(run(sc(true), 'step')), outcomes(on), 'step mode agrees with fast mode');
});

test('engine.prefixCache with scheduler splitwise is refused; hash_ids that are not a list of integers name the line', () => {
  const r = scenarioSchema.safeParse({ name: 'x', workload: { trace: { path: 't.csv' } }, fleet: { pools: [{ model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }] }, engine: { scheduler: 'splitwise', chunkedPrefill: false, prefixCache: true } });
  assert.equal(r.success, false);
  assert.match(JSON.stringify(r.error!.issues[0]), /prefixCache.*SplitwiseSim has no prefix cache/);
  const path = mooncake([{ t: 0, in: 10, out: 2, hashes: [1] }]);
  writeFileSync(path, `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}\n{"timestamp": 5, "input_length": 10, "output_length": 2, "hash_ids": ["a"]}\n`);
  assert.throws(() => [...openTrace(path, 'mooncake')], (e: unknown) => e instanceof ConfigError && /trace\.jsonl:2 hash_ids: expected a list of integers/.test(e.message));
});

test('a pool whose merged engine is splitwise with prefixCache is refused at load, naming the pool field', () => {
  const load = (sets: string[]) => {
    try {
      loadScenario({ file: 'scenarios/splitwise-baseline.yaml', sets });
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  };
  assert.match(load(['fleet.pools.0.engine.prefixCache=true']), /fleet\.pools\[0\]\.engine\.prefixCache: expected false or absent with scheduler splitwise/);
  assert.match(load(['engine.scheduler=vllm', 'engine.prefixCache=true', 'fleet.pools.0.engine.scheduler=splitwise']), /fleet\.pools\[0\]\.engine\.scheduler: expected vllm or vllm-v0 with engine\.prefixCache/);
  assert.equal(load(['engine.scheduler=vllm', 'engine.prefixCache=true']), '');
});

test('scenarios/prefix-cache.yaml: the cache lifts attainment, and prefix-aware routing finds more of the prompts cached than round-robin', () => {
  const out = mkdtempSync(join(tmpdir(), 'llmfleet-prefix-compare-'));
  execFileSync(process.execPath, ['bin/llmfleet.js', 'compare', '--scenario', 'scenarios/prefix-cache.yaml', '--set', 'workload.synthetic.durationS=120', '--quiet', '--out', out]);
  const j = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8')) as { variants: { name: string; summary: Summary }[] };
  const by = Object.fromEntries(j.variants.map((v) => [v.name, v.summary]));
  assert.deepEqual(Object.keys(by), ['no-cache', 'round-robin', 'least-requests', 'prefix-aware']);
  assert.equal(by['no-cache']!.engine.prefixCache, undefined);
  assert.ok(by['round-robin']!.slo.attainment > by['no-cache']!.slo.attainment);
  assert.ok(by['prefix-aware']!.engine.prefixCache!.hitRate > by['round-robin']!.engine.prefixCache!.hitRate);
});
