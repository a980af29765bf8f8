import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter } from '../../../src/policy/routing/registry.ts';
import { Rng } from '../../../src/util/rng.ts';
import { fleetView, instance, newReq, prog } from '../preserve/helpers.ts';

const ctx = { rng: new Rng(1) };
const to = (d: { kind: string; to?: number }) => (d.kind === 'send' ? d.to : -1);

test('preserve sends to the lowest queued-prefill + remaining-decode tokens when no KV penalty applies', () => {
  // 0: 500 decode tokens left; 1: 100 prompt tokens waiting + 200 decode left → 1 is lighter (300 < 500).
  const v = fleetView([
    instance(0, [prog({ inputTokens: 100, predicted: 501, generated: 1 })]),
    instance(1, [prog({ inputTokens: 100, predicted: 201, generated: 1 }), prog({ inputTokens: 100, predicted: 50, generated: 0, status: 'waiting', prefillLeft: 100 })]),
  ]);
  assert.equal(to(createRouter('preserve', {}, ctx).route(newReq(50, 50), v)), 1);
});

test('preserve: the memory penalty decides between instances with equal token load', () => {
  // M = 10,000. Both have 99 decode tokens left and no queued prompt. On 0 a 7,000-token context is running:
  // adding P = 1,000, D̂ = 100 peaks at j = 99: (7,000 + 99) + (1,000 + 99) = 8,198 → 0.8198 > 0.8 → penalty 198.
  const v = fleetView([
    instance(0, [prog({ inputTokens: 7000, predicted: 100, generated: 1 })]),
    instance(1, [prog({ inputTokens: 100, predicted: 100, generated: 1 })]),
  ]);
  assert.equal(to(createRouter('preserve', {}, ctx).route(newReq(1000, 100), v)), 1);
  // With β = 0 the scores tie (1,000 + 199 each); ties go to the lower penalty (digest §3.5), still 1 ...
  assert.equal(to(createRouter('preserve', { beta: 0 }, ctx).route(newReq(1000, 100), v)), 1);
  // ... but one decode token less on 0 then wins it.
  const v2 = fleetView([
    instance(0, [prog({ inputTokens: 7000, predicted: 99, generated: 1 })]),
    instance(1, [prog({ inputTokens: 100, predicted: 100, generated: 1 })]),
  ]);
  assert.equal(to(createRouter('preserve', { beta: 0 }, ctx).route(newReq(1000, 100), v2)), 0);
});

test('preserve: a penalty smaller than the token-load gap does not override it', () => {
  // 0: penalty 198 as above, 99 decode left; 1: no penalty but 2,000 decode tokens left.
  const v = fleetView([
    instance(0, [prog({ inputTokens: 7000, predicted: 100, generated: 1 })]),
    instance(1, [prog({ inputTokens: 100, predicted: 2001, generated: 1 })]),
  ]);
  assert.equal(to(createRouter('preserve', {}, ctx).route(newReq(1000, 100), v)), 0);
});

test('preserve counts extended lengths of requests that outran their prediction', () => {
  // 0: predicted 100, generated 130 → D̂ = 140, 10 left; 1: 30 left. Lower load on 0.
  const v = fleetView([
    instance(0, [prog({ inputTokens: 10, predicted: 100, generated: 130 })]),
    instance(1, [prog({ inputTokens: 10, predicted: 31, generated: 1 })]),
  ]);
  assert.equal(to(createRouter('preserve', {}, ctx).route(newReq(10, 10), v)), 0);
});

