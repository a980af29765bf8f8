import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

test('peak instances is exact, not sampled: a two-second burst of instances between timeline rows still counts', () => {
  const trace = writeTrace(Array.from({ length: 30 }, (_, i) => ({ t: i * 10, in: 100, out: 10 })));
  const sc = scenarioFor(trace, {
    scaling: { policy: 'scheduled', actions: [{ atS: 10, action: 'add', pool: 'p', count: 2 }, { atS: 12, action: 'drain', pool: 'p', count: 2 }] },
    output: { timelineIntervalS: 100 },
  });
  const res = run(sc, 'fast');
  const sampled = Math.max(...res.timeline.rows.map((r) => r.provisioning + r.ready + r.draining));
  const s = summarize(res, 0);
  assert.equal(s.fleet.instances, 3);
  assert.equal(s.fleet.peakInstances, 3);
  assert.ok(sampled < 3, `the 100-s timeline saw at most ${sampled}`);
});

test('the 15-minute max-bin instance-hours are exact too: a spike between timeline rows counts in its bin, one across a bin edge in both', () => {
  // 1 instance throughout; 2 more from 100 to 150 s (bin 0: 3); 1 more from 850 to 950 s (bins 0 and 1: 2); the run
  // ends just after 1000 s, in bin 1. The 600-s timeline has rows at 0, 600 and the end only: it saw 1 each time.
  const sc = scenarioFor(writeTrace([{ t: 0, in: 100, out: 10 }, { t: 1000, in: 100, out: 10 }]), {
    scaling: {
      policy: 'scheduled',
      actions: [
        { atS: 100, action: 'add', pool: 'p', count: 2 },
        { atS: 150, action: 'drain', pool: 'p', count: 2 },
        { atS: 850, action: 'add', pool: 'p' },
        { atS: 950, action: 'drain', pool: 'p' },
      ],
    },
    output: { timelineIntervalS: 600 },
  });
  const res = run(sc, 'fast');
  assert.deepEqual(res.timeline.rows.map((r) => r.provisioning + r.ready + r.draining), [1, 1, 1]);
  assert.equal(summarize(res, 0).fleet.instanceHours15mMax, (3 + 2) * 0.25);
});

test('the 15-minute max bins cover the workload up to its last arrival, not a bin for the drain after it', () => {
  // 3 instances, arrivals up to 3,590 s of a 1-hour trace: 4 bins × 3 × ¼ h = 3.0, though the run ends after 3,600 s.
  const trace = writeTrace(Array.from({ length: 360 }, (_, i) => ({ t: i * 10, in: 100, out: 2000 })));
  const res = run(scenarioFor(trace, { fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 3 }] } }), 'fast');
  assert.ok(res.endS > 3600, `the run ends at ${res.endS} s`);
  assert.equal(summarize(res, 0).fleet.instanceHours15mMax, 3.0);
});

test('a trace whose first request comes long after 0 s says the idle fleet is billed from 0 s, and how to start later', () => {
  const late = summarize(run(scenarioFor(writeTrace([{ t: 28_800, in: 100, out: 10 }, { t: 28_801, in: 100, out: 10 }])), 'fast'), 0);
  assert.ok(
    late.notes.some((n) => /first request arrives at 28800 s; the fleet runs, and is billed, from 0 s\. --set workload\.transforms\.window\.startS=28800/.test(n)),
    JSON.stringify(late.notes),
  );
  const early = summarize(run(scenarioFor(writeTrace([{ t: 5, in: 100, out: 10 }])), 'fast'), 0);
  assert.deepEqual(early.notes, []);
});

test('the 15-minute max bins of a trace with a gap of centuries are counted in one step per change', () => {
  // 1e10 s between two requests (the latest arrival a trace may have since session 17; before, 1e12 here took
  // minutes with a loop per bin): 11,111,112 bins, each with the one instance.
  const res = run(scenarioFor(writeTrace([{ t: 0, in: 100, out: 10 }, { t: 1e10, in: 100, out: 10 }])), 'fast');
  assert.equal(summarize(res, 0).fleet.instanceHours15mMax, (Math.floor(1e10 / 900) + 1) * 0.25);
});

test('an instance that stops exactly on a 15-minute bin edge is not counted in the next bin; a stop and a start at one instant never overlap', () => {
  const trace = writeTrace([{ t: 0, in: 100, out: 10 }, { t: 1000, in: 100, out: 10 }]);
  // 1 instance throughout, a second from 100 s to exactly 900 s (idle: the drain stops it at once).
  const edge = scenarioFor(trace, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    scaling: { policy: 'scheduled', actions: [{ atS: 100, action: 'add', pool: 'p' }, { atS: 900, action: 'drain', pool: 'p' }] },
  });
  const res = run(edge, 'fast');
  assert.equal(res.fleet.instances[1]!.stoppedS, 900);
  assert.equal(summarize(res, 0).fleet.instanceHours15mMax, (2 + 1) * 0.25);
  // Two instances; at 500 s one stops and another starts: never three at once.
  const swap = scenarioFor(trace, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 2 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    scaling: { policy: 'scheduled', actions: [{ atS: 500, action: 'drain', pool: 'p' }, { atS: 500, action: 'add', pool: 'p' }] },
  });
  const s = summarize(run(swap, 'fast'), 0);
  assert.equal(s.fleet.instances, 3);
  assert.equal(s.fleet.peakInstances, 2);
});
