import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter } from '../../../src/policy/routing/registry.ts';
import { Rng } from '../../../src/util/rng.ts';
import { fleetView, instance, newReq, prog } from '../preserve/helpers.ts';

const ctx = { rng: new Rng(1) };
const to = (d: { kind: string; to?: number }) => (d.kind === 'send' ? d.to : -1);

// M = 10,000. 0: one request holding 3,000 tokens → KV ratio 0.30, free per request 7,000.
// 1: ten requests holding 200 tokens each → KV ratio 0.20, free per request 8,000 / 10 = 800.
const busyButRoomy = () =>
  fleetView([
    instance(0, [prog({ inputTokens: 3000, predicted: 10, generated: 1 })]),
    instance(1, Array.from({ length: 10 }, (_, i) => prog({ id: i, inputTokens: 200, predicted: 10, generated: 1 }))),
  ]);

test('llumnix defaults to Llumnix’s remaining-steps dispatch metric (most free KV per request)', () => {
  assert.equal(to(createRouter('llumnix', {}, ctx).route(newReq(10, 10), busyButRoomy())), 0);
});

test('llumnix kv-blocks-ratio picks the lowest (used + waiting) / capacity instead', () => {
  assert.equal(to(createRouter('llumnix', { metric: 'kv-blocks-ratio' }, ctx).route(newReq(10, 10), busyButRoomy())), 1);
});

test('llumnix remaining-steps prefers an instance with no requests at all, as Llumnix’s infinite freeness does', () => {
  // 0 holds one tiny request (free 9,990 per request); 1 is empty: Llumnix scores it +∞ remaining steps.
  const v = fleetView([instance(0, [prog({ inputTokens: 10, predicted: 10, generated: 1 })]), instance(1, [])]);
  assert.equal(to(createRouter('llumnix', {}, ctx).route(newReq(10, 10), v)), 1);
});

test('llumnix rejects an unknown metric with the option path', () => {
  assert.throws(() => createRouter('llumnix', { metric: 'usage' }, ctx), /routing\.options\.metric/);
});

test('llumnix with refreshS reuses the loads it read until the interval has passed', () => {
  const r = createRouter('llumnix', { refreshS: 0.05 }, ctx);
  const a = fleetView([instance(0, []), instance(1, [prog({ inputTokens: 10, predicted: 10, generated: 1 })])], 0);
  assert.equal(to(r.route(newReq(10, 10), a)), 0);
  // 0 is now busy, but at t = 0.04 the dispatcher still uses the loads read at t = 0 ...
  const b = (t: number) => fleetView([instance(0, [prog({ inputTokens: 9000, predicted: 10, generated: 1 })]), instance(1, [prog({ inputTokens: 10, predicted: 10, generated: 1 })])], t);
  assert.equal(to(r.route(newReq(10, 10), b(0.04))), 0);
  // ... and re-reads them at t = 0.05; a fresh dispatcher sees the change at once.
  assert.equal(to(r.route(newReq(10, 10), b(0.05))), 1);
  assert.equal(to(createRouter('llumnix', {}, ctx).route(newReq(10, 10), b(0.04))), 1);
});

// ---- migration (Llumnix --enable-migration) ----

const migrating = (o: Record<string, unknown> = {}) => createRouter('llumnix', { migration: { enabled: true, ...o } }, ctx);

// M = 1,600 tokens = 100 blocks of 16. 0: four requests holding 390 tokens each → 40 free tokens = 2.5 blocks,
// 0.625 blocks per request (< 3: a source). 1: one request of 100 tokens → 93.75 free blocks (a destination).
// 2: two requests of 600 tokens → 400 free tokens = 25 blocks, 12.5 per request (a destination, less free than 1).
const crowded = () =>
  fleetView([
    instance(0, [
      prog({ id: 10, inputTokens: 300, predicted: 200, generated: 91 }),
      prog({ id: 11, inputTokens: 200, predicted: 300, generated: 191 }),
      prog({ id: 12, inputTokens: 389, predicted: 10, generated: 2 }),
      prog({ id: 13, inputTokens: 390, predicted: 10, generated: 1 }),
    ], { kvCapacityTokens: 1600 }),
    instance(1, [prog({ id: 20, inputTokens: 100, predicted: 10, generated: 1 })], { kvCapacityTokens: 1600 }),
    instance(2, [prog({ id: 30, inputTokens: 600, predicted: 10, generated: 1 }), prog({ id: 31, inputTokens: 600, predicted: 10, generated: 1 })], { kvCapacityTokens: 1600 }),
  ]);

test('llumnix migrates only when enabled, every 0.05 s by default', () => {
  assert.equal(createRouter('llumnix', {}, ctx).migrate, undefined);
  assert.equal(migrating().migrateIntervalS, 0.05);
});

test('llumnix migration pairs the most loaded source with the least loaded destination and moves its shortest running request', () => {
  const orders = migrating().migrate!(crowded(), new Set());
  // All four hold 390 tokens: SR takes the first in admission order.
  assert.deepEqual(orders, [{ request: 10, from: 0, to: 1, reason: 'defrag-SR' }]);
});

