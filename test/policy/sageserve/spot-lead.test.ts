import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leadTimeSigma, sampleLeadTime, Z99 } from '../../../src/policy/sageserve/lead-time.ts';
import { SpotPool, type SpotVm } from '../../../src/policy/sageserve/spot.ts';
import { spotSchema } from '../../../src/scenario/schema.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { PROJECT_ROOT } from '../../../src/util/paths.ts';
import { Rng } from '../../../src/util/rng.ts';
import { outcomes, run, scenarioFor, writeTrace } from '../../helpers/sim.ts';

const PAPER = { median: 60, max: 300 };
const draws = (spec: Parameters<typeof sampleLeadTime>[0], n: number, seed = 7) => {
  const rng = new Rng(seed).fork('spot-lead');
  return Array.from({ length: n }, () => sampleLeadTime(spec, rng));
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length >> 1) - 1]! + s[s.length >> 1]!) / 2;
};

test("the paper's lead time (median 60 s, max 300 s) draws a lognormal with σ = ln 5 / 2.326 whose median is ≈ 60 s and whose draws never pass 300 s", () => {
  assert.ok(Math.abs(leadTimeSigma(PAPER) - Math.log(5) / 2.3263) < 1e-4);
  assert.ok(Math.abs(leadTimeSigma(PAPER) - 0.6918) < 1e-4);
  assert.equal(leadTimeSigma({ ...PAPER, sigma: 0.3 }), 0.3);
  const xs = draws(PAPER, 20000);
  // Truncated at the untruncated p99: median 60 · e^(0.6918 · Φ⁻¹(0.495)) = 59.48 s, mean 73.06 s,
  // P(X > 120 s) = (P(Z > ln 2 / 0.6918 = 1.002) − 0.01) / 0.99 = 0.1497.
  const m = median(xs);
  assert.ok(Math.abs(m - 59.48) < 1.5, `median ${m}`);
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.ok(Math.abs(mean - 73.06) < 1.5, `mean ${mean}`);
  const over120 = xs.filter((x) => x > 120).length / xs.length;
  assert.ok(Math.abs(over120 - 0.1497) < 0.01, `P(> 120 s) ${over120}`);
  const max = Math.max(...xs);
  assert.ok(max <= 300 && max > 280, `max ${max}`); // ≈ 190 of 20,000 draws fall in (250, 300]
  assert.ok(Math.min(...xs) > 0);
});

test('truncation: draws stay at or below max even with a wide σ, and median = max gives exactly the median', () => {
  const wide = draws({ median: 60, max: 90, sigma: 3 }, 5000);
  assert.ok(wide.every((x) => x > 0 && x <= 90));
  // Half the untruncated mass lies below 60 and P(60 < X ≤ 90) is small with σ = 3: the truncated median is < 60.
  assert.ok(median(wide) < 60);
  assert.deepEqual(draws({ median: 45, max: 45 }, 5), [45, 45, 45, 45, 45].map((v) => Math.exp(Math.log(v))));
  assert.equal(Z99.toFixed(4), '2.3263');
});

test('draws are deterministic for a seed and differ between seeds; a fixed number draws nothing', () => {
  assert.deepEqual(draws(PAPER, 50, 3), draws(PAPER, 50, 3));
  assert.notDeepEqual(draws(PAPER, 50, 3), draws(PAPER, 50, 4));
  const rng = new Rng(3);
  assert.equal(sampleLeadTime(60, rng), 60);
  assert.equal(rng.next(), new Rng(3).next(), 'the stream did not move');
});

const vm = (model: string): SpotVm => ({ region: 'east', hardware: 'h100-80gb', tp: 8, pp: 1, model });
const fresh = { acquireS: 300, loadS: 600 };

test('the spot pool draws same-model and other-model lead times from its rng when they are distributions, in reclaim order', () => {
  const opts = spotSchema.parse({ sameModelS: PAPER, otherModelS: { median: 600, max: 1200 } });
  const spot = new SpotPool(opts, new Rng(11).fork('spot-lead'));
  spot.donate(vm('a'), 0);
  spot.donate(vm('a'), 0);
  spot.donate(vm('b'), 0);
  const expect = new Rng(11).fork('spot-lead');
  const a1 = sampleLeadTime(PAPER, expect);
  const a2 = sampleLeadTime(PAPER, expect);
  const b = sampleLeadTime({ median: 600, max: 1200 }, expect);
  assert.deepEqual(spot.reclaim(vm('a'), 10, fresh), { source: 'same-model', leadS: a1 });
  assert.deepEqual(spot.reclaim(vm('a'), 10, fresh), { source: 'same-model', leadS: a2 });
  assert.deepEqual(spot.reclaim(vm('a'), 10, fresh), { source: 'other-model', leadS: b });
  assert.deepEqual(spot.reclaim(vm('a'), 10, fresh), { source: 'new-vm', leadS: 900 });
  assert.notEqual(a1, a2);
  assert.ok(b > 0 && b <= 1200);
});

