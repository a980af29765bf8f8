import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { catalogModelId, fleetYaml, planToFleet, simulatorModel, variantsYaml } from '../../../src/optimize/joint-allocation/fleet-export.ts';
import { getModel } from '../../../src/model/catalog.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { scenarioSchema } from '../../../src/scenario/schema.ts';
import { simulate } from '../../../src/sim/simulator.ts';

const TIERS = [
  { name: 'h100-fp16', latencyScale: 1 },
  { name: 'h100-fp16-b', latencyScale: 1 },
  { name: 'h100-int8', latencyScale: 0.5 },
  { name: 'h100-int4', latencyScale: 0.25 },
  { name: 'a6000-fp16', latencyScale: 1 },
  { name: 'a6000-int4', latencyScale: 0.25 },
  { name: 'a100-fp16', latencyScale: 1 },
  { name: 'rtx4090-int4', latencyScale: 0.25 },
];
const problem = { tiers: TIERS };
const HARDWARE: Record<string, string> = { h100: 'h100-80gb', a100: 'a100-40gb', a6000: 'a6000', rtx4090: 'rtx4090' };
const dep = (model: string, tier: string, tp = 1, pp = 1) => ({ model, tier, hardware: HARDWARE[tier.split('-')[0]!]!, tp, pp, gpus: tp * pp, types: ['a'] });
const workload = { synthetic: { durationS: 20, arrivals: { kind: 'poisson', ratePerS: 2 }, lengths: { kind: 'lognormal', input: { mu: 5, sigma: 0.5 }, output: { mu: 3, sigma: 0.5 } } } };

test('problem model names map to catalog ids; unknown ones are kept and listed', () => {
  assert.equal(catalogModelId('llama-3.1-8b'), 'llama3.1-8b');
  assert.equal(catalogModelId('llama-3.2-1b'), 'llama3.2-1b');
  assert.equal(catalogModelId('llama-34b'), 'codellama-34b');
  assert.equal(catalogModelId('llama-3.2-11b-vision'), 'llama3.2-11b-vision');
  assert.equal(catalogModelId('falcon-40b'), 'falcon-40b');
  const { fleet, unmapped, variants } = planToFleet({ deployments: [dep('llama-3.1-8b', 'h100-fp16'), dep('llama-3.1-8b', 'h100-fp16'), dep('falcon-40b', 'a6000-fp16', 2)] }, problem);
  assert.deepEqual(fleet.pools.map((p) => [p.model, p.hardware, p.tp, p.count]), [['falcon-40b', 'a6000', 2, 1], ['llama3.1-8b', 'h100-80gb', 1, 2]]);
  assert.deepEqual(unmapped, ['falcon-40b']);
  assert.deepEqual(variants, { models: {} });
  // A quantised tier of a model the catalog lacks keeps its precision: the variant id is what to add.
  assert.deepEqual(planToFleet({ deployments: [dep('falcon-40b', 'a6000-int4', 2)] }, problem).unmapped, ['falcon-40b-w4']);
  // A plan of another problem (a tier it does not list) is refused, not exported at BF16.
  assert.throws(() => planToFleet({ deployments: [dep('llama-3.1-8b', 'h100-int2')] }, problem), /tier "h100-int2", which the problem does not list/);
});

test('pools are per simulator model (precision included), hardware and TP/PP: FP16 and INT4 pairs of one model and GPU are two pools', () => {
  const { fleet, variants } = planToFleet({
    deployments: [
      dep('llama-3.1-8b', 'h100-fp16', 2),
      dep('llama-3.1-8b', 'h100-int4', 2),
      dep('llama-3.1-8b', 'h100-int8', 2),
      // Two tiers of one GPU and precision run the same simulator model: one pool of two groups.
      dep('llama-3.1-8b', 'h100-fp16-b', 2),
      dep('llama-3.2-3b', 'a100-fp16'),
    ],
  }, problem);
  assert.deepEqual(fleet.pools.map((p) => [p.name, p.model, p.hardware, p.tp, p.pp, p.count]), [
    ['llama3.1-8b@h100-80gb-tp2', 'llama3.1-8b', 'h100-80gb', 2, 1, 2],
    ['llama3.1-8b-w4@h100-80gb-tp2', 'llama3.1-8b-w4', 'h100-80gb', 2, 1, 1],
    ['llama3.1-8b-w8@h100-80gb-tp2', 'llama3.1-8b-w8', 'h100-80gb', 2, 1, 1],
    ['llama3.2-3b@a100-40gb-tp1', 'llama3.2-3b', 'a100-40gb', 1, 1, 1],
  ]);
  const base = getModel('llama3.1-8b');
  assert.deepEqual(Object.keys(variants.models).sort(), ['llama3.1-8b-w4', 'llama3.1-8b-w8']);
  assert.equal(variants.models['llama3.1-8b-w4']!.weightBytesPerParam, base.bytesPerParam * 0.25);
  assert.equal(variants.models['llama3.1-8b-w8']!.weightBytesPerParam, base.bytesPerParam * 0.5);
  // Otherwise the base model's architecture (KV, FLOPs at bytesPerParam).
  const { name: _n, source: _s, ...arch } = base;
  const { weightBytesPerParam: _w, source: _vs, ...variantArch } = variants.models['llama3.1-8b-w4']!;
  assert.deepEqual(variantArch, arch);
  // The one definition --sim-check uses too.
  assert.deepEqual(simulatorModel('llama-3.1-8b', 0.25), { id: 'llama3.1-8b-w4', variant: variants.models['llama3.1-8b-w4'] });
  assert.deepEqual(simulatorModel('llama-3.1-8b', 1), { id: 'llama3.1-8b', variant: null });
});

