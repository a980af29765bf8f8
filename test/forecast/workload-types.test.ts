import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSeries } from '../../src/forecast/series.ts';
import { fitWorkloadTypes, fromState, typeLabeller } from '../../src/forecast/workload-types.ts';
import { Rng } from '../../src/util/rng.ts';
import type { TraceRequest } from '../../src/workload/types.ts';

// Four well-separated (input, output) groups: short/long input × short/long output.
function requests(n: number): TraceRequest[] {
  const rng = new Rng(11);
  return Array.from({ length: n }, (_, id) => {
    const g = id % 4;
    const inputTokens = Math.round(rng.lognormal(g & 1 ? 7.5 : 4, 0.2));
    const outputTokens = Math.round(rng.lognormal(g & 2 ? 6 : 2.5, 0.2));
    return { id, arrivalS: id * 0.5, inputTokens, outputTokens };
  });
}

test('k-means recovers four separated workload types, the same for the same seed', () => {
  const reqs = requests(2000);
  const a = fitWorkloadTypes(reqs, { seed: 3 });
  const b = fitWorkloadTypes(reqs, { seed: 3 });
  assert.deepEqual(a.toJSON(), b.toJSON());
  // Every true group maps to exactly one type.
  const groupToType = new Map<number, Set<number>>();
  reqs.forEach((r, i) => {
    const set = groupToType.get(i % 4) ?? new Set();
    set.add(a.assign(r.inputTokens, r.outputTokens));
    groupToType.set(i % 4, set);
  });
  assert.equal(new Set([...groupToType.values()].map((s) => [...s].join())).size, 4);
  for (const s of groupToType.values()) assert.equal(s.size, 1);
  // Types are ordered by centroid input length.
  const ins = a.centroidsTokens.map((c) => c.inputTokens);
  assert.deepEqual(ins, [...ins].sort((x, y) => x - y));
});

test('a persisted classifier assigns new requests like the original', () => {
  const a = fitWorkloadTypes(requests(800), { seed: 1 });
  const b = fromState(JSON.parse(JSON.stringify(a.toJSON())));
  for (const [i, o] of [[50, 10], [2000, 10], [50, 400], [2000, 400]] as const) assert.equal(b.assign(i, o), a.assign(i, o));
});

test('per-type series split the request count by type', () => {
  const reqs = requests(400);
  const types = fitWorkloadTypes(reqs, { seed: 1 });
  const series = buildSeries(reqs, { stepS: 60, keys: ['type'], typeOf: typeLabeller(types) });
  assert.equal(series.length, 4);
  const total = series.reduce((s, x) => s + x.requestsPerS.reduce((p, v) => p + v * 60, 0), 0);
  assert.equal(Math.round(total), 400);
});

test('bad k is a user error', () => {
  assert.throws(() => fitWorkloadTypes(requests(3), { k: 4 }), /at least k = 4/);
  assert.throws(() => fitWorkloadTypes(requests(10), { k: 0 }), /integer ≥ 1/);
});
