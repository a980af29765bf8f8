import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateLength } from '../../../src/forecast/length/evaluate.ts';
import { keyQuantilesLength } from '../../../src/forecast/length/key-quantiles.ts';
import { absErrorQuantile, noisyOracleLength, PRESERVE_ERROR } from '../../../src/forecast/length/noisy-oracle.ts';
import { onlineRegressorLength } from '../../../src/forecast/length/online-regressor.ts';
import { oracleLength } from '../../../src/forecast/length/oracle.ts';
import { lengthPredictors } from '../../../src/forecast/length/registry.ts';
import type { LengthRequest } from '../../../src/forecast/length/types.ts';
import { Rng } from '../../../src/util/rng.ts';

/** Synthetic requests: two apps with different length regimes, in arrival order. */
function requests(n: number, seed = 1): LengthRequest[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, id) => {
    const chat = rng.next() < 0.5;
    const inputTokens = Math.round(rng.lognormal(chat ? 5 : 7, 0.5));
    const outputTokens = Math.max(1, Math.round(rng.lognormal(chat ? 5.5 : 3, 0.4)));
    return { id, arrivalS: id, inputTokens, outputTokens, app: chat ? 'chat' : 'code' };
  });
}

test('the oracle is exact', () => {
  const m = evaluateLength(oracleLength(), requests(200));
  assert.deepEqual([m.mae, m.acc25, m.acc100], [0, 100, 100]);
});

test("the noisy oracle reproduces PreServe's accuracy table (MAE ≈ 78, 56.8 / 68.8 / 78.0 % within 25 / 50 / 100)", () => {
  const m = evaluateLength(noisyOracleLength({ seed: 3 }), requests(40_000), 0);
  assert.ok(Math.abs(m.mae - 78.25) < 3, `MAE ${m.mae}`);
  assert.ok(Math.abs(m.acc25 - 56.77) < 1.5, `acc25 ${m.acc25}`);
  assert.ok(Math.abs(m.acc50 - 68.79) < 1.5, `acc50 ${m.acc50}`);
  assert.ok(Math.abs(m.acc100 - 77.95) < 1.5, `acc100 ${m.acc100}`);
  assert.ok(Math.abs(m.coverage80 - 80) < 2, `coverage ${m.coverage80}`);
});

test('the noisy oracle is a pure function of seed and request id, and its bias knob shifts predictions', () => {
  const r = requests(50);
  const a = noisyOracleLength({ seed: 5 });
  const b = noisyOracleLength({ seed: 5 });
  assert.deepEqual(r.map((x) => a.predict(x)), [...r].reverse().map((x) => b.predict(x)).reverse());
  const low = noisyOracleLength({ seed: 5, biasTokens: -1000 });
  assert.ok(r.every((x) => low.predict(x).point <= a.predict(x).point));
  assert.ok(Math.abs(absErrorQuantile(PRESERVE_ERROR, 0.8) - 119) < 2);
});

test('the noisy oracle\'s relative variant predicts D · (1 + ρ) + bias with ρ drawn from the given list (prediction.noisy)', () => {
  const r = requests(400);
  const half = lengthPredictors['noisy-oracle'](7, { relativeErrors: [0.5] });
  assert.ok(r.every((x) => half.predict(x).point === Math.min(4096, Math.max(1, Math.round(x.outputTokens * 1.5)))));
  const mixed = lengthPredictors['noisy-oracle'](7, { relativeErrors: [-0.5, 1], biasTokens: 3 });
  const ratios = new Set(r.filter((x) => x.outputTokens >= 40).map((x) => Math.round(((mixed.predict(x).point - 3) / x.outputTokens) * 10) / 10));
  assert.deepEqual([...ratios].sort(), [0.5, 2]);
  assert.deepEqual(r.map((x) => mixed.predict(x)), r.map((x) => lengthPredictors['noisy-oracle'](7, { relativeErrors: [-0.5, 1], biasTokens: 3 }).predict(x)));
  assert.throws(() => noisyOracleLength({ relativeErrors: [-1] }), /relativeErrors/);
});

test('predictors other than the oracles never read the true output length at predict time', () => {
  const reqs = requests(300);
  for (const make of [() => keyQuantilesLength(), () => onlineRegressorLength()]) {
    const p = make();
    for (const r of reqs.slice(0, 200)) p.observe(r);
    for (const r of reqs.slice(200)) {
      const blind = new Proxy(r, { get: (t, k) => (k === 'outputTokens' ? assert.fail(`${p.name} read outputTokens`) : t[k as keyof typeof t]) });
      const pred = p.predict(blind);
      assert.ok(Number.isInteger(pred.point) && pred.point >= 1 && pred.p10 <= pred.p50 && pred.p50 <= pred.p90);
    }
  }
});

test('learned predictors beat a constant guess on requests whose length depends on the app', () => {
  const reqs = requests(4000);
  const constant = { name: 'c', predict: () => ({ point: 100, p10: 100, p50: 100, p90: 100 }), observe: () => {} };
  const base = evaluateLength(constant, reqs).mae;
  for (const name of ['key-quantiles', 'online-regressor'] as const) {
    const m = evaluateLength(lengthPredictors[name](1), reqs);
    assert.ok(m.mae < 0.7 * base, `${name} MAE ${m.mae.toFixed(1)} vs constant ${base.toFixed(1)}`);
    assert.ok(m.coverage80 > 65 && m.coverage80 < 95, `${name} coverage ${m.coverage80}`);
  }
});

test('the regressor uses prompt-text features when text exists', () => {
  const rng = new Rng(2);
  const reqs: LengthRequest[] = Array.from({ length: 1500 }, (_, id) => {
    const brief = rng.next() < 0.5;
    return {
      id,
      arrivalS: id,
      inputTokens: 20,
      outputTokens: brief ? 5 + rng.int(5) : 400 + rng.int(50),
      promptText: brief ? 'answer in one word: is the sky blue' : 'write a detailed essay about the history of rome',
    };
  });
  const m = evaluateLength(onlineRegressorLength(), reqs);
  assert.ok(m.mae < 40, `MAE ${m.mae}`);
});
