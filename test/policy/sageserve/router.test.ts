import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter } from '../../../src/policy/routing/registry.ts';
import { niwReleaseCount } from '../../../src/policy/sageserve/niw.ts';
import { deployments, effectiveUtil, regionPreference } from '../../../src/policy/sageserve/util.ts';
import type { FleetView, InstanceView, RequestView } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';

function inst(id: number, region: string, kv: number, extra: Partial<InstanceView> = {}): InstanceView {
  return {
    id, pool: `${region}-m`, model: 'm', hardware: 'h100-80gb', tp: 8, pp: 1, region, state: 'ready',
    numRunning: 0, numWaiting: 0, outstandingRequests: 0, kvUsedFraction: kv, outstandingTokens: 0, pendingTokens: 0,
    kvCapacityTokens: 1000, requests: () => [], ...extra,
  } as InstanceView;
}
function view(instances: InstanceView[], now = 0): FleetView {
  return { now, instances, routable: (m) => instances.filter((i) => i.model === m && i.state === 'ready') };
}
const req = (id: number, region: string, tier = 'iw-f', arrivalS = 0): RequestView => ({
  id, arrivalS, inputTokens: 100, predictedOutputTokens: 10, model: 'm', tier, region, app: '', deadlineS: arrivalS + 1,
});
const router = (opts: object = {}) => createRouter('sageserve', opts, { rng: new Rng(1) });

test('effective utilisation sums used and available KV over the set (the worked example)', () => {
  const a = inst(0, 'x', 0.9, { kvCapacityTokens: 200_000 });
  const b = inst(1, 'x', 0.3, { kvCapacityTokens: 200_000 });
  assert.ok(Math.abs(effectiveUtil([a, b]) - 0.6) < 1e-12);
  assert.equal(effectiveUtil([]), 1);
});

test('region preference: own region, then the configured order, then the rest', () => {
  const order = ['east', 'central', 'west'];
  assert.deepEqual(regionPreference('west', order, ['z', 'west']), ['west', 'east', 'central', 'z']);
  assert.deepEqual(regionPreference('west', order, ['b', 'a']), ['west', 'east', 'central', 'a', 'b']);
  // The usual case (every present region known) reuses one frozen list per own region; later calls are unaffected.
  const known = regionPreference('central', order, ['west', 'east']);
  assert.deepEqual(known, ['central', 'east', 'west']);
  assert.ok(Object.isFrozen(known));
  assert.deepEqual(regionPreference('central', order, ['q']), ['central', 'east', 'west', 'q']);
  assert.deepEqual(regionPreference('central', order, []), ['central', 'east', 'west']);
  assert.deepEqual(deployments([1, 2, 3, 4, 5, 6, 7], 3), [[1, 2, 3], [4, 5, 6], [7]]);
  // The digest's example (§2.1): 20 instances in deployments of 3 → six of 3 and one of 2.
  assert.deepEqual(deployments([...Array(20).keys()], 3).map((d) => d.length), [3, 3, 3, 3, 3, 3, 2]);
});

test('IW stays in its own region below 70 %, spills to the next region in order above it, else least utilised', () => {
  const r = router();
  const low = view([inst(0, 'east', 0.5), inst(1, 'central', 0.1), inst(2, 'west', 0.2)]);
  assert.deepEqual(r.route(req(1, 'east'), low), { kind: 'send', to: 0, reason: 'region-below-threshold' });
  const hot = view([inst(0, 'east', 0.8), inst(1, 'central', 0.6), inst(2, 'west', 0.1)]);
  assert.equal((r.route(req(2, 'east'), hot) as { to: number }).to, 1, 'central is next in order and below 70 %');
  const allHot = view([inst(0, 'east', 0.8), inst(1, 'central', 0.95), inst(2, 'west', 0.75)]);
  assert.deepEqual(r.route(req(3, 'east'), allHot), { kind: 'send', to: 2, reason: 'least-utilised-region' });
  assert.equal((router({ reroute: false }).route(req(4, 'east'), allHot) as { to: number }).to, 0);
});

test('inside an endpoint: the least utilised deployment, then the fewest pending tokens', () => {
  const r = router({ deploymentSize: 2 });
  const v = view([
    inst(0, 'east', 0.5, { pendingTokens: 0 }), inst(1, 'east', 0.5, { pendingTokens: 0 }),
    inst(2, 'east', 0.2, { pendingTokens: 900 }), inst(3, 'east', 0.2, { pendingTokens: 100 }),
  ]);
  assert.equal((r.route(req(1, 'east'), v) as { to: number }).to, 3);
});

test('NIW release follows the paper (< 60 % ⇒ 1, < 50 % ⇒ 2) and the code preset inverts the counts', () => {
  assert.deepEqual([0.3, 0.55, 0.65].map((u) => niwReleaseCount(u, 'paper')), [2, 1, 0]);
  assert.deepEqual([0.3, 0.55, 0.65].map((u) => niwReleaseCount(u, 'code')), [1, 2, 0]);
});