test('llumnix migration by LR and LCR picks the longest and the last admitted running request', () => {
  const v = fleetView([
    instance(0, [
      prog({ id: 1, inputTokens: 500, predicted: 100, generated: 50 }),
      prog({ id: 2, inputTokens: 300, predicted: 100, generated: 10 }),
      prog({ id: 3, inputTokens: 700, predicted: 100, generated: 1, status: 'running', prefillLeft: 0 }),
    ], { kvCapacityTokens: 1600 }),
    instance(1, [], { kvCapacityTokens: 1600 }),
  ]);
  assert.equal(migrating({ requestPolicy: 'LR' }).migrate!(v, new Set())[0]!.request, 3);
  assert.equal(migrating({ requestPolicy: 'LCR' }).migrate!(v, new Set())[0]!.request, 3);
  assert.equal(migrating({ requestPolicy: 'SR' }).migrate!(v, new Set())[0]!.request, 2);
});

test('llumnix migration leaves alone instances already migrating, roomy sources and requests still in prefill', () => {
  assert.deepEqual(migrating().migrate!(crowded(), new Set([1])), [{ request: 10, from: 0, to: 2, reason: 'defrag-SR' }]);
  assert.deepEqual(migrating().migrate!(crowded(), new Set([0])), []);
  assert.deepEqual(migrating({ outThresholdBlocks: 0.5 }).migrate!(crowded(), new Set()), []);
  const prefilling = fleetView([
    instance(0, [prog({ id: 1, inputTokens: 1590, predicted: 10, generated: 0, prefillLeft: 100 })], { kvCapacityTokens: 1600 }),
    instance(1, [], { kvCapacityTokens: 1600 }),
  ]);
  assert.deepEqual(migrating().migrate!(prefilling, new Set()), []);
});

test('llumnix migration treats an instance with a preempted request waiting to recompute as a source', () => {
  const v = fleetView([
    instance(0, [prog({ id: 1, inputTokens: 100, predicted: 100, generated: 5 }), prog({ id: 2, inputTokens: 50, predicted: 100, generated: 3, status: 'waiting' })], { kvCapacityTokens: 1600 }),
    instance(1, [], { kvCapacityTokens: 1600 }),
  ]);
  assert.deepEqual(migrating().migrate!(v, new Set()), [{ request: 1, from: 0, to: 1, reason: 'defrag-SR' }]);
});

test('llumnix balanced pairing migrates only when it narrows the load gap without inverting it', () => {
  // Source 0: four requests of 390 tokens (0.625 free blocks each). Destination 1 with one small request: moving
  // 390 tokens leaves it far freer than the source (gap narrows) → migrate. Destination 2: two 600-token requests,
  // 25 free blocks; taking 390 tokens leaves ≈ 0.7 blocks per request, below the threshold → no migration.
  const only = (keep: number[]) => fleetView(crowded().instances.filter((i) => keep.includes(i.id)));
  assert.deepEqual(migrating({ pairPolicy: 'balanced' }).migrate!(only([0, 1]), new Set()), [{ request: 10, from: 0, to: 1, reason: 'balanced-SR' }]);
  assert.deepEqual(migrating({ pairPolicy: 'balanced' }).migrate!(only([0, 2]), new Set()), []);
  assert.deepEqual(migrating().migrate!(only([0, 2]), new Set()), [{ request: 10, from: 0, to: 2, reason: 'defrag-SR' }]);
});

test('llumnix migration pairs instances of one region only', () => {
  const v = crowded();
  const east = (i: number) => ({ ...v.instances[i]!, region: 'east', requests: v.instances[i]!.requests }) as typeof v.instances[number];
  const split = fleetView([east(0), v.instances[1]!, v.instances[2]!]);
  assert.deepEqual(migrating().migrate!(split, new Set()), []);
  assert.deepEqual(migrating().migrate!(fleetView([east(0), east(1)]), new Set()), [{ request: 10, from: 0, to: 1, reason: 'defrag-SR' }]);
});

test('llumnix migration thresholds are strict: an instance exactly at outThresholdBlocks is neither source nor destination', () => {
  const only = (keep: number[]) => fleetView(crowded().instances.filter((i) => keep.includes(i.id)));
  // Instance 2 has exactly 12.5 free blocks per request; instance 0 0.625 up to rounding (a hair above it: the
  // exact source-side boundary is tested in router-thresholds.test.ts).
  assert.deepEqual(migrating({ outThresholdBlocks: 0.625 }).migrate!(only([0, 1]), new Set()), []);
  assert.deepEqual(migrating({ outThresholdBlocks: 12.5 }).migrate!(only([0, 2]), new Set()), []);
  assert.equal(migrating({ outThresholdBlocks: 12.4 }).migrate!(only([0, 2]), new Set()).length, 1);
});
