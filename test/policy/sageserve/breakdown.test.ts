import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hourLoad, hourlyInstanceHours, planInstances, replayForecastPeak } from '../../../src/policy/sageserve/breakdown.ts';

test('instance-hours per hour and key split each life at the hour marks and stop at the run end', () => {
  const lives = [
    { createdS: 1800, stoppedS: 9000, region: 'east' }, //  0.5 h, 1 h, 0.5 h
    { createdS: 0, stoppedS: -1, region: 'east' }, //       runs to the end (5400): 1 h, 0.5 h
    { createdS: 3600, stoppedS: 3600, region: 'west' }, //  never lived
  ];
  const m = hourlyInstanceHours(lives, 5400, 3, (i) => i.region);
  assert.deepEqual(m.get('east'), [1.5, 1.5, 0.5]);
  assert.deepEqual(m.get('west'), [0, 0, 0]);
});

test('an hour of a per-minute series: mean and busiest minute; plans are the ILP floor ⌈demand / θ⌉ ≥ min', () => {
  const series = Array.from({ length: 120 }, (_, m) => (m < 60 ? 100 : m === 90 ? 600 : 0));
  assert.deepEqual(hourLoad(series, 0), { meanTps: 100, peakTps: 100 });
  assert.deepEqual(hourLoad(series, 1), { meanTps: 10, peakTps: 600 });
  assert.deepEqual(hourLoad(series, 5), { meanTps: 0, peakTps: 0 });
  assert.equal(planInstances(12001, 6000, 2), 3);
  assert.equal(planInstances(100, 6000, 2), 2);
});

test('the replayed forecast needs an hour of history and then follows a steady series', () => {
  const series = Array.from({ length: 180 }, () => 5000);
  assert.ok(Number.isNaN(replayForecastPeak(series, 0)));
  const fc = replayForecastPeak(series, 2);
  assert.ok(Math.abs(fc - 5000) < 50, `forecast ${fc}`);
});