test('preserve with admission=defer holds the request when every instance is projected overloaded', () => {
  // M = 1,000: a running request with 980 tokens of context for 50 more steps → U > 0.95 on 50 of 100 steps.
  const hot = () => [prog({ inputTokens: 960, predicted: 70, generated: 21 })];
  const v = fleetView([instance(0, hot(), { kvCapacityTokens: 1000 }), instance(1, hot(), { kvCapacityTokens: 1000 })]);
  assert.deepEqual(createRouter('preserve', { admission: 'defer' }, ctx).route(newReq(10, 10), v), { kind: 'defer', reason: 'all-overloaded' });
  assert.equal(createRouter('preserve', {}, ctx).route(newReq(10, 10), v).kind, 'send');
  const cool = fleetView([instance(0, hot(), { kvCapacityTokens: 1000 }), instance(1, [], { kvCapacityTokens: 1000 })]);
  assert.equal(to(createRouter('preserve', { admission: 'defer' }, ctx).route(newReq(10, 10), cool)), 1);
});

test('preserve with admission=queue holds the request at the router (FIFO hold) while every instance is overloaded', () => {
  const hot = () => [prog({ inputTokens: 960, predicted: 70, generated: 21 })];
  const v = fleetView([instance(0, hot(), { kvCapacityTokens: 1000 }), instance(1, hot(), { kvCapacityTokens: 1000 })]);
  assert.deepEqual(createRouter('preserve', { admission: 'queue' }, ctx).route(newReq(10, 10), v), { kind: 'defer', reason: 'all-overloaded', hold: true });
  // Current KV at 0.5 on both, nothing projected above 0.95: sent, unless current KV ≥ overloadKvFraction counts too.
  const warm = () => [prog({ inputTokens: 500, predicted: 5, generated: 1 })];
  const w = fleetView([instance(0, warm(), { kvCapacityTokens: 1000 }), instance(1, warm(), { kvCapacityTokens: 1000 })]);
  assert.equal(createRouter('preserve', { admission: 'queue' }, ctx).route(newReq(10, 10), w).kind, 'send');
  assert.equal(createRouter('preserve', { admission: 'queue', overloadKvFraction: 0.5 }, ctx).route(newReq(10, 10), w).kind, 'defer');
});

test('preserve rejects bad options with the option path', () => {
  assert.throws(() => createRouter('preserve', { memoryThreshold: 2 }, ctx), /routing\.options\.memoryThreshold/);
  assert.throws(() => createRouter('preserve', { anticipator: { horizonSteps: 0 } }, ctx), /routing\.options\.anticipator\.horizonSteps/);
});

test('llumnix counts waiting requests’ KV demand as if admitted (virtual usage)', () => {
  // M = 10,000. 0: 3,000 tokens in use, nothing waiting → 0.30. 1: 1,000 in use + 2,500 waiting → 0.35.
  const v = fleetView([
    instance(0, [prog({ inputTokens: 3000, predicted: 10, generated: 1 })]),
    instance(1, [prog({ inputTokens: 1000, predicted: 10, generated: 1 }), prog({ inputTokens: 2500, predicted: 10, generated: 0, status: 'waiting', prefillLeft: 2500 })]),
  ]);
  assert.equal(to(createRouter('llumnix', {}, ctx).route(newReq(10, 10), v)), 0);
  // remaining-steps: free per request: 0 → 7,000 / 1; 1 → (9,000 − 2,500) / 2 = 3,250 → 0 again.
  assert.equal(to(createRouter('llumnix', { metric: 'remaining-steps' }, ctx).route(newReq(10, 10), v)), 0);
});

test('least-loaded weighs KV use and batch occupancy 0.5/0.5', () => {
  // 0: KV 0.4, 1 running of 256 → 0.2 + 0.002; 1: KV 0.1, 128 running → 0.05 + 0.25 → 0 wins.
  const v = fleetView([
    instance(0, [], { kvUsedFraction: 0.4, numRunning: 1 }),
    instance(1, [], { kvUsedFraction: 0.1, numRunning: 128 }),
  ]);
  assert.equal(to(createRouter('least-loaded', {}, ctx).route(newReq(10, 10), v)), 0);
  assert.equal(to(createRouter('least-loaded', { memoryWeight: 1 }, ctx).route(newReq(10, 10), v)), 1);
});
