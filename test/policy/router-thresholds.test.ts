import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter } from '../../src/policy/routing/registry.ts';
import type { InstanceView, RequestView } from '../../src/policy/types.ts';
import { Rng } from '../../src/util/rng.ts';
import { fleetView, instance, newReq, prog } from './preserve/helpers.ts';

// Threshold and tie edges of the Llumnix, SageServe and PreServe routers, each probed at the exact boundary value
// (numbers chosen to be exact in binary floating point) and just past it.

const ctx = { rng: new Rng(1) };

// ---- Llumnix migration pairing -----------------------------------------------------------------------------------

const migrating = (o: Record<string, unknown> = {}) => createRouter('llumnix', { migration: { enabled: true, ...o } }, ctx);
const running = (id: number) => prog({ id, inputTokens: 100, predicted: 50, generated: 2 });

/**
 * An instance of 1,600 KV tokens (100 blocks of 16) with `n` running requests and the given used share, so that
 * its migration load is (1 − used) · 100 / n free blocks per request, exactly.
 */
const at = (id: number, used: number, n: number, region = '') =>
  instance(id, Array.from({ length: n }, (_, k) => running(id * 10 + k)), { kvCapacityTokens: 1600, kvUsedFraction: used, region });

test('llumnix: an instance exactly at outThresholdBlocks is no migration source, even while another region has one', () => {
  // Region a: instance 0 at 25 free blocks per request (a source below 50, but alone in its region). Region b:
  // instance 1 at exactly 50, instance 2 empty (the freest destination).
  const v = fleetView([at(0, 0.75, 1, 'a'), at(1, 0.5, 1, 'b'), instance(2, [], { kvCapacityTokens: 1600, region: 'b' })]);
  assert.deepEqual(migrating({ outThresholdBlocks: 50 }).migrate!(v, new Set()), []);
  // Just above its load, instance 1 is a source and migrates to 2.
  assert.deepEqual(migrating({ outThresholdBlocks: 50.5 }).migrate!(v, new Set()), [{ request: 10, from: 1, to: 2, reason: 'defrag-SR' }]);
  // In one region: 0 (source) pairs with 2, and 1 (exactly at the threshold) does not take 3.
  const one = fleetView([at(0, 0.75, 1), at(1, 0.5, 1), instance(2, [], { kvCapacityTokens: 1600 }), instance(3, [], { kvCapacityTokens: 1600 })]);
  assert.deepEqual(migrating({ outThresholdBlocks: 50 }).migrate!(one, new Set()), [{ request: 0, from: 0, to: 2, reason: 'defrag-SR' }]);
  // Nor is it a destination: a source with only it beside it stays put.
  assert.deepEqual(migrating({ outThresholdBlocks: 50 }).migrate!(fleetView([at(0, 0.75, 1), at(1, 0.5, 1)]), new Set()), []);
  assert.deepEqual(migrating({ outThresholdBlocks: 49.5 }).migrate!(fleetView([at(0, 0.75, 1), at(1, 0.5, 1)]), new Set()), [{ request: 0, from: 0, to: 1, reason: 'defrag-SR' }]);
});

test('llumnix: an instance running a single request is a source when its KV is nearly full', () => {
  // One request, 1 free block (< 3): a source; only an instance running nothing counts as infinitely free.
  const v = fleetView([at(0, 0.99, 1), instance(1, [], { kvCapacityTokens: 1600 })]);
  assert.deepEqual(migrating().migrate!(v, new Set()), [{ request: 0, from: 0, to: 1, reason: 'defrag-SR' }]);
});

test('llumnix balanced pairing: the destination must stay strictly above the threshold, and the gap must narrow strictly', () => {
  // Source: 3 requests, 25 free blocks (8.3 per request); moving its average request (1,200 / 16 / 3 = 25 blocks)
  // to the empty destination (100 free) leaves it 75 free for 1 request.
  const pair = fleetView([at(0, 0.75, 3), instance(1, [], { kvCapacityTokens: 1600 })]);
  assert.deepEqual(migrating({ pairPolicy: 'balanced', outThresholdBlocks: 75 }).migrate!(pair, new Set()), [], 'exactly 75 left: no');
  assert.deepEqual(migrating({ pairPolicy: 'balanced', outThresholdBlocks: 74.5 }).migrate!(pair, new Set()), [{ request: 0, from: 0, to: 1, reason: 'balanced-SR' }]);
  // Source: 2 requests, 25 free blocks (12.5 per request), average request 37.5 blocks: afterwards both sides have
  // 62.5 free per request, a gap of exactly 0: no migration.
  const even = fleetView([at(0, 0.75, 2), instance(1, [], { kvCapacityTokens: 1600 })]);
  assert.deepEqual(migrating({ pairPolicy: 'balanced', outThresholdBlocks: 20 }).migrate!(even, new Set()), []);
  assert.equal(migrating({ outThresholdBlocks: 20 }).migrate!(even, new Set()).length, 1, 'defrag moves it');
});

