import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/metrics/summary.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { applyOverrides } from '../../src/util/config-file.ts';
import { UserError } from '../../src/util/errors.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

// Review findings on writing scenarios: settings that used to run and give nonsense, now refused at load with the
// flag that set them (or clamped, with a note).
const refuses = (sets: string[], message: RegExp) =>
  assert.throws(
    () => loadScenario({ file: 'scenarios/default.yaml', sets: ['endS=30', ...sets] }),
    (e: Error) => e instanceof UserError && message.test(e.message) && !e.message.includes('\n'),
    sets.join(' '),
  );

test('tp beyond one node and pp beyond the layers are refused, for pools and spot entries', () => {
  refuses(['fleet.pools.0.tp=16'], /--set fleet\.pools\.0\.tp=16 fleet\.pools\[0\]\.tp: expected at most 8, the h100-80gb devices of one node/);
  refuses(['fleet.pools.0.model=llama2-70b', 'fleet.pools.0.tp=16'], /fleet\.pools\[0\]\.tp: expected at most 8, the h100-80gb devices of one node/);
  refuses(['fleet.pools.0.pp=100'], /fleet\.pools\[0\]\.pp: expected at most 32, llama3\.1-8b's layers/);
  refuses(['fleet.spot={initial: [{region: "", model: llama2-70b, hardware: l4, tp: 3, count: 5}]}'], /fleet\.spot\.initial\[0\]\.tp: expected a divisor of llama2-70b's 64 attention heads/);
  refuses(['fleet.spot={initial: [{region: mars, model: llama3.1-8b, hardware: h100-80gb, count: 5}]}'], /fleet\.spot\.initial\[0\]\.region: expected a serving region of some pool/);
  refuses(['fleet.spot={weightsRegions: {llama3.1-8b: [eest]}}'], /fleet\.spot\.weightsRegions\.llama3\.1-8b\[0\]: expected a serving region of some pool/);
  refuses(['fleet.spot={weightsRegions: {llama9: [""]}}'], /fleet\.spot\.weightsRegions\.llama9: expected a model of the catalog/);
});

test('pool names, scheduled-action pools, count ≥ minCount and a pool asking for chunked prefill under V0 are checked at load', () => {
  refuses(['fleet.pools.1={name: a, model: llama3.1-8b, hardware: h100-80gb, count: 1}', 'fleet.pools.0.name=a'], /fleet\.pools\[1\]\.name: expected a name no other pool has \(pool 0 is 'a'\)/);
  refuses(['scaling.actions=[{atS: 1, action: add, pool: nope}]'], /scaling\.actions\[0\]\.pool: expected a pool name/);
  refuses(['fleet.pools.0.minCount=5'], /fleet\.pools\[0\]\.count: expected ≥ minCount \(5\)/);
  refuses(['engine.scheduler=vllm-v0', 'engine.chunkedPrefill=false', 'fleet.pools.0.engine={chunkedPrefill: true}'], /fleet\.pools\[0\]\.engine\.chunkedPrefill: expected false or absent with scheduler vllm-v0/);
  // A pool choosing V0 under the default chunkedPrefill: true is fine (V0 ignores it).
  loadScenario({ file: 'scenarios/default.yaml', sets: ['fleet.pools.0.engine={scheduler: vllm-v0}'] });
});

test('a fixed KV size still needs the weights to fit', () => {
  const sc = scenarioFor(writeTrace([{ t: 0, in: 10, out: 2 }]), { fleet: { pools: [{ name: 'p', model: 'llama2-70b', hardware: 'l4', count: 1, engine: { kvBlocks: 100000 } }] } });
  assert.throws(() => run(sc, 'fast'), /llama2-70b needs .* of weights/);
});

test('scheduled actions keep the pool within minCount and maxCount, with a note', () => {
  const reqs = Array.from({ length: 20 }, (_, i) => ({ t: i, in: 10, out: 2 }));
  const sc = scenarioFor(writeTrace(reqs), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 3, minCount: 2, maxCount: 4 }] },
    scaling: { policy: 'scheduled', actions: [{ atS: 5, action: 'drain', pool: 'p', count: 3 }, { atS: 10, action: 'add', pool: 'p', count: 10 }] },
  });
  const res = run(sc, 'fast');
  assert.deepEqual(res.notes.filter((n) => n.startsWith('scaling.actions')), [
    "scaling.actions[0] (drain 3 on p at 5 s): 1 done, the pool's minCount 2 bounds it",
    "scaling.actions[1] (add 10 on p at 10 s): 2 done, the pool's maxCount 4 bounds it",
  ]);
  assert.equal(res.fleet.instances.length, 5, '3 at start, 1 drained, 2 added: never more than 4 live');
});

test('maxCount counts draining instances: a scheduled add finds no room while drained instances still run requests', () => {
  // Three long requests, one per instance; two instances drained at 1 s keep running theirs for ≈ 25 s.
  const reqs = Array.from({ length: 3 }, () => ({ t: 0, in: 100, out: 5000 }));
  const sc = scenarioFor(writeTrace(reqs), {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 3, minCount: 1, maxCount: 3 }] },
    scaling: { policy: 'scheduled', actions: [{ atS: 1, action: 'drain', pool: 'p', count: 2 }, { atS: 2, action: 'add', pool: 'p', count: 2 }] },
  });
  const res = run(sc, 'fast');
  assert.deepEqual(res.fleet.instances.map((i) => i.state), ['ready', 'stopped', 'stopped']);
  assert.ok(res.fleet.instances[1]!.stoppedS > 2, 'still draining at the add');
  assert.deepEqual(res.notes.filter((n) => n.startsWith('scaling.actions')), [
    "scaling.actions[1] (add 2 on p at 2 s): 0 done, the pool's maxCount 3 bounds it (2 still draining)",
  ]);
  assert.equal(summarize(res, 0).fleet.peakInstances, 3);
});

