import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouter, routers, type RouterName } from '../../../src/policy/routing/registry.ts';
import type { FleetView, InstanceView, RequestView } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';

function inst(id: number, model: string, load: Partial<InstanceView> = {}): InstanceView {
  return Object.freeze({
    id, pool: 'p', model, hardware: 'h100-80gb', tp: 1, pp: 1, region: '', state: 'ready',
    numRunning: 0, numWaiting: 0, outstandingRequests: 0, kvUsedFraction: 0, outstandingTokens: 0, pendingTokens: 0,
    kvCapacityTokens: 10_000, requests: () => [],
    ...load,
  }) as InstanceView;
}

function view(instances: InstanceView[]): FleetView {
  return Object.freeze({
    now: 0,
    instances: Object.freeze(instances),
    routable: (m: string) => instances.filter((i) => i.model === m && i.state === 'ready'),
  });
}

const req = (id: number, model = 'a'): RequestView => ({ id, arrivalS: id, inputTokens: 100, predictedOutputTokens: 50, model, tier: '', region: '', app: '', deadlineS: Infinity });

const fleet = view([
  inst(0, 'a', { outstandingRequests: 3, outstandingTokens: 900, kvUsedFraction: 0.5, pendingTokens: 300 }),
  inst(1, 'b'),
  inst(2, 'a', { outstandingRequests: 1, outstandingTokens: 100, kvUsedFraction: 0.1, pendingTokens: 50 }),
  inst(3, 'a', { outstandingRequests: 2, outstandingTokens: 500, kvUsedFraction: 0.3, pendingTokens: 120, state: 'draining' }),
]);

for (const name of Object.keys(routers) as RouterName[]) {
  test(`${name}: sends to a ready instance of the request's model, or defers when there is none`, () => {
    const r = createRouter(name, {}, { rng: new Rng(1) });
    for (let i = 0; i < 20; i++) {
      const d = r.route(req(i), fleet);
      assert.equal(d.kind, 'send');
      if (d.kind === 'send') assert.ok([0, 2].includes(d.to), `${name} chose ${d.to}`);
    }
    assert.equal(r.route(req(99, 'zzz'), fleet).kind, 'defer');
  });

  test(`${name}: the same seed gives the same choices`, () => {
    const choices = (seed: number) => {
      const r = createRouter(name, {}, { rng: new Rng(seed) });
      return Array.from({ length: 30 }, (_, i) => JSON.stringify(r.route(req(i), fleet)));
    };
    assert.deepEqual(choices(5), choices(5));
  });
}

test('load-aware routers pick the least-loaded instance by their own signal', () => {
  for (const name of ['least-requests', 'jsq', 'least-kv', 'pending-tokens'] as const) {
    const r = createRouter(name, {}, { rng: new Rng(1) });
    const d = r.route(req(0), fleet);
    assert.deepEqual(d.kind === 'send' && d.to, 2, name);
  }
});

test('ties go to the lowest id (SplitwiseSim routing rule)', () => {
  const tied = view([inst(4, 'a', { pendingTokens: 7 }), inst(5, 'a', { pendingTokens: 7 })]);
  const d = createRouter('pending-tokens', {}, { rng: new Rng(1) }).route(req(0), tied);
  assert.deepEqual(d.kind === 'send' && d.to, 4);
});

test('round-robin visits every candidate in turn', () => {
  const r = createRouter('round-robin', {}, { rng: new Rng(1) });
  const seen = Array.from({ length: 4 }, (_, i) => {
    const d = r.route(req(i), fleet);
    return d.kind === 'send' ? d.to : -1;
  });
  assert.deepEqual(seen, [0, 2, 0, 2]);
});

test('power-of-two draws two distinct instances: with two, the less loaded always wins; on a tie, the first drawn', () => {
  const two = view([inst(0, 'a', { outstandingRequests: 9 }), inst(1, 'a', { outstandingRequests: 0 })]);
  const r = createRouter('power-of-two', {}, { rng: new Rng(3) });
  for (let i = 0; i < 200; i++) assert.deepEqual(r.route(req(i), two), { kind: 'send', to: 1, reason: 'better-of-two' });
  // Tied: the first drawn wins (the documented rule), replayed here from the same seed's draws.
  const tied = view([inst(0, 'a'), inst(1, 'a')]);
  const rng = new Rng(3);
  const t = createRouter('power-of-two', {}, { rng: new Rng(3) });
  for (let i = 0; i < 50; i++) {
    const first = rng.int(2);
    rng.int(1);
    assert.deepEqual(t.route(req(i), tied), { kind: 'send', to: first, reason: 'better-of-two' });
  }
});

test('least-kv breaks a KV tie by the fewest waiting; least-loaded counts compute use as at most a full batch', () => {
  const kvTie = view([inst(0, 'a', { kvUsedFraction: 0.5, numWaiting: 4 }), inst(1, 'a', { kvUsedFraction: 0.5, numWaiting: 1 })]);
  assert.deepEqual(createRouter('least-kv', {}, { rng: new Rng(1) }).route(req(0), kvTie), { kind: 'send', to: 1, reason: 'lowest-kv' });
  // 0: a batch twice the full one (compute use 1, not 2) and little KV; 1: half a batch and more KV. Uses (0.5 each):
  // 0.5·0.1 + 0.5·1 = 0.55 < 0.5·0.7 + 0.5·0.5 = 0.6 (unclamped, 0 would score 1.05).
  const over = view([inst(0, 'a', { numRunning: 512, kvUsedFraction: 0.1 }), inst(1, 'a', { numRunning: 128, kvUsedFraction: 0.7 })]);
  assert.deepEqual(createRouter('least-loaded', {}, { rng: new Rng(1) }).route(req(0), over), { kind: 'send', to: 0, reason: 'minimum-use' });
});
