import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadScenario } from '../../src/scenario/load.ts';
import { UserError } from '../../src/util/errors.ts';

// Edge values found by fuzzing `--set PATH=VALUE`: each must be one UserError naming the field, not a hang,
// a crash or a non-finite number in summary.json.
const rejects = (file: string, set: string, field: RegExp) =>
  assert.throws(() => loadScenario({ file, sets: ['endS=30', set] }), (e: Error) => e instanceof UserError && field.test(e.message) && !e.message.includes('\n'), set);

test('slo utilities are bounded so that their sum over a run stays finite', () => {
  rejects('scenarios/default.yaml', 'slo.utility=1e308', /slo\.utility: expected ≤ 1000000000000/);
  rejects('scenarios/default.yaml', 'slo.tiers.iw.utility=1e308', /slo\.tiers\.iw\.utility: expected ≤/);
  assert.equal(loadScenario({ file: 'scenarios/default.yaml', sets: ['slo.utility=3'] }).scenario.slo.utility, 3);
});

test('synthetic peak rates and the rateScale transform are bounded (a huge value hung or exhausted memory)', () => {
  const curve = 'workload.synthetic.arrivals={kind: curve, baseRatePerS: 5}';
  const withCurve = (set: string) => loadScenario({ file: 'scenarios/preserve-routing.yaml', sets: ['endS=30', curve, set] });
  assert.throws(() => withCurve('workload.synthetic.arrivals.baseRatePerS=1e308'), /arrivals\.baseRatePerS: expected ≤ 1000000/);
  assert.throws(() => withCurve('workload.synthetic.arrivals.baseRatePerS=900000'), /arrivals\.baseRatePerS: expected baseRatePerS·\(1 \+ diurnalAmplitude\) ≤ 1000000/);
  assert.throws(() => withCurve('workload.synthetic.arrivals.weekendFactor=1e308'), /arrivals\.weekendFactor: expected .*weekendFactor ≤ 1000000/);
  assert.equal(withCurve('workload.synthetic.arrivals.weekendFactor=2').scenario.workload.synthetic?.arrivals.kind, 'curve');
  rejects('scenarios/preserve-scaling.yaml', 'workload.synthetic.arrivals.points.0.1=1e308', /arrivals\.points\[0\]\[1\]: expected ≤ 1000000/);
  rejects('scenarios/default.yaml', 'workload.transforms.rateScale=1e308', /workload\.transforms\.rateScale: expected ≤ 1000000/);
});

test("PreServe's scaler window is at least 1 ms (1e-12 never stepped past the clock)", () => {
  rejects('scenarios/preserve-scaling.yaml', 'scaling.options.windowS=1e-12', /scaling\.options\.windowS: expected ≥ 0\.001/);
});

test('the timeline interval is at least 1 ms (1e-12 ran 20 s only to reach the timeline row limit)', () => {
  rejects('scenarios/splitwise-baseline.yaml', 'output.timelineIntervalS=1e-12', /output\.timelineIntervalS: expected ≥ 0\.001/);
});

