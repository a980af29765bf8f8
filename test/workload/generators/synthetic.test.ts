import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../../src/util/rng.ts';
import { UserError } from '../../../src/util/errors.ts';
import { synthetic, type SyntheticOptions } from '../../../src/workload/generators/synthetic.ts';
import { arrivalTimes, rateAt, type ArrivalSpec } from '../../../src/workload/generators/arrivals.ts';
import { fitEmpirical, fitLognormal } from '../../../src/workload/generators/lengths.ts';
import { labelPicker } from '../../../src/workload/generators/labels.ts';
import { openTrace } from '../../../src/workload/index.ts';
import { AZURE_DIR, all } from '../helpers.ts';

const LOGN = { kind: 'lognormal', input: { mu: 6.5, sigma: 1, min: 1, max: 8192 }, output: { mu: 5, sigma: 0.8, min: 1, max: 2048 } } as const;

function gaps(spec: ArrivalSpec, n: number, seed: number): number[] {
  const it = arrivalTimes(spec, new Rng(seed));
  let prev = 0;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = it.next().value;
    out.push(t - prev);
    prev = t;
  }
  return out;
}

function meanCv(xs: number[]): [number, number] {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  const v = xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length;
  return [m, Math.sqrt(v) / m];
}

test('Poisson arrivals at 80/s: mean rate within 1% and gap CV ≈ 1 over 200k draws', () => {
  const [m, cv] = meanCv(gaps({ kind: 'poisson', ratePerS: 80 }, 200_000, 1));
  assert.ok(Math.abs(1 / m / 80 - 1) < 0.01, `rate ${1 / m}`);
  assert.ok(Math.abs(cv - 1) < 0.02, `cv ${cv}`);
});

test('Gamma arrivals keep the mean rate and reach the asked CV (0.5 and 3)', () => {
  for (const want of [0.5, 3]) {
    const [m, cv] = meanCv(gaps({ kind: 'gamma', ratePerS: 10, cv: want }, 200_000, 2));
    assert.ok(Math.abs(1 / m / 10 - 1) < 0.03, `rate ${1 / m} at cv ${want}`);
    assert.ok(Math.abs(cv / want - 1) < 0.05, `cv ${cv}, wanted ${want}`);
  }
});

test('a diurnal curve peaks at peakHour, bottoms 12 h later and applies the weekend factor', () => {
  const spec: ArrivalSpec = { kind: 'curve', baseRatePerS: 10, diurnalAmplitude: 0.5, peakHour: 14, weekendFactor: 0.25, startDay: 0 };
  const rate = rateAt(spec);
  assert.ok(Math.abs(rate(14 * 3600) - 15) < 1e-9);
  assert.ok(Math.abs(rate(2 * 3600) - 5) < 1e-9);
  assert.ok(Math.abs(rate(5 * 86_400 + 14 * 3600) - 3.75) < 1e-9, 'Saturday');
  // Counts by thinning: the 10:00–18:00 Monday band sees more than the 22:00–06:00 band.
  const it = arrivalTimes(spec, new Rng(5));
  let day = 0;
  let night = 0;
  for (let t = it.next().value; t < 86_400; t = it.next().value) {
    const h = t / 3600;
    if (h >= 10 && h < 18) day++;
    else if (h >= 22 || h < 6) night++;
  }
  // Expected counts: ∫ λ dt over each 8 h band = 36,000/h · (8 h ± 0.5 · (24/π) · sin(π/3) h) ≈ 407,100 and 168,900.
  assert.ok(Math.abs(day / 407_100 - 1) < 0.01 && Math.abs(night / 168_900 - 1) < 0.01, `day ${day} night ${night}`);
});

test('a rate table interpolates linearly, stays flat outside, repeats with periodS', () => {
  const r = rateAt({ kind: 'table', points: [[0, 1], [100, 3], [200, 3]], periodS: 300 });
  assert.equal(r(50), 2);
  assert.equal(r(250), 3);
  assert.equal(r(350), 2);
  const n = all(synthetic({ durationS: 200, arrivals: { kind: 'table', points: [[0, 0], [100, 0], [100.5, 50], [200, 50]] }, lengths: LOGN }, new Rng(9)));
  assert.ok(n.every((q) => q.arrivalS >= 100), 'no arrivals where the rate is 0');
  assert.ok(Math.abs(n.length / (50 * 99.75) - 1) < 0.05, `got ${n.length}`);
});

