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
