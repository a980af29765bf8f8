import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { Rng } from '../../src/util/rng.ts';
import { ConfigError, UserError } from '../../src/util/errors.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { openWorkload, workloadSchema } from '../../src/workload/schema.ts';
import { synthetic } from '../../src/workload/generators/synthetic.ts';
import { all } from './helpers.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const load = (yaml: string) => workloadSchema.parse(parse(yaml));

test('a trace workload resolves its path against baseDir and applies transforms', () => {
  const spec = load(`
trace: { path: data/azure-llm/AzureLLMInferenceTrace_conv.csv, format: azure }
transforms: { window: { startS: 600, endS: 1200 }, compress: 2, limit: 1000 }
`);
  const reqs = all(openWorkload(spec, new Rng(1), ROOT));
  assert.equal(reqs.length, 1000);
  assert.ok(reqs.every((r, i) => r.id === i && r.arrivalS >= 0 && r.arrivalS < 300));
});

test('a trace format may be left out and is detected', () => {
  const spec = load('trace: { path: data/azure-llm/AzureLLMInferenceTrace_code.csv }');
  assert.equal(all(openWorkload(spec, new Rng(1), ROOT)).length, 8_819);
});

test('a synthetic workload with empirical lengths from a trace fills defaults and is deterministic', () => {
  const spec = load(`
synthetic:
  durationS: 60
  arrivals: { kind: curve, baseRatePerS: 20 }
  lengths: { kind: empirical, path: data/azure-llm/AzureLLMInferenceTrace_conv.csv, format: azure }
  labels: { tier: { iw-f: 0.3, iw-n: 0.7 }, region: eu-west }
transforms: { rateScale: 1.5 }
`);
  assert.equal(spec.synthetic?.arrivals.kind === 'curve' && spec.synthetic.arrivals.peakHour, 14);
  const a = all(openWorkload(spec, new Rng(3), ROOT));
  assert.deepEqual(all(openWorkload(spec, new Rng(3), ROOT)), a);
  assert.ok(a.length > 500 && a.every((r) => r.region === 'eu-west' && (r.tier === 'iw-f' || r.tier === 'iw-n')));
});

test('fitted-lognormal and lognormal lengths and gamma and table arrivals parse and run', () => {
  for (const yaml of [
    'synthetic: { durationS: 10, arrivals: { kind: gamma, ratePerS: 5, cv: 2 }, lengths: { kind: fitted-lognormal, path: data/azure-llm/AzureLLMInferenceTrace_code.csv } }',
    'synthetic: { durationS: 10, arrivals: { kind: table, points: [[0, 1], [5, 20]] }, lengths: { kind: lognormal, input: { mu: 6, sigma: 1 }, output: { mu: 4, sigma: 1, max: 512 } } }',
  ]) {
    const reqs = all(openWorkload(load(yaml), new Rng(1), ROOT));
    assert.ok(reqs.length > 0 && reqs.every((r) => r.inputTokens >= 1 && r.outputTokens >= 1));
  }
});

test('the schema rejects unknown keys, both or neither source, and bad values', () => {
  const bad = [
    'trace: { path: a.csv, format: azure }\nsynthetic: { durationS: 1, arrivals: { kind: poisson, ratePerS: 1 }, lengths: { kind: lognormal, input: { mu: 1, sigma: 1 }, output: { mu: 1, sigma: 1 } } }',
    'transforms: { limit: 3 }',
    'trace: { path: a.csv, format: parquet }',
    'trace: { path: a.csv, fromat: azure }',
    'trace: { path: a.csv }\ntransforms: { window: { startS: 10, endS: 5 } }',
    'trace: { path: a.csv }\ntransforms: { compress: 0 }',
    'synthetic: { durationS: 1, arrivals: { kind: poisson, ratePerS: -1 }, lengths: { kind: lognormal, input: { mu: 1, sigma: 1 }, output: { mu: 1, sigma: 1 } } }',
    'synthetic: { durationS: 1, arrivals: { kind: poisson, ratePerS: 1 }, lengths: { kind: lognormal, input: { mu: 1, sigma: 1, min: 9, max: 3 }, output: { mu: 1, sigma: 1 } } }',
    'synthetic: { durationS: 1, arrivals: { kind: table, points: [[5, 1], [1, 1]] }, lengths: { kind: lognormal, input: { mu: 1, sigma: 1 }, output: { mu: 1, sigma: 1 } } }',
  ];
  for (const y of bad) assert.equal(workloadSchema.safeParse(parse(y)).success, false, y);
});