test('perf without kind is the roofline (or a profile when it has a path); a quoted --set segment keeps its dots', () => {
  const { scenario } = loadScenario({ file: 'scenarios/default.yaml', sets: ['perf.efficiency.perLayerOverheadS=35e-6'] });
  assert.deepEqual(scenario.perf, { kind: 'roofline', calibrated: false, efficiency: { perLayerOverheadS: 35e-6 } });
  refuses(['perf={path: ""}'], /perf\.path: expected a non-empty string/);
  // Absurd efficiencies are named where they were set (they used to fail later, blaming output.timelineIntervalS).
  refuses(['perf.efficiency.stepOverheadS=1e6'], /^--set perf\.efficiency\.stepOverheadS=1e6 perf\.efficiency\.stepOverheadS: expected ≤ 60, got 1000000$/);
  refuses(['perf.efficiency.compute=1e-300'], /perf\.efficiency\.compute: expected ≥ 0\.001, got 1e-300$/);
  // The noisy oracle's knobs apply to it only; ρ ≤ −1 would predict nothing.
  refuses(['prediction.noisy.biasTokens=5'], /prediction\.noisy: expected prediction\.length noisy \(noisy-oracle\) for these knobs/);
  refuses(['prediction.length=noisy', 'prediction.noisy.relativeErrors=[-1]'], /prediction\.noisy\.relativeErrors\[0\]: expected > -1, got -1$/);
  assert.deepEqual(loadScenario({ file: 'scenarios/default.yaml', sets: ['prediction.length=noisy', 'prediction.noisy.relativeErrors=[-0.2, 0.3]'] }).scenario.prediction, { length: 'noisy-oracle', noisy: { biasTokens: 0, relativeErrors: [-0.2, 0.3] } });
  const raw: Record<string, unknown> = {};
  applyOverrides(raw, ['scaling.options.thetaTps."llama3.1-8b"=1000', 'fleet.pools."0".name=x']);
  assert.deepEqual(raw, { scaling: { options: { thetaTps: { 'llama3.1-8b': 1000 } } }, fleet: { pools: { '0': { name: 'x' } } } });
  assert.throws(() => applyOverrides({}, ['a."b.c=1']), /--set a\."b\.c=1: expected PATH=VALUE/);
});

test('a pool timed with the profile rows of another model or tp gets a note', () => {
  const perf = { kind: 'profile', path: 'data/profiles/splitwise_perf_model.csv', model: 'bloom-176b', hardware: 'a100-80gb', tp: 8 };
  const res = run(scenarioFor(writeTrace([{ t: 0, in: 10, out: 2 }]), { perf }), 'fast', undefined);
  assert.deepEqual(res.notes, ['fleet.pools[0] (llama3.1-8b tp 1): timed with the profile rows of model bloom-176b, tp 8']);
});

test("a routing regionOrder naming no pool's region is refused (it silently reordered the rest)", () => {
  const pools = 'fleet.pools=[{name: e, model: llama3.1-8b, hardware: h100-80gb, count: 1, region: east}, {name: w, model: llama3.1-8b, hardware: h100-80gb, count: 1, region: west}]';
  refuses([pools, 'routing.policy=sageserve', 'routing.options={regionOrder: [wset, east]}'], /routing\.options\.regionOrder\[0\]: expected a serving region of some pool \(east, west\), got "wset"/);
  loadScenario({ file: 'scenarios/default.yaml', sets: [pools, 'routing.policy=sageserve', 'routing.options={regionOrder: [west, east]}'] });
});

test('a deployment that does not fit is refused at load, naming the flag that set it', () => {
  refuses(['engine.gpuMemoryUtilization=0.0001'], /^--set engine\.gpuMemoryUtilization=0\.0001 fleet\.pools\[0\] \(\w+\): llama3\.1-8b needs 16 GB of weights/);
  refuses(['fleet.pools.0.model=llama2-70b', 'fleet.pools.0.hardware=l4'], /^--set fleet\.pools\.0\.model=llama2-70b fleet\.pools\[0\] \(\w+\): llama2-70b needs 138 GB of weights .* 1 × l4 at tp 1 has 22 GB usable/);
  refuses(['engine.blockTokens=1000000'], /^--set engine\.blockTokens=1000000 fleet\.pools\[0\] \(\w+\): .*room for at least one KV block/);
  // A fixed KV size skips the KV room check, not the weights check.
  refuses(['fleet.pools.0.model=llama2-70b', 'fleet.pools.0.hardware=l4', 'fleet.pools.0.engine={kvBlocks: 100000}'], /llama2-70b needs 138 GB of weights/);
});

test('a bad --set is blamed on the flag that set the field, not on a later sibling flag that created its block', () => {
  refuses(['workload.transforms.compress=0', 'workload.transforms.limit=10'], /^--set workload\.transforms\.compress=0 workload\.transforms\.compress: expected ≥ 0\.001, got 0$/);
  refuses(['workload.transforms.limit=10', 'workload.transforms.compress=0'], /^--set workload\.transforms\.compress=0 workload\.transforms\.compress: /);
});
