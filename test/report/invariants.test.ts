/**
 * Property-based invariants of `compare` (fast-check): a variant is exactly the base scenario with its
 * overrides, however they are given (the file's `variants:` map, `--variant` flags, or `simulate --set`),
 * and its summary equals a plain `simulate` of that scenario (all but the wall time).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { loadComparison } from '../../src/report/variants.ts';
import { runComparison } from '../../src/report/compare.ts';
import { digestRun } from '../../src/report/digest.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { summarize, type Summary } from '../../src/metrics/summary.ts';

const MUL = Number(process.env.INVARIANTS_MUL ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'llmfleet-compare-inv-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const conv = resolve('data/azure-llm/AzureLLMInferenceTrace_conv.csv');
const BASE = `name: inv
seed: 4
workload:
  trace: { path: ${JSON.stringify(conv)}, format: azure }
  transforms: { compress: 6, limit: 120 }
fleet:
  pools:
    - name: h100
      model: llama3.1-8b
      hardware: h100-80gb
      count: 2
routing:
  policy: round-robin
slo: { ttftS: 0.25, tpotS: 0.1 }
output: { timelineIntervalS: 10 }
`;

/** One override as a (path, value) pair; values are what YAML would read. */
type Override = [string, unknown];

const ROUTERS = ['round-robin', 'random', 'least-requests', 'jsq', 'power-of-two', 'least-kv'];
/** Names with YAML-significant text: commas, colons, '#', leading digits, words YAML would read as other types. */
const nameArb = fc.oneof(
  fc.constantFrom('8', '1e3', 'true', 'null', 'no', 'a, b', 'x: y', 'a #b', "it's", '[x]', '{y}', '-', '~', ' padded '),
  fc.string({ unit: fc.constantFrom('a', 'Z', '1', ' ', ',', ':', '#', "'", '-', '.', '[', '{', 'é'), minLength: 1, maxLength: 8 }),
);

const overrideArb: fc.Arbitrary<Override> = fc.oneof(
  fc.constantFrom(...ROUTERS).map((p): Override => ['routing.policy', p]),
  fc.integer({ min: 1, max: 3 }).map((c): Override => ['fleet.pools.0.count', c]),
  fc.integer({ min: 0, max: 1000 }).map((s): Override => ['seed', s]),
  fc.integer({ min: 20, max: 150 }).map((l): Override => ['workload.transforms.limit', l]),
  fc.double({ min: 0.01, max: 2, noNaN: true }).map((t): Override => ['slo.ttftS', t]),
  fc.boolean().map((b): Override => ['engine.chunkedPrefill', b]),
  fc.integer({ min: 8, max: 512 }).map((m): Override => ['fleet.pools.0.engine', { maxNumSeqs: m, chunkedPrefill: m % 2 === 0 }]),
  nameArb.map((s): Override => ['name', s]),
);

/** Overrides on distinct paths (a later one on the same path would win in every form anyway). */
const overridesArb = fc.uniqueArray(overrideArb, { selector: (o) => o[0], maxLength: 5 });

/** `PATH=VALUE` as a user types it for `--set`: YAML flow text that reads back as the value. */
function setText([path, v]: Override): string {
  return `${path}=${typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : JSON.stringify(v)}`;
}

function writeFiles(variants: Override[][]): { base: string; withList: string } {
  const base = join(dir, `base${n}.yaml`);
  const withList = join(dir, `list${n++}.yaml`);
  writeFileSync(base, BASE);
  const list = variants.map((ovs, i) => `  - name: v${i}\n    set: ${JSON.stringify(Object.fromEntries(ovs))}\n`).join('');
  writeFileSync(withList, `${BASE}variants:\n${list}`);
  return { base, withList };
}

test('a variant is the base scenario with its overrides, whether from the file, --variant or simulate --set', () => {
  fc.assert(
    fc.property(fc.array(overridesArb, { minLength: 1, maxLength: 3 }), fc.option(fc.integer({ min: 0, max: 99 }), { nil: undefined }), (variants, seed) => {
      const { base, withList } = writeFiles(variants);
      const fromFile = loadComparison({ file: withList, seed });
      const fromFlags = loadComparison({ file: base, seed, variants: variants.map((ovs, i) => `v${i}:${ovs.map(setText).join(',')}`) });
      const plainBase = loadScenario({ file: base, seed }).scenario;
      assert.deepEqual(fromFile.base, plainBase);
      assert.deepEqual(fromFlags.base, plainBase);
      variants.forEach((ovs, i) => {
        // A variant's own seed wins over --seed (simulate refuses --seed with --set seed=…, which would set it twice).
        const flagSeed = ovs.some(([k]) => k === 'seed') ? undefined : seed;
        const want = loadScenario({ file: base, seed: flagSeed, sets: ovs.map(setText) }).scenario;
        assert.deepEqual(fromFile.variants[i]!.scenario, want, `file variant v${i}`);
        assert.deepEqual(fromFlags.variants[i]!.scenario, want, `--variant v${i}`);
        // The overrides the file's map gives back are themselves valid --set text for the same scenario.
        assert.deepEqual(loadScenario({ file: base, seed: flagSeed, sets: fromFile.variants[i]!.overrides }).scenario, want, `overrides ${JSON.stringify(fromFile.variants[i]!.overrides)}`);
      });
    }),
    { numRuns: 60 * MUL },
  );
});

function withoutWall(s: Summary): Summary {
  return { ...s, sim: { ...s.sim, wallSeconds: 0 } };
}

test('each variant of a comparison summarises exactly like a plain simulate of the same scenario', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(overridesArb, { minLength: 1, maxLength: 3 }), async (variants) => {
      const { withList, base } = writeFiles(variants);
      const setup = loadComparison({ file: withList });
      const results = await runComparison(setup, { mode: 'fast', workers: 0 });
      assert.deepEqual(results.map((r) => r.name), variants.map((_, i) => `v${i}`));
      variants.forEach((ovs, i) => {
        const { scenario, baseDir } = loadScenario({ file: base, sets: ovs.map(setText) });
        const res = simulate(scenario, baseDir, { mode: 'fast' });
        const summary = summarize(res, 0);
        assert.deepEqual(withoutWall(results[i]!.digest.summary), withoutWall(summary), `variant v${i} ${JSON.stringify(ovs)}`);
        assert.deepEqual({ ...results[i]!.digest, summary: undefined }, { ...digestRun(summary, res.log, res.timeline.rows), summary: undefined });
      });
    }),
    { numRuns: 6 * MUL },
  );
});

test('worker threads give the same summaries as running the variants one after another', async () => {
  const { withList } = writeFiles([[['routing.policy', 'jsq']], [['fleet.pools.0.count', 1], ['seed', 9]], [['routing.policy', 'random']]]);
  const setup = loadComparison({ file: withList });
  const seq = await runComparison(setup, { mode: 'fast', workers: 0 });
  const par = await runComparison(setup, { mode: 'fast', workers: 2 });
  assert.deepEqual(par.map((r) => withoutWall(r.digest.summary)), seq.map((r) => withoutWall(r.digest.summary)));
});
