import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timelineCsv } from '../../src/metrics/write.ts';
import { summarize } from '../../src/metrics/summary.ts';
import { createScaler } from '../../src/policy/scaling/registry.ts';
import type { PoolStatus } from '../../src/policy/scaling/types.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { UserError } from '../../src/util/errors.ts';
import { Rng } from '../../src/util/rng.ts';
import { outcomes, run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

// Requests over 0–600 s, none until 3000 s, then more (a long idle gap).
const reqs: Req[] = [];
for (let t = 0; t < 600; t += 5) reqs.push({ t, in: 200, out: 20 });
for (let t = 3000; t < 3300; t += 5) reqs.push({ t, in: 200, out: 20 });
const trace = writeTrace(reqs);

const scenario = (reactive: Record<string, unknown>) =>
  scenarioFor(trace, {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, minCount: 0, maxCount: 2 }], provisioning: { vmAcquireS: 20, modelLoadS: 10 } },
    scaling: { policy: 'reactive', intervalS: 60, downCooldownS: 60, options: reactive },
    output: { timelineIntervalS: 60 },
  });

/** The `ready` column of timeline.csv, by row time. */
function readyByTime(csv: string): Map<number, number> {
  const [head, ...rows] = csv.trim().split('\n');
  const cols = head!.split(',');
  const t = cols.indexOf('t_s');
  const ready = cols.indexOf('ready');
  return new Map(rows.map((r) => r.split(',')).map((c) => [Number(c[t]), Number(c[ready])]));
}

test('reactive idleToZeroS: the pool goes to zero through a long idle gap (ready ≥ 1 without it), the next arrival scales it up from zero, and nothing is dropped', () => {
  const res = run(scenario({ idleToZeroS: 300 }), 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, reqs.length, 'every request completes');
  assert.equal(s.requests.dropped, 0, 'none dropped');
  const ready = readyByTime(timelineCsv(res.timeline.rows));
  const gap = [...ready].filter(([t]) => t >= 1200 && t < 3000);
  assert.ok(gap.length > 10, `timeline rows in the gap: ${gap.length}`);
  for (const [t, n] of gap) assert.equal(n, 0, `ready at ${t} s inside the idle gap`);
  // It went to zero no sooner than idleToZeroS after the last request finished (~600 s), and came back after 3000 s.
  const zeroFrom = Math.min(...[...ready].filter(([t, n]) => t > 0 && n === 0).map(([t]) => t));
  assert.ok(zeroFrom >= 900 && zeroFrom <= 1100, `first ready = 0 row at ${zeroFrom} s`);
  assert.ok([...ready].some(([t, n]) => t > 3000 && n >= 1), 'an instance is ready again after the gap');
  // Two instances in all: the first (stopped in the gap) and the one started from zero by the tick that saw the
  // first arrival after the gap (the arrival at 3000 s comes before the tick at 3000 s).
  assert.equal(res.fleet.instances.length, 2);
  assert.equal(res.fleet.instances[1]!.createdS, 3000);
  // The requests that arrived at zero waited for it (deferred at the gateway), none longer than tick + start-up.
  const late = [...Array(res.log.n).keys()].filter((i) => res.log.queue[i]! > 1);
  assert.ok(late.length > 0 && late.every((i) => res.log.queue[i]! <= 60 + 30 + 1), 'deferred until the new instance was ready');
  // Fast and step modes agree.
  assert.deepEqual(outcomes(res), outcomes(run(scenario({ idleToZeroS: 300 }), 'step')));

  // Without the option (unchanged): one ready instance all through the gap, never a second one.
  const base = run(scenario({}), 'fast');
  for (const [t, n] of readyByTime(timelineCsv(base.timeline.rows))) if (t > 0 && t < 3300) assert.ok(n >= 1, `without: ready ${n} at ${t} s`);
  assert.equal(summarize(base, 0).requests.completed, reqs.length);
  assert.equal(base.fleet.instances.length, 1);
  assert.deepEqual(base.notes, []);
});

test('idleToZeroS counts requests waiting on instances or at the gateway as busy, and a model first seen idle from the start of that interval', () => {
  const sc = createScaler('reactive', { idleToZeroS: 120 }, { rng: new Rng(1) });
  const pool = (over: Partial<PoolStatus> = {}): PoolStatus => ({
    name: 'p', model: 'm', hardware: 'h', region: '', tp: 1, pp: 1, provisioning: 0, ready: 1, draining: 0,
    minCount: 0, maxCount: 2, kvUtilization: 0, outstandingRequests: 0, waiting: 0, ...over,
  });
  const decide = (now: number, p: PoolStatus, requests = 0) =>
    sc.decide({ now, intervalS: 60, pools: [p], arrivals: requests ? [{ model: 'm', region: '', tier: 't', requests, inputTokens: 1, predictedOutputTokens: 1 }] : [], view: { now, instances: [], routable: () => [] } });
  assert.deepEqual(decide(60, pool()), [{ kind: 'hold', reason: 'within-thresholds' }], 'idle since 0: 60 s < 120 s');
  assert.deepEqual(decide(120, pool()), [{ kind: 'remove', pool: 'p', count: 1, reason: 'idle-to-zero' }], 'idle since 0: 120 s');
  assert.equal(decide(180, pool({ outstandingRequests: 1 }))[0]!.kind, 'hold', 'a running request: busy');
  assert.equal(decide(300, pool())[0]!.kind, 'remove', 'idle since 180 s');
  assert.equal(decide(360, pool({ queued: 2 }))[0]!.kind, 'hold', 'held at the gateway: busy');
  assert.equal(decide(420, pool(), 3)[0]!.kind, 'hold', 'arrivals: busy');
  assert.equal(decide(480, pool())[0]!.kind, 'hold');
  assert.equal(decide(540, pool())[0]!.kind, 'remove');
  // At zero, requests still waiting at the gateway keep asking for a scale-from-zero (not only the tick they arrived).
  assert.deepEqual(decide(600, pool({ ready: 0, queued: 1 })), [{ kind: 'add', pool: 'p', count: 1, reason: 'scale-from-zero' }]);
  assert.deepEqual(decide(660, pool({ ready: 0, waiting: 1 })), [{ kind: 'add', pool: 'p', count: 1, reason: 'scale-from-zero' }], 'live: the gateway queue is in waiting');
  // A pool whose minCount keeps it up is named in a note.
  decide(720, pool({ minCount: 1 }));
  assert.match(sc.notes!().join('\n'), /idleToZeroS is set, but pool p has minCount 1/);
});

test('idleToZeroS is validated with the field named', () => {
  for (const bad of [0, -5, 'x']) {
    assert.throws(() => createScaler('reactive', { idleToZeroS: bad }, { rng: new Rng(1) }), /idleToZeroS/);
  }
  for (const set of ['scaling.options.idleToZeroS=0', 'scaling.options.idleToZeroS=-1', 'scaling.options.idleToZeroS=1e300']) {
    assert.throws(
      () => loadScenario({ file: 'scenarios/default.yaml', sets: ['scaling.policy=reactive', set] }),
      (e: Error) => e instanceof UserError && /scaling\.options\.idleToZeroS: expected/.test(e.message) && !e.message.includes('\n'),
      set,
    );
  }
  const ok = loadScenario({ file: 'scenarios/default.yaml', sets: ['scaling.policy=reactive', 'scaling.options.idleToZeroS=600'] }).scenario;
  assert.equal(ok.scaling.options.idleToZeroS, 600);
});
