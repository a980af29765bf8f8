import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Rng } from '../../src/util/rng.ts';
import { UserError } from '../../src/util/errors.ts';
import type { RequestSource, TraceRequest } from '../../src/workload/types.ts';
import { applyTransforms, compress, limit, rateScale, relabelModels, timeWindow, type TransformSpec } from '../../src/workload/transforms.ts';
import { openTrace } from '../../src/workload/index.ts';
import { AZURE_DIR, all } from './helpers.ts';

function src(times: number[], deadlineSlackS?: number): RequestSource {
  return times.map((t, i) => ({ id: i, arrivalS: t, inputTokens: 10 + i, outputTokens: 1 + i, ...(deadlineSlackS === undefined ? {} : { deadlineS: t + deadlineSlackS }) }));
}

function assertContract(reqs: TraceRequest[]): void {
  reqs.forEach((r, i) => {
    assert.equal(r.id, i);
    if (i > 0) assert.ok(r.arrivalS >= reqs[i - 1]!.arrivalS, `arrival ${i} goes back`);
  });
}

test('a time window keeps [startS, endS), re-bases to 0 and moves deadlines with it', () => {
  const out = all(timeWindow(src([0, 1, 2, 3, 4], 5), 1, 3));
  assert.deepEqual(out.map((r) => [r.id, r.arrivalS, r.inputTokens, r.deadlineS]), [[0, 0, 11, 5], [1, 1, 12, 6]]);
});

test('a time window stops reading its input at endS', () => {
  let read = 0;
  const counting: RequestSource = {
    *[Symbol.iterator]() {
      for (let i = 0; i < 1000; i++) {
        read++;
        yield { id: i, arrivalS: i, inputTokens: 1, outputTokens: 1 };
      }
    },
  };
  assert.equal(all(timeWindow(counting, 10, 20)).length, 10);
  assert.equal(read, 21);
});

test('compression divides arrivals and deadlines by the factor', () => {
  assert.deepEqual(all(compress(src([0, 2, 6], 4), 2)).map((r) => [r.arrivalS, r.deadlineS]), [[0, 2], [1, 3], [3, 5]]);
});

test('limit keeps the first n requests', () => {
  assert.deepEqual(all(limit(src([0, 1, 2, 3]), 2)).map((r) => r.inputTokens), [10, 11]);
  assert.equal(all(limit(src([0, 1]), 0)).length, 0);
});

test('model relabelling: one name for every request, or a map that renames the labels it lists', () => {
  const reqs: RequestSource = [
    { id: 0, arrivalS: 0, inputTokens: 5, outputTokens: 5, model: 'ChatGPT' },
    { id: 1, arrivalS: 1, inputTokens: 5, outputTokens: 5, model: 'GPT-4' },
    { id: 2, arrivalS: 2, inputTokens: 5, outputTokens: 5 },
  ];
  assert.deepEqual(all(relabelModels(reqs, 'llama3.1-8b')).map((r) => r.model), ['llama3.1-8b', 'llama3.1-8b', 'llama3.1-8b']);
  assert.deepEqual(all(relabelModels(reqs, { ChatGPT: 'llama3.1-8b' })).map((r) => r.model), ['llama3.1-8b', 'GPT-4', undefined]);
  assert.deepEqual(all(applyTransforms(reqs, { model: { 'GPT-4': 'llama2-70b' }, limit: 2 }, new Rng(1))).map((r) => r.model), ['ChatGPT', 'llama2-70b']);
  assert.equal((reqs as TraceRequest[])[0]!.model, 'ChatGPT', 'input not mutated');
});

test('transforms never mutate their input', () => {
  const input = src([0, 1, 2, 3], 1) as TraceRequest[];
  const before = structuredClone(input);
  all(applyTransforms(input, { window: { startS: 1 }, compress: 2, rateScale: 2.5, limit: 5 }, new Rng(1)));
  assert.deepEqual(input, before);
});