test('lognormal lengths are bounded like trace token counts (≤ 1e9): min, max and the median e^mu past it are ConfigErrors naming the field', () => {
  const set = (input: string) => `workload={synthetic: {durationS: 5, arrivals: {kind: poisson, ratePerS: 2}, lengths: {kind: lognormal, input: ${input}, output: {mu: 3, sigma: 0}}}}`;
  for (const [input, field] of [
    // 5e9 was accepted and wrapped to 705032704 in the 32-bit request log.
    ['{mu: 10, sigma: 0, max: 5000000000}', 'workload.synthetic.lengths.input.max: expected ≤ 1000000000, got 5000000000'],
    ['{mu: 5, sigma: 1, min: 2000000000, max: 3000000000}', 'workload.synthetic.lengths.input.min: expected ≤ 1000000000, got 2000000000'],
    ['{mu: 30, sigma: 0}', 'workload.synthetic.lengths.input.mu: expected ≤ ln(1e9) ≈ 20.72'],
  ]) {
    assert.throws(() => loadScenario({ sets: [set(input!)] }), (e: unknown) => e instanceof ConfigError && e.message.includes(field!), input);
  }
  // At the cap, every draw stays within it.
  const spec = load('synthetic: { durationS: 20, arrivals: { kind: poisson, ratePerS: 5 }, lengths: { kind: lognormal, input: { mu: 20.7, sigma: 4, max: 1000000000 }, output: { mu: 3, sigma: 0 } } }');
  const reqs = all(openWorkload(spec, new Rng(1), ROOT));
  assert.ok(reqs.some((r) => r.inputTokens === 1e9) && reqs.every((r) => r.inputTokens >= 1 && r.inputTokens <= 1e9));
  // The generator refuses such a side when called directly, too.
  const side = { mu: 10, sigma: 0, min: 1, max: 5e9 };
  assert.throws(() => synthetic({ durationS: 1, arrivals: { kind: 'poisson', ratePerS: 1 }, lengths: { kind: 'lognormal', input: side, output: side } }, new Rng(1)), /lognormal input lengths: expected .*min ≤ max ≤ 1e9/);
});

test('a missing trace file or an empty result is a UserError', () => {
  assert.throws(() => openWorkload(load('trace: { path: nope.csv, format: azure }'), new Rng(1), ROOT), (e: unknown) => e instanceof UserError && e.message.includes('nope.csv'));
  assert.throws(
    () => openWorkload(load('trace: { path: data/azure-llm/AzureLLMInferenceTrace_code.csv, format: azure }\ntransforms: { window: { startS: 99999 } }'), new Rng(1), ROOT),
    (e: unknown) => e instanceof UserError && /^workload\.transforms\.window: \[99999, ∞\) s holds no request; workload\.trace \(.*code\.csv\) has 8819 requests arriving in \[0, 3435\.\d+\] s$/.test(e.message),
  );
  assert.throws(
    () => openWorkload(load('trace: { path: data/azure-llm/AzureLLMInferenceTrace_code.csv }\ntransforms: { window: { startS: 10, endS: 100 }, rateScale: 1e-9 }'), new Rng(1), ROOT),
    /^UserError: workload\.transforms\.rateScale: thinning by 1e-9 kept none of the requests in the window; /,
  );
  assert.throws(() => openWorkload(workloadSchema.parse({ o365: { preset: 'peak-day', scale: 1e-12, durationS: 1 } }), new Rng(1), '.'), /^UserError: workload\.o365: no requests/);
});

test('workload.o365 streams the O365-like generator: a preset slice, scaled, with tiers and regions', () => {
  const spec = workloadSchema.parse({ o365: { preset: 'peak-day', scale: 0.001, durationS: 3600 } });
  const reqs = [...openWorkload(spec, new Rng(1), '.')];
  assert.ok(reqs.length > 50, `${reqs.length} requests`);
  assert.deepEqual([...new Set(reqs.map((r) => r.model))], ['llama2-70b']);
  assert.ok(new Set(reqs.map((r) => r.tier)).size === 3);
  assert.ok(reqs.every((r, i) => i === 0 || r.arrivalS >= reqs[i - 1]!.arrivalS));
  assert.throws(() => workloadSchema.parse({ o365: { preset: 'peak-day' }, trace: { path: 'x.csv' } }), /exactly one of trace, synthetic or o365/);
  // unknown or empty lists fail in the schema, so the error names the field (o365.models[0]), not just the value
  const issue = (o365: unknown) => workloadSchema.safeParse({ o365 }).error?.issues[0];
  assert.deepEqual(issue({ models: ['llama9'] })?.path, ['o365', 'models', 0]);
  assert.deepEqual(issue({ regions: [] })?.path, ['o365', 'regions']);
});