// ---- SageServe region, deployment and Chiron thresholds --------------------------------------------------------

const inst = (id: number, region: string, kv: number, extra: Partial<InstanceView> = {}): InstanceView =>
  instance(id, [], { pool: `${region}-m`, hardware: 'h100-80gb', tp: 8, region, kvUsedFraction: kv, kvCapacityTokens: 1000, ...extra });
const view = fleetView;
const req = (id: number, region: string, tier = 'iw-f', arrivalS = 0): RequestView => ({
  id, arrivalS, inputTokens: 100, predictedOutputTokens: 10, model: 'm', tier, region, app: '', deadlineS: arrivalS + 1,
});
const sage = (opts: object = {}) => createRouter('sageserve', opts, ctx);
const sent = (d: ReturnType<ReturnType<typeof sage>['route']>) => (d.kind === 'send' ? [d.to, d.reason] : [d.kind, d.reason]);

test('sageserve: a region exactly at the 70 % routing threshold is not below it; at 69 % it keeps the request', () => {
  const three = (east: number) => view([inst(0, 'east', east), inst(1, 'central', 0.1), inst(2, 'west', 0.2)]);
  assert.deepEqual(sent(sage().route(req(1, 'east'), three(0.7))), [1, 'region-below-threshold']);
  assert.deepEqual(sent(sage().route(req(2, 'east'), three(0.69))), [0, 'region-below-threshold']);
  // The default is 0.7: 0.72 already spills; an explicit threshold moves the edge.
  assert.deepEqual(sent(sage().route(req(3, 'east'), three(0.72))), [1, 'region-below-threshold']);
  assert.deepEqual(sent(sage({ routeThreshold: 0.75 }).route(req(4, 'east'), three(0.72))), [0, 'region-below-threshold']);
  assert.deepEqual(sent(sage({ routeThreshold: 0.5 }).route(req(5, 'east'), three(0.5))), [1, 'region-below-threshold']);
});

test('sageserve: with every region above the threshold, equally utilised regions go by preference order', () => {
  const v = view([inst(0, 'east', 0.9), inst(1, 'central', 0.8), inst(2, 'west', 0.8)]);
  assert.deepEqual(sent(sage().route(req(1, 'east'), v)), [1, 'least-utilised-region']);
  assert.deepEqual(sent(sage().route(req(2, 'west'), v)), [2, 'least-utilised-region'], "west's own region first");
});

test('sageserve: equally utilised deployments go to the first (lowest ids)', () => {
  const v = view([inst(0, 'east', 0.5), inst(1, 'east', 0.5), inst(2, 'east', 0.5), inst(3, 'east', 0.5)]);
  assert.equal((sage({ deploymentSize: 2 }).route(req(1, 'east'), v) as { to: number }).to, 0);
  // A strictly emptier later deployment (0.375) still wins; inside it the fewest pending tokens.
  const w = view([inst(0, 'east', 0.5), inst(1, 'east', 0.5), inst(2, 'east', 0.5, { pendingTokens: 50 }), inst(3, 'east', 0.25)]);
  assert.equal((sage({ deploymentSize: 2 }).route(req(2, 'east'), w) as { to: number }).to, 3);
});

function chironInst(id: number, region: string, suffix: '' | '-mixed' | '-niw', kv: number, state = 'ready'): InstanceView {
  return inst(id, region, kv, { pool: `${region}-m${suffix}`, state } as Partial<InstanceView>);
}

test('sageserve Chiron NIW: a batch pool exactly at mixedAbove still takes NIW; equally full batch pools go by preference', () => {
  const edge = view([chironInst(0, 'east', '', 0), chironInst(1, 'east', '-mixed', 0), chironInst(2, 'east', '-niw', 0.7)]);
  assert.deepEqual(sent(sage().route(req(1, 'east', 'niw'), edge)), [2, 'chiron-batch']);
  assert.deepEqual(sent(sage({ mixedAbove: 0.5 }).route(req(2, 'east', 'niw'), view([chironInst(0, 'east', '', 0), chironInst(1, 'east', '-mixed', 0), chironInst(2, 'east', '-niw', 0.5)]))), [2, 'chiron-batch']);
  assert.deepEqual(sent(sage().route(req(3, 'east', 'niw'), view([chironInst(0, 'east', '', 0), chironInst(1, 'east', '-mixed', 0), chironInst(2, 'east', '-niw', 0.71)]))), [1, 'chiron-batch-to-mixed']);
  // No ready mixed instance (one is still provisioning, which makes the model Chiron's), both batch pools at 90 %.
  const full = view([chironInst(0, 'east', '-mixed', 0, 'provisioning'), chironInst(1, 'east', '-niw', 0.9), chironInst(2, 'west', '-niw', 0.9)]);
  assert.deepEqual(sent(sage().route(req(4, 'east', 'niw'), full)), [1, 'chiron-batch-least-utilised']);
  assert.deepEqual(sent(sage().route(req(5, 'west', 'niw'), full)), [2, 'chiron-batch-least-utilised']);
});