test('the NIW queue manager releases at most the signal budget per endpoint and holds the rest', () => {
  const r = router();
  const v = view([inst(0, 'east', 0.55)], 100); // one request per signal
  r.endpointSignal!('m', new Set(['east']), 100);
  assert.equal(r.route(req(1, 'east', 'niw', 0), v).kind, 'send');
  const second = r.route(req(2, 'east', 'niw', 0), v);
  assert.deepEqual(second, { kind: 'defer', reason: 'niw-held', hold: true });
  // A new signal refreshes the budget.
  r.endpointSignal!('m', new Set(['east']), 101);
  assert.equal(r.route(req(2, 'east', 'niw', 0), view([inst(0, 'east', 0.55)], 101)).kind, 'send');
  // Busy endpoint: held, unless the request is older than 10 h.
  const busy = view([inst(0, 'east', 0.9)], 36_001);
  assert.equal(r.route(req(3, 'east', 'niw', 36_000), busy).kind, 'defer');
  assert.equal(r.route(req(4, 'east', 'niw', 0), busy).kind, 'send');
});

test('siloed layout: once a -niw pool has an instance, NIW goes straight there and IW never does', () => {
  const r = router();
  const v = view([inst(0, 'east', 0.9), inst(1, 'east', 0.0, { pool: 'east-m-niw' })]);
  assert.deepEqual(r.route(req(1, 'east', 'niw'), v), { kind: 'send', to: 1, reason: 'region-below-threshold' });
  assert.equal((r.route(req(2, 'east', 'iw-f'), v) as { to: number }).to, 0);
});

test('a released NIW request goes to the endpoint that signalled (paper §6.2); niwReleaseTo: preference keeps the old budgets', () => {
  const at = (now: number) => view([inst(0, 'east', 0.3), inst(1, 'west', 0.3)], now);
  const to = (d: ReturnType<ReturnType<typeof router>['route']>) => (d.kind === 'send' ? d.to : d.kind);
  const r = router();
  r.endpointSignal!('m', new Set(['west']), 100);
  // West is below 50 %: two requests per signal, both to west although they come from east.
  assert.deepEqual([1, 2, 3].map((id) => to(r.route(req(id, 'east', 'niw', 0), at(100)))), [1, 1, 'defer']);
  assert.equal(to(r.route(req(4, 'east', 'niw', 0), at(101))), 'defer', 'an arrival is no signal');
  r.endpointSignal!('m', null, 102); // a periodic signal from every endpoint: the request's own region first
  assert.equal(to(r.route(req(5, 'east', 'niw', 0), at(102))), 0);
  r.endpointSignal!('m', new Set(['west']), 103);
  r.endpointSignal!('m', new Set(['east']), 103); // two signals at one instant add up
  assert.deepEqual([6, 7, 8].map((id) => to(r.route(req(id, 'east', 'niw', 0), at(103)))), [0, 0, 1]);

  const own = router({ reroute: false });
  own.endpointSignal!('m', new Set(['west']), 100);
  assert.equal(to(own.route(req(1, 'east', 'niw', 0), at(100))), 'defer', 'without reroute only its own region releases it');

  const old = router({ niwReleaseTo: 'preference' });
  old.endpointSignal!('m', new Set(['west']), 100);
  assert.equal(to(old.route(req(1, 'east', 'niw', 0), at(100))), 0, 'preference: its own region, whoever signalled');
  assert.equal(to(old.route(req(2, 'east', 'niw', 0), at(101))), 0, 'preference: any new time opens budgets');
});

test('niwQueues: model-region holds a NIW request in its first-preference region\'s FIFO; model (the default) in the model\'s one', () => {
  const busy = view([inst(0, 'east', 0.9), inst(1, 'west', 0.9)], 100);
  const byRegion = router({ niwQueues: 'model-region' });
  byRegion.endpointSignal!('m', null, 100);
  assert.deepEqual(byRegion.route(req(1, 'west', 'niw', 0), busy), { kind: 'defer', reason: 'niw-held', hold: true, queue: 'west' });
  assert.deepEqual(byRegion.route(req(2, 'east', 'niw', 0), busy), { kind: 'defer', reason: 'niw-held', hold: true, queue: 'east' });
  assert.deepEqual(byRegion.route(req(3, 'east', 'niw', 0), view([inst(0, 'east', 0.9)], 101)), { kind: 'defer', reason: 'niw-held', hold: true, queue: 'east' }, 'no signal at 101');
  const one = router();
  one.endpointSignal!('m', null, 100);
  assert.deepEqual(one.route(req(1, 'west', 'niw', 0), busy), { kind: 'defer', reason: 'niw-held', hold: true });
});
