import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Governor } from '../../../src/policy/scaling/governor.ts';
import type { PoolStatus } from '../../../src/policy/scaling/types.ts';

const pool = (over: Partial<PoolStatus> = {}): PoolStatus => ({
  name: 'p', model: 'm', hardware: 'h', region: '', tp: 1, pp: 1, provisioning: 0, ready: 2, draining: 0,
  minCount: 1, maxCount: 4, kvUtilization: 0.5, outstandingRequests: 0, waiting: 0, ...over,
});

test('requests are clamped to the pool bounds and the per-tick step', () => {
  const g = new Governor({ upCooldownS: 0, downCooldownS: 0, maxStep: 1 });
  assert.deepEqual(g.apply([{ kind: 'add', pool: 'p', count: 5, reason: 'x' }], [pool()], 0), [{ kind: 'add', pool: 'p', count: 1, reason: 'governed' }]);
  const g2 = new Governor({ upCooldownS: 0, downCooldownS: 0, maxStep: 10 });
  assert.deepEqual(g2.apply([{ kind: 'add', pool: 'p', count: 5, reason: 'x' }], [pool()], 0), [{ kind: 'add', pool: 'p', count: 2, reason: 'governed' }], '2 ready + 2 = max 4');
  assert.deepEqual(g2.apply([{ kind: 'remove', pool: 'p', count: 5, reason: 'x' }], [pool()], 100), [{ kind: 'remove', pool: 'p', count: 1, reason: 'governed' }], 'never below min 1');
});

test('cooldowns: no second scale-up within upCooldownS, no scale-down within downCooldownS of any change', () => {
  const g = new Governor({ upCooldownS: 60, downCooldownS: 300, maxStep: 1 });
  const up = { kind: 'add', pool: 'p', count: 1, reason: 'x' } as const;
  const down = { kind: 'remove', pool: 'p', count: 1, reason: 'x' } as const;
  assert.equal(g.apply([up], [pool()], 0).length, 1);
  assert.equal(g.apply([up], [pool()], 59).length, 0);
  assert.equal(g.apply([up], [pool()], 60).length, 1);
  assert.equal(g.apply([down], [pool()], 200).length, 0, '140 s after the last change');
  assert.equal(g.apply([down], [pool()], 360).length, 1);
});

test('a pool below its minimum is topped up without being asked; holds change nothing', () => {
  const g = new Governor({ upCooldownS: 0, downCooldownS: 0, maxStep: 1 });
  assert.deepEqual(g.apply([{ kind: 'hold', reason: 'x' }], [pool({ ready: 0, minCount: 2 })], 0), [{ kind: 'add', pool: 'p', count: 2, reason: 'below-min' }]);
  assert.deepEqual(g.apply([{ kind: 'hold', reason: 'x' }], [pool()], 0), []);
});

test('maxCount counts draining instances too: a scale-out, and a top-up to minCount, only fill the room provisioning + ready + draining leave', () => {
  const g = new Governor({ upCooldownS: 0, downCooldownS: 0, maxStep: 10 });
  const add = { kind: 'add', pool: 'p', count: 5, reason: 'x' } as const;
  assert.deepEqual(g.apply([add], [pool({ ready: 2, draining: 2 })], 0), [], '2 ready + 2 draining = max 4');
  assert.deepEqual(g.apply([add], [pool({ ready: 1, provisioning: 1, draining: 1 })], 0), [{ kind: 'add', pool: 'p', count: 1, reason: 'governed' }]);
  // The cap wins over the minimum: the pool reaches minCount as its draining instances stop.
  assert.deepEqual(g.apply([{ kind: 'hold', reason: 'x' }], [pool({ ready: 0, draining: 3, minCount: 2 })], 0), [{ kind: 'add', pool: 'p', count: 1, reason: 'below-min' }]);
  assert.deepEqual(g.apply([{ kind: 'hold', reason: 'x' }], [pool({ ready: 1, draining: 3, minCount: 2 })], 0), []);
  // Draining instances never turn a scale-in into more, nor a scale-out into a scale-in.
  assert.deepEqual(g.apply([{ kind: 'remove', pool: 'p', count: 1, reason: 'x' }], [pool({ ready: 2, draining: 2 })], 0), [{ kind: 'remove', pool: 'p', count: 1, reason: 'governed' }]);
});