// ---- PreServe: the memory penalty above T_mem = 0.8, ties and the overload test ----------------------------------

// Token-counting anticipator (blockTokens 1), so the projections are the paper's (P + j) / M by hand.
const pre = (o: Record<string, unknown> = {}) => createRouter('preserve', { anticipator: { blockTokens: 1 }, ...o }, ctx);
const to = (d: { kind: string; to?: number }) => (d.kind === 'send' ? d.to : d.kind);

test('preserve: the penalty is (U_peak − 0.8) · M, weighed against the token load to the token', () => {
  // M = 10,000. Instance 0: a 7,000-token request with 99 decode steps left; the new request (P = 1,000, D̂ = 100)
  // peaks at j = 99 with 7,099 + 1,099 = 8,198 → penalty 198. Score 0 = 1,000 + (99 + 100) + 198 = 1,397.
  // Instance 1: a 100-token request with 99 + gap steps left, no penalty: score 1 = 1,199 + gap.
  const v = (gap: number) => fleetView([
    instance(0, [prog({ inputTokens: 7000, predicted: 100, generated: 1 })]),
    instance(1, [prog({ inputTokens: 100, predicted: 100 + gap, generated: 1 })]),
  ]);
  assert.equal(to(pre().route(newReq(1000, 100), v(197))), 1, '1,396 < 1,397');
  assert.equal(to(pre().route(newReq(1000, 100), v(199))), 0, '1,397 < 1,398');
  // With T_mem 0.82 the peak is under it: no penalty, 0 wins even at gap 1.
  assert.equal(to(pre({ memoryThreshold: 0.82 }).route(newReq(1000, 100), v(1))), 0);
  // β scales it: β = 2 → 396, so gap 395 goes to 1 and gap 397 to 0.
  assert.equal(to(pre({ beta: 2 }).route(newReq(1000, 100), v(395))), 1);
  assert.equal(to(pre({ beta: 2 }).route(newReq(1000, 100), v(397))), 0);
});

test('preserve: identical instances tie on score and penalty and go to the lowest id', () => {
  const same = () => [prog({ inputTokens: 500, predicted: 50, generated: 1 })];
  assert.equal(to(pre().route(newReq(100, 10), fleetView([instance(0, same()), instance(1, same()), instance(2, same())]))), 0);
  // Equal scores, both penalised equally (a big request on a small KV): still the lowest id.
  const small = { kvCapacityTokens: 1000 };
  assert.equal(to(pre().route(newReq(900, 10), fleetView([instance(0, same(), small), instance(1, same(), small)]))), 0);
});

test('preserve admission: overloaded means more than overloadShare · horizon steps projected strictly above 0.95', () => {
  // M = 10,000, window 100 steps, so at most 10 steps may be above 0.95. A request of P tokens with 20 steps left
  // occupies P + j for j < 20: P = 9,491 is above 9,500 on 10 steps (9,501 … 9,510), P = 9,492 on 11.
  const one = (p: number) => fleetView([instance(0, [prog({ inputTokens: p, predicted: 20, generated: 1 })])]);
  assert.equal(to(pre({ admission: 'queue' }).route(newReq(10, 10), one(9491))), 0, '10 steps: not overloaded');
  assert.deepEqual(pre({ admission: 'queue' }).route(newReq(10, 10), one(9492)), { kind: 'defer', reason: 'all-overloaded', hold: true });
  // U[8] = 9,500 / 10,000 is exactly 0.95: not above. P = 9,492 peaks at 0.9511: under a 0.96 threshold nothing is above.
  assert.equal(to(pre({ admission: 'queue', overloadThreshold: 0.96 }).route(newReq(10, 10), one(9492))), 0);
  assert.equal(to(pre({ admission: 'queue', overloadShare: 0.11 }).route(newReq(10, 10), one(9492))), 0);
});