// One east pool of llama3.1-8b with 3 same-model instances in spot at t = 0; three scale-outs at 100, 200, 300 s.
function leadScenario(sameModelS: unknown, seed = 1) {
  return scenarioFor(writeTrace([{ t: 1000, in: 10, out: 1 }]), {
    seed,
    fleet: {
      pools: [{ name: 'a', region: 'east', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }],
      provisioning: { vmAcquireS: 120, modelLoadS: 60 },
      spot: { sameModelS, initial: [{ region: 'east', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 3 }] },
    },
    scaling: {
      policy: 'scheduled',
      actions: [100, 200, 300].map((atS) => ({ atS, action: 'add', pool: 'a' })),
    },
  });
}

test("in a run, each same-model reclaim takes a draw from the seed's 'spot-lead' fork; fast ≡ step; the fixed form is unchanged", () => {
  const fast = run(leadScenario(PAPER), 'fast');
  const rng = new Rng(1).fork('spot-lead');
  const want = [0, 100 + sampleLeadTime(PAPER, rng), 200 + sampleLeadTime(PAPER, rng), 300 + sampleLeadTime(PAPER, rng)];
  assert.deepEqual(fast.fleet.instances.map((i) => i.readyS), want);
  assert.deepEqual(fast.spot!.reclaims, { 'same-model': 3, 'other-model': 0, 'new-vm': 0 });
  const drawn = want.slice(1).reduce((s, r, k) => s + r - 100 * (k + 1), 0);
  assert.ok(Math.abs(fast.spot!.provisioningInstanceHours['same-model'] - drawn / 3600) < 1e-12, 'the drawn lead times, each run to its end');
  const step = run(leadScenario(PAPER), 'step');
  assert.deepEqual(step.fleet.instances.map((i) => i.readyS), want);
  assert.deepEqual(outcomes(step), outcomes(fast));
  const other = run(leadScenario(PAPER, 2), 'fast');
  assert.notDeepEqual(other.fleet.instances.map((i) => i.readyS), want, 'another seed draws other lead times');
  const fixed = run(leadScenario(60), 'fast');
  assert.deepEqual(fixed.fleet.instances.map((i) => i.readyS), [0, 160, 260, 360]);
});

const peakDay = (sets: string[] = []) =>
  loadScenario({ file: `${PROJECT_ROOT}/scenarios/sageserve-peak-day.yaml`, sets }).scenario.fleet.spot!;

test("the peak-day scenario uses the paper's distribution by default and `--set fleet.spot.sameModelS=60` restores the fixed 60 s", () => {
  assert.deepEqual(peakDay().sameModelS, { median: 60, max: 300 });
  assert.equal(peakDay(['fleet.spot.sameModelS=60']).sameModelS, 60);
  assert.deepEqual(peakDay(['fleet.spot.sameModelS={median: 60, max: 300, sigma: 0.5}']).sameModelS, { median: 60, max: 300, sigma: 0.5 });
});

test('a bad lead-time distribution is a ConfigError naming the field and what was expected', () => {
  const fails = (value: string, path: RegExp, expected: RegExp) =>
    assert.throws(
      () => peakDay([`fleet.spot.sameModelS=${value}`]),
      (e: Error) => e.name === 'ConfigError' && path.test(e.message) && expected.test(e.message),
      value,
    );
  fails('{median: 120, max: 60}', /fleet\.spot\.sameModelS\.max/, /max ≥ median/);
  fails('{median: -1, max: 60}', /fleet\.spot\.sameModelS\.median/, /> 0/);
  fails('{median: 60, max: 300, sigma: 0}', /fleet\.spot\.sameModelS\.sigma/, /> 0/);
  fails('{median: 60, max: 300, mean: 70}', /fleet\.spot\.sameModelS\.mean/, /no unknown key/);
  fails('{median: 60}', /fleet\.spot\.sameModelS/, /\{ median, max, sigma\? \}/);
  fails('soon', /fleet\.spot\.sameModelS/, /a number of seconds/);
  fails('-5', /fleet\.spot\.sameModelS/, /≥ 0/);
  assert.throws(() => spotSchema.parse({ otherModelS: { median: 700, max: 600 } }));
});