test('rate scale 0.5 keeps about half of the Azure conv trace, the same ones for the same seed', () => {
  const trace = openTrace(`${AZURE_DIR}AzureLLMInferenceTrace_conv.csv`, 'azure');
  const a = all(rateScale(trace, 0.5, new Rng(7)));
  const b = all(rateScale(trace, 0.5, new Rng(7)));
  const c = all(rateScale(trace, 0.5, new Rng(8)));
  assert.ok(Math.abs(a.length / 19_366 - 0.5) < 0.02, `kept ${a.length}`);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assertContract(a);
});

test('rate scale 2.5 emits 2 or 3 copies per request, copies jittered before the next arrival', () => {
  const times = Array.from({ length: 4000 }, (_, i) => i * 0.5);
  const out = all(rateScale(src(times, 10), 2.5, new Rng(3), 0.2));
  assert.ok(Math.abs(out.length / 4000 - 2.5) < 0.05, `emitted ${out.length}`);
  assertContract(out);
  const perSource = new Map<number, TraceRequest[]>();
  for (const r of out) perSource.set(r.inputTokens, [...(perSource.get(r.inputTokens) ?? []), r]);
  for (const [input, copies] of perSource) {
    const t = (input - 10) * 0.5;
    assert.ok(copies.length === 2 || copies.length === 3);
    assert.equal(copies[0]!.arrivalS, t, 'the original keeps its time');
    for (const c of copies) {
      assert.ok(c.arrivalS >= t && c.arrivalS < t + 0.2, `copy at ${c.arrivalS} for ${t}`);
      assert.ok(Math.abs(c.deadlineS! - c.arrivalS - 10) < 1e-9, 'deadline moves with the copy');
    }
  }
});

test('a rate-scaled source is replayed identically on a second pass', () => {
  const s = rateScale(src([0, 1, 1, 2, 5]), 1.7, new Rng(11));
  assert.deepEqual(all(s), all(s));
});

test('bad transform parameters are UserErrors', () => {
  assert.throws(() => compress(src([0]), 0), UserError);
  // A tiny factor overflows the times: refused where it happens, not passed on as t = Infinity.
  assert.throws(() => all(compress(src([0, 2]), 1e-310)), (e: unknown) => e instanceof UserError && /compress: factor 1e-310 puts a request at t = 2 s out of range/.test(e.message));
  assert.throws(() => rateScale(src([0]), -1, new Rng(1)), UserError);
  assert.throws(() => timeWindow(src([0]), 5, 5), UserError);
  assert.throws(() => limit(src([0]), 1.5), UserError);
});

test('any transform chain keeps arrivals non-decreasing and ids consecutive (property)', () => {
  const gaps = fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 100, noNaN: true })), { maxLength: 60 });
  const step: fc.Arbitrary<TransformSpec> = fc.record(
    {
      window: fc.record({ startS: fc.double({ min: 0, max: 500, noNaN: true }), endS: fc.double({ min: 501, max: 3000, noNaN: true }) }),
      compress: fc.double({ min: 0.01, max: 100, noNaN: true }),
      rateScale: fc.double({ min: 0.05, max: 4.5, noNaN: true }),
      rateScaleJitterS: fc.double({ min: 0, max: 10, noNaN: true }),
      limit: fc.integer({ min: 0, max: 100 }),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(gaps, fc.array(step, { minLength: 1, maxLength: 3 }), fc.integer(), (g, chain, seed) => {
      let t = 0;
      const times = g.map((d) => (t += d));
      let s: RequestSource = src(times);
      chain.forEach((spec, i) => (s = applyTransforms(s, spec, new Rng(seed).fork(`step${i}`))));
      const a = all(s);
      assertContract(a);
      assert.deepEqual(all(s), a, 'same seed ⇒ same output');
    }),
    { numRuns: 300, seed: 42 },
  );
});