test('synthetic workloads are deterministic per seed, ordered, bounded by durationS and maxRequests', () => {
  const opts: SyntheticOptions = { durationS: 60, arrivals: { kind: 'poisson', ratePerS: 50 }, lengths: LOGN, labels: { tier: { 'iw-f': 3, 'iw-n': 1 }, model: 'llama-2-70b' } };
  const s = synthetic(opts, new Rng(4));
  const a = all(s);
  assert.deepEqual(all(s), a, 'a second pass is identical');
  assert.deepEqual(all(synthetic(opts, new Rng(4))), a);
  assert.notDeepEqual(all(synthetic(opts, new Rng(5))), a);
  a.forEach((r, i) => {
    assert.equal(r.id, i);
    assert.ok(r.arrivalS < 60 && (i === 0 || r.arrivalS >= a[i - 1]!.arrivalS));
    assert.ok(Number.isInteger(r.inputTokens) && r.inputTokens >= 1 && r.inputTokens <= 8192);
    assert.ok(Number.isInteger(r.outputTokens) && r.outputTokens >= 1 && r.outputTokens <= 2048);
    assert.equal(r.model, 'llama-2-70b');
  });
  const fast = a.filter((r) => r.tier === 'iw-f').length / a.length;
  assert.ok(Math.abs(fast - 0.75) < 0.03, `iw-f share ${fast}`);
  assert.equal(all(synthetic({ ...opts, maxRequests: 17 }, new Rng(4))).length, 17);
});

test('every arrival kind is deterministic per seed and in order', () => {
  const kinds: ArrivalSpec[] = [
    { kind: 'poisson', ratePerS: 30 },
    { kind: 'gamma', ratePerS: 30, cv: 0.3 },
    { kind: 'curve', baseRatePerS: 30, diurnalAmplitude: 1, peakHour: 3, weekendFactor: 2, startDay: 4, startHour: 23 },
    { kind: 'table', points: [[0, 5], [30, 60]], periodS: 45 },
  ];
  for (const arrivals of kinds) {
    const a = all(synthetic({ durationS: 120, arrivals, lengths: LOGN }, new Rng(6)));
    assert.ok(a.length > 100, arrivals.kind);
    assert.deepEqual(all(synthetic({ durationS: 120, arrivals, lengths: LOGN }, new Rng(6))), a, arrivals.kind);
    a.forEach((r, i) => assert.ok(r.id === i && (i === 0 || r.arrivalS >= a[i - 1]!.arrivalS), arrivals.kind));
  }
});

test('changing the label mix does not change arrivals or lengths', () => {
  const base: SyntheticOptions = { durationS: 10, arrivals: { kind: 'poisson', ratePerS: 20 }, lengths: LOGN };
  const strip = (r: { arrivalS: number; inputTokens: number; outputTokens: number }) => [r.arrivalS, r.inputTokens, r.outputTokens];
  const a = all(synthetic(base, new Rng(1))).map(strip);
  const b = all(synthetic({ ...base, labels: { region: { eu: 1, us: 1 } } }, new Rng(1))).map(strip);
  assert.deepEqual(a, b);
});

test('empirical lengths sample (input, output) pairs of the Azure code trace', () => {
  const pairs = fitEmpirical(openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_code.csv`, 'azure'));
  assert.equal(pairs.inputs.length, 8_819);
  const seen = new Set(Array.from(pairs.inputs, (x, i) => `${x}/${pairs.outputs[i]}`));
  const out = all(synthetic({ durationS: 100, arrivals: { kind: 'poisson', ratePerS: 20 }, lengths: { kind: 'empirical', pairs } }, new Rng(2)));
  assert.ok(out.length > 1500);
  for (const r of out) assert.ok(seen.has(`${r.inputTokens}/${r.outputTokens}`));
});

test('empirical fitting keeps a reservoir of maxPairs beyond the cap', () => {
  const pairs = fitEmpirical(openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_code.csv`, 'azure'), { maxPairs: 100, rng: new Rng(1) });
  assert.equal(pairs.inputs.length, 100);
});

test('lognormal fitting recovers mu and sigma from generated lengths', () => {
  const wide = { kind: 'lognormal', input: { mu: 6, sigma: 0.7, min: 1, max: 1e9 }, output: { mu: 4, sigma: 0.5, min: 1, max: 1e9 } } as const;
  const fit = fitLognormal(synthetic({ durationS: 1000, arrivals: { kind: 'poisson', ratePerS: 50 }, lengths: wide }, new Rng(3)));
  assert.ok(Math.abs(fit.input.mu - 6) < 0.02 && Math.abs(fit.input.sigma - 0.7) < 0.02, JSON.stringify(fit.input));
  assert.ok(Math.abs(fit.output.mu - 4) < 0.02 && Math.abs(fit.output.sigma - 0.5) < 0.02, JSON.stringify(fit.output));
  const conv = fitLognormal(openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_conv.csv`, 'azure'));
  assert.deepEqual([conv.input.min, conv.input.max, conv.output.min, conv.output.max], [2, 14050, 7, 1000]);
});

test('bad generator settings are UserErrors', () => {
  assert.throws(() => synthetic({ durationS: 0, arrivals: { kind: 'poisson', ratePerS: 1 }, lengths: LOGN }, new Rng(1)), UserError);
  assert.throws(() => synthetic({ durationS: 1, arrivals: { kind: 'gamma', ratePerS: 1, cv: 0 }, lengths: LOGN }, new Rng(1)), UserError);
  assert.throws(() => synthetic({ durationS: 1, arrivals: { kind: 'table', points: [[0, 0]] }, lengths: LOGN }, new Rng(1)), UserError);
  assert.throws(() => labelPicker({ a: 0 }, 'tier'), UserError);
});
