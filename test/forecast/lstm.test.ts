import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstm } from '../../src/forecast/lstm.ts';
import { syntheticSeries } from '../../src/forecast/synthetic.ts';

// A deliberately tiny configuration: the defaults train for seconds on the pure-JS backend (see bench).
const tiny = { window: 6, units: 4, epochs: 3, maxSamples: 64, batchSize: 64 };
const y = syntheticSeries({ points: 3 * 144, seed: 9 }).values;

test('the LSTM is deterministic for a seed and gives finite, ordered intervals', () => {
  const run = (seed: number) => {
    const f = lstm(tiny);
    f.fit(y, { period: 144, seed });
    return f.forecast(12);
  };
  const a = run(1);
  assert.deepEqual(a, run(1));
  assert.notDeepEqual(a.point, run(2).point);
  for (let i = 0; i < 12; i++) {
    assert.ok(Number.isFinite(a.point[i]!) && a.p10[i]! <= a.point[i]! && a.point[i]! <= a.p90[i]!);
  }
});

test('the LSTM rejects a series shorter than its window plus one season', () => {
  assert.throws(() => lstm(tiny).fit(y.slice(0, 100), { period: 144 }), /series too short with period 144/);
});
