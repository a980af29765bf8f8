import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter } from '../../../src/policy/routing/registry.ts';
import type { FleetView, InstanceView, RequestView } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';

/** An instance of pool `${region}-m${suffix}` at memory utilisation `kv` (KV capacity 1000 tokens). */
function inst(id: number, region: string, suffix: '' | '-mixed' | '-niw', kv: number): InstanceView {
  return {
    id, pool: `${region}-m${suffix}`, model: 'm', hardware: 'h100-80gb', tp: 8, pp: 1, region, state: 'ready',
    numRunning: 0, numWaiting: 0, outstandingRequests: 0, kvUsedFraction: kv, outstandingTokens: 0, pendingTokens: 0,
    kvCapacityTokens: 1000, requests: () => [],
  } as InstanceView;
}
const view = (instances: InstanceView[]): FleetView => ({ now: 0, instances, routable: (m) => instances.filter((i) => i.model === m && i.state === 'ready') });
const req = (id: number, region: string, tier = 'iw-f'): RequestView => ({
  id, arrivalS: 0, inputTokens: 100, predictedOutputTokens: 10, model: 'm', tier, region, app: '', deadlineS: 1,
});
const router = (opts: object = {}) => createRouter('sageserve', opts, { rng: new Rng(1) });
const sent = (d: ReturnType<ReturnType<typeof router>['route']>) => (d.kind === 'send' ? [d.to, d.reason] : [d.kind, d.reason]);

test('Chiron IW: the interactive pool up to 70 % utilisation, the mixed pool above it (the code\'s router rule)', () => {
  // Interactive: two instances at 0.6 and 0.8 ⇒ 0.7 exactly, not above ⇒ interactive (the emptier one by deployment util).
  const at = view([inst(0, 'east', '', 0.6), inst(1, 'east', '', 0.8), inst(2, 'east', '-mixed', 0.1), inst(3, 'east', '-niw', 0.1)]);
  assert.deepEqual(sent(router().route(req(1, 'east'), at)), [0, 'chiron-interactive']);
  // 0.62 and 0.8 ⇒ 0.71 > 0.7 ⇒ mixed.
  const above = view([inst(0, 'east', '', 0.62), inst(1, 'east', '', 0.8), inst(2, 'east', '-mixed', 0.1), inst(3, 'east', '-niw', 0.1)]);
  assert.deepEqual(sent(router().route(req(1, 'east'), above)), [2, 'chiron-mixed']);
  assert.deepEqual(sent(router({ mixedAbove: 0.75 }).route(req(1, 'east'), above)), [0, 'chiron-interactive'], 'threshold is an option');
  // IW never goes to the batch pool, even when nothing else is ready in the region.
  const onlyBatch = view([inst(2, 'east', '-mixed', 0.1), inst(3, 'east', '-niw', 0.0)]);
  assert.deepEqual(sent(router().route(req(1, 'east'), onlyBatch)), [2, 'chiron-mixed']);
});

test('Chiron NIW: the batch pool up to 70 %, the mixed pool when the batch pool is fuller or empty, no queue-manager hold', () => {
  const r = router();
  const cool = view([inst(0, 'east', '', 0.0), inst(1, 'east', '-mixed', 0.0), inst(2, 'east', '-niw', 0.5)]);
  assert.deepEqual(sent(r.route(req(1, 'east', 'niw'), cool)), [2, 'chiron-batch']);
  const hot = view([inst(0, 'east', '', 0.0), inst(1, 'east', '-mixed', 0.9), inst(2, 'east', '-niw', 0.8)]);
  assert.deepEqual(sent(r.route(req(2, 'east', 'niw'), hot)), [1, 'chiron-batch-to-mixed'], 'the mixed pool takes it even at 90 %');
  const empty = view([inst(0, 'east', '', 0.0), inst(1, 'east', '-mixed', 0.3)]);
  assert.deepEqual(sent(r.route(req(3, 'east', 'niw'), empty)), [1, 'chiron-batch-to-mixed']);
  // No mixed pool anywhere and every batch pool above 70 %: the least utilised batch pool.
  const noMixed = view([inst(1, 'east', '-niw', 0.95), inst(2, 'west', '-niw', 0.8)]);
  const rr = router();
  rr.route(req(9, 'east'), view([inst(7, 'east', '-mixed', 0.0)])); // the model is in Chiron mode from now on
  assert.deepEqual(sent(rr.route(req(4, 'east', 'niw'), noMixed)), [2, 'chiron-batch-least-utilised']);
});

test('Chiron IW region choice: the 70 % rule over each region\'s interactive and mixed instances together', () => {
  // East interactive 0.9 + mixed 0.7 ⇒ (900 + 700) / 2000 = 0.8 ≥ 0.7 ⇒ central (0.2), its interactive pool.
  const v = view([inst(0, 'east', '', 0.9), inst(1, 'east', '-mixed', 0.7), inst(2, 'central', '', 0.2), inst(3, 'central', '-mixed', 0.2)]);
  assert.deepEqual(sent(router().route(req(1, 'east'), v)), [2, 'chiron-interactive']);
  // East mixed 0.4 ⇒ (900 + 400) / 2000 = 0.65 < 0.7 ⇒ stays in East; interactive 0.9 > 0.7 ⇒ mixed.
  const v2 = view([inst(0, 'east', '', 0.9), inst(1, 'east', '-mixed', 0.4), inst(2, 'central', '', 0.2), inst(3, 'central', '-mixed', 0.2)]);
  assert.deepEqual(sent(router().route(req(1, 'east'), v2)), [1, 'chiron-mixed']);
  assert.deepEqual(sent(router({ reroute: false }).route(req(1, 'east'), v)), [1, 'chiron-mixed'], 'no reroute: own region only');
});

test('without a -mixed instance the router is unchanged: siloed with -niw pools, the NIW queue manager without', () => {
  const siloed = view([inst(0, 'east', '', 0.9), inst(1, 'east', '-niw', 0.0)]);
  assert.deepEqual(sent(router().route(req(1, 'east', 'niw'), siloed)), [1, 'region-below-threshold']);
  const unified = view([inst(0, 'east', '', 0.65)]);
  assert.deepEqual(sent(router().route(req(1, 'east', 'niw'), unified)), ['defer', 'niw-held'], '65 % ≥ 60 %: held');
});
