import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../../src/util/rng.ts';
import { synthetic, type SyntheticOptions } from '../../../src/workload/generators/synthetic.ts';
import { scenarioSchema } from '../../../src/scenario/schema.ts';
import { summarize } from '../../../src/metrics/summary.ts';
import type { TraceRequest } from '../../../src/workload/types.ts';
import { all } from '../helpers.ts';
import { run, scenarioFor } from '../../helpers/sim.ts';

const LOGN = { kind: 'lognormal', input: { mu: 6, sigma: 1, min: 1, max: 4096 }, output: { mu: 4, sigma: 0.5, min: 1, max: 512 } } as const;
const BASE: SyntheticOptions = { durationS: 200, arrivals: { kind: 'poisson', ratePerS: 20 }, lengths: LOGN, labels: { tier: { a: 1, b: 1 } } };
const shared = (r: TraceRequest, s: TraceRequest) => {
  let k = 0;
  while (k < r.prefixHashes!.length && k < s.prefixHashes!.length && r.prefixHashes![k] === s.prefixHashes![k]) k++;
  return k;
};

test('sharedPrefix: a group shares exactly its whole prefix blocks, groups and suffixes share nothing; the other draws do not move', () => {
  const sp = { groups: 3, tokens: 1000, blockTokens: 16, zipf: 0 };
  const plain = all(synthetic(BASE, new Rng(3)));
  const src = synthetic({ ...BASE, sharedPrefix: sp }, new Rng(3));
  const reqs = all(src);
  assert.deepEqual(all(src), reqs, 'a second pass is identical');
  assert.equal(reqs.length, plain.length);
  reqs.forEach((r, i) => {
    const p = plain[i]!;
    assert.deepEqual([r.arrivalS, r.outputTokens, r.tier, r.inputTokens], [p.arrivalS, p.outputTokens, p.tier, p.inputTokens + 1000]);
    assert.equal(r.prefixBlockTokens, 16);
    assert.equal(r.prefixHashes!.length, Math.ceil(r.inputTokens / 16));
    assert.ok(r.prefixHashes!.every((h) => Number.isSafeInteger(h)));
  });
  // 1000 tokens = 62 whole blocks of 16 (the 63rd straddles the suffix).
  const group = (r: TraceRequest) => r.prefixHashes![0];
  const byGroup = new Map<number, TraceRequest[]>();
  for (const r of reqs) byGroup.set(group(r)!, [...(byGroup.get(group(r)!) ?? []), r]);
  assert.equal(byGroup.size, 3);
  const [g0, g1] = [...byGroup.values()];
  assert.equal(shared(g0![0]!, g0![1]!), 62);
  assert.equal(shared(g0![0]!, g1![0]!), 0);
  const suffixes = reqs.flatMap((r) => r.prefixHashes!.slice(62));
  assert.equal(new Set(suffixes).size, suffixes.length, 'no suffix block hash repeats');
});

test('sharedPrefix: zipf makes the first group the most popular; 0 spreads evenly', () => {
  const counts = (zipf: number) => {
    const c = new Map<number, number>();
    for (const r of all(synthetic({ ...BASE, durationS: 300, sharedPrefix: { groups: 10, tokens: 64, blockTokens: 16, zipf } }, new Rng(5)))) {
      c.set(r.prefixHashes![0]!, (c.get(r.prefixHashes![0]!) ?? 0) + 1);
    }
    return [...c.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n);
  };
  const flat = counts(0);
  const n = flat.reduce((a, b) => a + b, 0);
  assert.ok(flat.every((x) => Math.abs(x / n - 0.1) < 0.03), `uniform: ${flat}`);
  const skew = counts(1.2);
  // P(group g) = (g + 1)^-1.2 / Σ: 0.405 for the first of 10, 0.176 for the second.
  const z = Array.from({ length: 10 }, (_, g) => (g + 1) ** -1.2);
  const total = z.reduce((a, b) => a + b, 0);
  const m = skew.reduce((a, b) => a + b, 0);
  skew.forEach((x, g) => assert.ok(Math.abs(x / m - z[g]! / total) < 0.03, `zipf 1.2: ${skew}`));
});

test('sharedPrefix in a scenario: validated field by field; with engine.prefixCache fewer groups find more cached', () => {
  const parse = (sharedPrefix: unknown) =>
    scenarioSchema.safeParse({ workload: { synthetic: { durationS: 10, arrivals: { kind: 'poisson', ratePerS: 1 }, lengths: LOGN, sharedPrefix } }, fleet: { pools: [{ model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }] } });
  for (const [bad, field] of [[{ groups: 0, tokens: 10 }, 'groups'], [{ groups: 1, tokens: -1 }, 'tokens'], [{ groups: 1, tokens: 10, zipf: -1 }, 'zipf'], [{ groups: 1, tokens: 10, extra: 1 }, '']] as const) {
    const r = parse(bad);
    assert.equal(r.success, false, JSON.stringify(bad));
    assert.ok(JSON.stringify(r.error!.issues).includes('sharedPrefix'), JSON.stringify(r.error!.issues));
    if (field) assert.ok(r.error!.issues.some((i) => i.path.at(-1) === field), JSON.stringify(r.error!.issues));
  }
  assert.equal(parse({ groups: 2, tokens: 512 }).success, true);
  const hitRate = (groups: number) => {
    const sc = scenarioFor('', {
      workload: { synthetic: { durationS: 120, arrivals: { kind: 'poisson', ratePerS: 5 }, lengths: LOGN, sharedPrefix: { groups, tokens: 2048 } } },
      engine: { prefixCache: true },
    });
    return summarize(run(sc, 'fast'), 0).engine.prefixCache!.hitRate;
  };
  const one = hitRate(1);
  const many = hitRate(1000);
  assert.ok(one > 0.5, `one group: ${one}`);
  assert.ok(many < one / 2, `1000 groups: ${many} vs ${one}`);
});