test('an exported fleet without quantised tiers is a fleet section alone, and runs in the simulator', () => {
  const e = planToFleet({ deployments: [dep('llama-3.1-8b', 'h100-fp16'), dep('llama-3.2-3b', 'a100-fp16')] }, problem);
  const text = fleetYaml(e);
  assert.equal(variantsYaml(e), null);
  assert.doesNotMatch(text, /catalog/);
  const doc = parse(text);
  assert.deepEqual(Object.keys(doc), ['fleet']);
  const sc = scenarioSchema.parse({ workload, fleet: doc.fleet });
  const res = simulate(sc, '.', { mode: 'fast' });
  assert.equal(res.fleet.instances.length, 2);
  assert.ok(res.log.n > 0);
});

test('a quantised 70B on four 4090s (fits at ν·B/g) exports as a -w4 variant that passes the scenario loader\'s memory check', () => {
  const plan = { deployments: [dep('llama-3.1-70b', 'rtx4090-int4', 4), dep('llama-3.1-8b', 'rtx4090-int4')] };
  const e = planToFleet(plan, problem);
  assert.deepEqual(e.fleet.pools.map((p) => p.name), ['llama3.1-70b-w4@rtx4090-tp4', 'llama3.1-8b-w4@rtx4090-tp1']);
  const text = fleetYaml(e);
  // The header says where the variants are and what the scenario needs; the document carries `catalog:` itself.
  assert.match(text, /^# Quantised tiers run weight-only variants \(llama3\.1-70b-w4, llama3\.1-8b-w4\) defined in catalog\.yaml\n/);
  assert.match(text, /needs `catalog: catalog\.yaml`/);
  const doc = parse(text);
  assert.equal(doc.catalog, 'catalog.yaml');
  const catalogText = variantsYaml(e)!;
  assert.deepEqual(parse(catalogText), e.variants);
  assert.equal(e.variants.models['llama3.1-70b-w4']!.weightBytesPerParam, getModel('llama3.1-70b').bytesPerParam * 0.25);

  // plan --out's files, and a scenario made of fleet.yaml plus a workload beside them, through the normal loader.
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-fleet-export-'));
  writeFileSync(join(dir, 'catalog.yaml'), catalogText);
  writeFileSync(join(dir, 'scenario.yaml'), stringify({ name: 'exported', workload: { ...workload, synthetic: { ...workload.synthetic, labels: { model: { 'llama3.1-70b-w4': 1, 'llama3.1-8b-w4': 1 } } } } }) + text);
  const { scenario, baseDir } = loadScenario({ file: join(dir, 'scenario.yaml'), sets: [] });
  const res = simulate(scenario, baseDir, { mode: 'fast' });
  assert.equal(res.fleet.instances.length, 2);
  assert.ok(res.log.n > 0);

  // The same pool at BF16 (what the export wrote before it kept the tier's precision) does not fit.
  const bf16 = { fleet: { pools: [{ ...doc.fleet.pools[0], name: 'bf16', model: 'llama3.1-70b' }] } };
  writeFileSync(join(dir, 'bf16.yaml'), stringify({ name: 'bf16', workload, ...bf16 }));
  assert.throws(() => loadScenario({ file: join(dir, 'bf16.yaml'), sets: [] }), /llama3\.1-70b needs 141 GB of weights .* 4 × rtx4090 at tp 4 has 93 GB usable/);
});
