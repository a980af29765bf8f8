import assert from 'node:assert/strict';
import { test } from 'node:test';
import { paretoFrontier } from '../../src/report/pareto.ts';

test('keeps only points no other point beats on both cost and attainment, sorted by cost', () => {
  const pts = [
    { costUsd: 10, attainment: 0.9 }, // 0: frontier
    { costUsd: 12, attainment: 0.85 }, // 1: beaten by 0
    { costUsd: 15, attainment: 0.99 }, // 2: frontier
    { costUsd: 8, attainment: 0.5 }, // 3: frontier (cheapest)
    { costUsd: 15, attainment: 0.95 }, // 4: beaten by 2 (same cost, lower attainment)
    { costUsd: 20, attainment: 0.99 }, // 5: beaten by 2 (same attainment, higher cost)
  ];
  assert.deepEqual(paretoFrontier(pts), [3, 0, 2]);
});

test('identical points are both on the frontier and non-finite points never are', () => {
  const pts = [
    { costUsd: 5, attainment: 0.8 },
    { costUsd: 5, attainment: 0.8 },
    { costUsd: NaN, attainment: 1 },
    { costUsd: 1, attainment: Infinity },
  ];
  assert.deepEqual(paretoFrontier(pts), [0, 1]);
});

test('one point is its own frontier and no point gives an empty one', () => {
  assert.deepEqual(paretoFrontier([{ costUsd: 3, attainment: 0.1 }]), [0]);
  assert.deepEqual(paretoFrontier([]), []);
});

test('a point that attains nothing is not on the frontier, even at the lowest cost (a variant without instances)', () => {
  assert.deepEqual(paretoFrontier([{ costUsd: 0, attainment: 0 }, { costUsd: 5, attainment: 0.9 }]), [1]);
  assert.deepEqual(paretoFrontier([{ costUsd: 0, attainment: 0 }, { costUsd: 5, attainment: 0 }]), []);
  assert.deepEqual(paretoFrontier([{ costUsd: 0, attainment: 0.0001 }, { costUsd: 5, attainment: 0.9 }]), [0, 1]);
});
