import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { getHardware, getModel } from '../../src/model/catalog.ts';
import { makePerfModel, perfSpecSchema } from '../../src/perf/index.ts';
import type { Deployment } from '../../src/perf/types.ts';

const dep: Deployment = { model: getModel('llama2-70b'), hardware: getHardware('h100-80gb'), tp: 8, pp: 1 };

test('an absent perf section means the roofline with the generic (uncalibrated) factors', () => {
  const spec = perfSpecSchema.parse(undefined);
  assert.deepEqual(spec, { kind: 'roofline', calibrated: false });
  const pm = makePerfModel(spec, dep);
  assert.match(pm.name, /^roofline\(llama2-70b@h100-80gb tp8\)$/);
  assert.ok(pm.decodeStepCoeffs(1).baseS > 0);
});

test('roofline efficiency overrides from the scenario reach the model', () => {
  const a = makePerfModel(perfSpecSchema.parse({ kind: 'roofline', efficiency: { stepOverheadS: 0, perLayerOverheadS: 0 } }), dep);
  const b = makePerfModel(perfSpecSchema.parse({ kind: 'roofline', efficiency: { stepOverheadS: 0.02, perLayerOverheadS: 0 } }), dep);
  assert.ok(Math.abs(b.decodeStepCoeffs(3).baseS - a.decodeStepCoeffs(3).baseS - 0.02) < 1e-12);
  const c = makePerfModel(perfSpecSchema.parse({ kind: 'roofline', efficiency: { stepOverheadS: 0, perLayerOverheadS: 1e-4 } }), dep);
  assert.ok(Math.abs(c.decodeStepCoeffs(3).baseS - a.decodeStepCoeffs(3).baseS - dep.model.layers * 1e-4) < 1e-12);
  assert.throws(() => perfSpecSchema.parse({ kind: 'roofline', efficiency: { perLayerOverheadS: -1 } }));
});

test('the schema is strict and checks ranges', () => {
  assert.throws(() => perfSpecSchema.parse({ kind: 'roofline', efficiency: { compute: 1.5 } }));
  assert.throws(() => perfSpecSchema.parse({ kind: 'roofline', effciency: {} }));
  assert.throws(() => perfSpecSchema.parse({ kind: 'profile' }));
  assert.throws(() => perfSpecSchema.parse({ kind: 'table', path: 'x' }));
});

test('a profile spec resolves its path against baseDir and keys the table by the deployment by default', () => {
  const spec = perfSpecSchema.parse({ kind: 'profile', path: 'profiles/splitwise_perf_model.csv' });
  const pm = makePerfModel(spec, dep, resolve('data'));
  assert.equal(pm.name, 'profile(llama2-70b/h100-80gb/tp8)');
  assert.equal(pm.decodeStepCoeffs(10).perContextTokenS, 0);
  const other = makePerfModel(perfSpecSchema.parse({ ...spec, hardware: 'a100-80gb', tp: 4 }), dep, 'data');
  assert.equal(other.name, 'profile(llama2-70b/a100-80gb/tp4)');
  assert.ok(other.decodeStepCoeffs(10).baseS > pm.decodeStepCoeffs(10).baseS, 'A100 tp4 decodes slower than H100 tp8');
  assert.throws(() => makePerfModel(spec, { ...dep, model: getModel('llama2-7b') }, 'data'), /no rows for llama2-7b\/h100-80gb\/tp8; it has bloom-176b/);
});