test('scenario durations have an upper bound (routing.dispatchDelayS 1e300 gave TPOT 0 and 6.8e297 USD; 1e9 a timeline error blaming output.timelineIntervalS)', () => {
  const day = /expected ≤ 86400 s \(one day; far past any gateway, network or migration delay\), got 1e\+300$/;
  const week = /expected ≤ 604800 s \(one week; VM acquisition and model loads take minutes to hours\), got 1e\+300$/;
  rejects('scenarios/default.yaml', 'routing.dispatchDelayS=1e300', new RegExp(`routing\\.dispatchDelayS: ${day.source}`));
  rejects('scenarios/default.yaml', 'routing.dispatchDelayS=86401', /routing\.dispatchDelayS: expected ≤ 86400 s/);
  rejects('scenarios/default.yaml', 'migration.stallS=1e300', new RegExp(`migration\\.stallS: ${day.source}`));
  rejects('scenarios/default.yaml', 'network.crossRegionS=1e300', new RegExp(`network\\.crossRegionS: ${day.source}`));
  rejects('scenarios/default.yaml', 'network.latencyS={a: {b: 1e300}}', /network\.latencyS\.a\.b: expected ≤ 86400 s/);
  rejects('scenarios/default.yaml', 'fleet.provisioning.vmAcquireS=1e300', new RegExp(`fleet\\.provisioning\\.vmAcquireS: ${week.source}`));
  rejects('scenarios/default.yaml', 'fleet.provisioning.modelLoadS=1e9', /fleet\.provisioning\.modelLoadS: expected ≤ 604800 s/);
  rejects('scenarios/sageserve-peak-day.yaml', 'fleet.spot.sameModelS=1e300', new RegExp(`fleet\\.spot\\.sameModelS: ${week.source}`));
  rejects('scenarios/sageserve-peak-day.yaml', 'fleet.spot.otherModelS={median: 60, max: 1e300}', /fleet\.spot\.otherModelS\.max: expected ≤ 604800 s/);
  rejects('scenarios/sageserve-peak-day.yaml', 'fleet.spot.remoteWeightsS=1e300', /fleet\.spot\.remoteWeightsS: expected ≤ 604800 s/);
  rejects('scenarios/default.yaml', 'scaling.downCooldownS=1e300', /scaling\.downCooldownS: expected ≤ 10000000000 s/);
  rejects('scenarios/default.yaml', 'scaling.actions=[{atS: 1e300, action: add, pool: p}]', /scaling\.actions\[0\]\.atS: expected ≤ 10000000000 s/);
  // Every other time in a scenario and in the policies' options has the same 1e10-s bound (session 19: endS,
  // maxDeferS, the SLOs, the scaler interval and the SageServe/PreServe/tier-queue timers were unbounded).
  const long = /expected ≤ 10000000000 s \(about 317 years/;
  assert.throws(() => loadScenario({ file: 'scenarios/default.yaml', sets: ['endS=1e300'] }), (e: Error) => e instanceof UserError && /endS: expected ≤ 10000000000 s/.test(e.message));
  for (const set of ['maxDeferS=1e300', 'slo.ttftS=1e11', 'scaling.intervalS=1e300']) rejects('scenarios/default.yaml', set, new RegExp(`${set.split('=')[0]!.replace('.', '\\.')}: ${long.source}`));
  for (const set of ['routing.options.niwPromoteAfterS=1e300', 'scaling.options.startupS=1e300', 'scaling.options.chironDeadlineS=1e11', 'scheduling.options.promoteAfterS=1e300']) {
    rejects('scenarios/sageserve-peak-day.yaml', set, new RegExp(`${set.split('=')[0]!.replaceAll('.', '\\.')}: ${long.source}`));
  }
  rejects('scenarios/preserve-scaling.yaml', 'scaling.options.windowS=1e300', /scaling\.options\.windowS: expected ≤ 10000000000 s/);
  // The values real scenarios use still load (PreServe's 45.6 ms, SageServe's lead times).
  const ok = loadScenario({ file: 'scenarios/sageserve-peak-day.yaml', sets: ['routing.dispatchDelayS=0.0456', 'fleet.provisioning.vmAcquireS=86400', 'fleet.spot.otherModelS=604800'] }).scenario;
  assert.equal(ok.routing.dispatchDelayS, 0.0456);
  assert.equal(ok.fleet.provisioning.vmAcquireS, 86_400);
});

test('a duration that must be > 0 says so for a negative value too (-1 read "expected ≥ 0", then 0 "expected > 0")', () => {
  for (const v of ['-1', '0']) {
    rejects('scenarios/default.yaml', `slo.ttftS=${v}`, new RegExp(`slo\\.ttftS: expected > 0, got ${v}$`));
    rejects('scenarios/sageserve-peak-day.yaml', `scheduling.options.tauNS=${v}`, new RegExp(`tauNS: expected > 0, got ${v}$`));
  }
  rejects('scenarios/default.yaml', 'output.timelineIntervalS=-1', /output\.timelineIntervalS: expected ≥ 0\.001, got -1$/);
});
