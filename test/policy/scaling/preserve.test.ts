import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ruleBScaleOut, tier1Target } from '../../../src/policy/scaling/preserve.ts';
import { createScaler } from '../../../src/policy/scaling/registry.ts';
import type { PoolStatus, ScaleAction, ScalingSignals } from '../../../src/policy/scaling/types.ts';
import type { InstanceView } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';
import { fleetView, instance, prog } from '../preserve/helpers.ts';

const ctx = { rng: new Rng(1) };
const MU = { muPrefill: 10, muDecode: 10, muTotal: 15 };

function pool(ready: number, provisioning = 0): PoolStatus {
  return { name: 'p', model: 'm', hardware: 'a6000', region: '', tp: 1, pp: 1, provisioning, ready, draining: 0, minCount: 1, maxCount: 8, kvUtilization: 0, outstandingRequests: 0, waiting: 0 };
}
function signals(now: number, insts: InstanceView[], arrivals: { input: number; output: number; actual?: number } | null, provisioning = 0): ScalingSignals {
  return {
    now, intervalS: 10, pools: [pool(insts.length, provisioning)],
    arrivals: arrivals ? [{ model: 'm', region: '', tier: '', requests: 1, inputTokens: arrivals.input, predictedOutputTokens: arrivals.output, outputTokens: arrivals.actual }] : [],
    view: fleetView(insts, now),
  };
}
const net = (acts: ScaleAction[]) => acts.reduce((s, a) => s + (a.kind === 'add' ? a.count : a.kind === 'remove' ? -a.count : 0), 0);
/** An instance at 50 % KV for the whole window: neither overloaded nor under 30 %. */
const busy = (id: number) => instance(id, [prog({ inputTokens: 500, predicted: 500, generated: 1 })], { kvCapacityTokens: 1000 });

test('the Tier-1 target is ceil(max(P̂/μ_p, D̂/μ_d, (P̂ + D̂)/μ_pd)) with μ scaled to the window', () => {
  // P̂ = 1,500, D̂ = 1,000 over 100 s at μ = 10/10/15 tokens/s → max(1.5, 1.0, 1.667) → 2
  assert.equal(tier1Target(1500, 1000, 100, MU), 2);
  // exactly 2 stays 2; decode-bound: D̂ = 2,100 → 2.1 → 3
  assert.equal(tier1Target(2000, 0, 100, MU), 2);
  assert.equal(tier1Target(100, 2100, 100, MU), 3);
  assert.equal(tier1Target(0, 0, 100, MU), 0);
});

test('at a window boundary the scaler moves to the forecast target once the forecaster has enough history', () => {
  // seasonal-naive without a period needs 2 windows; it forecasts the last window's sums.
  const s = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, forecaster: 'seasonal-naive' }, ctx);
  const insts = [busy(0)];
  let last: ScaleAction[] = [];
  // 10 ticks per window, 150 prompt + 100 output tokens a tick → P = 1,500, D = 1,000 per window → target 2.
  for (let t = 10; t <= 190; t += 10) {
    last = s.decide(signals(t, insts, { input: 150, output: 100 }));
    assert.equal(net(last), 0, `no change before the second window closes (t = ${t})`);
  }
  last = s.decide(signals(200, insts, { input: 150, output: 100 }));
  assert.deepEqual(last, [{ kind: 'add', pool: 'p', count: 1, reason: 'tier1-target' }]);
  // The target holds inside the window: with 2 instances there is nothing more to do.
  assert.equal(net(s.decide(signals(210, [busy(0), busy(1)], { input: 150, output: 100 }))), 0);
});

test('Tier 1 forecasts from the true output tokens of the arrivals (Alg. 2), the predictions only with tier1Output: predicted or when no true count is known', () => {
  // Per window: P = 1,500; predicted D = 1,000 but true D = 2,100 → target 3 on the true tokens, 2 on the predicted.
  const added = (opts: Record<string, unknown>, actual: number | undefined) => {
    const s = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, forecaster: 'seasonal-naive', ...opts }, ctx);
    for (let t = 10; t <= 190; t += 10) s.decide(signals(t, [busy(0)], { input: 150, output: 100, actual }));
    return net(s.decide(signals(200, [busy(0)], { input: 150, output: 100, actual })));
  };
  assert.equal(added({}, 210), 2);
  assert.equal(added({ tier1Output: 'predicted' }, 210), 1);
  assert.equal(added({}, undefined), 1, 'the live gateway has no true count: the predictions');
});

/** Rule B's fixtures are counted to the token (the paper's (P + i)/M); 16-token blocks are tested in anticipator.test.ts. */
const TOKENS = { anticipator: { blockTokens: 1 } };

test('one more instance per instance entering an overload episode (> 10 of the next 100 steps above 95 % KV)', () => {
  const s = createScaler('preserve', { ...MU, windowS: 1000, windowsPerDay: 1, warmup: 'rules-b-c', ...TOKENS }, ctx);
  // M = 1,000: 960 + j tokens for 30 more steps → above 950 on all 30 → overloaded.
  const hot = (id: number) => instance(id, [prog({ inputTokens: 960, predicted: 40, generated: 11 })], { kvCapacityTokens: 1000 });
  const edge = (id: number) => instance(id, [prog({ inputTokens: 945, predicted: 25, generated: 1 })], { kvCapacityTokens: 1000 });
  assert.equal(net(s.decide(signals(10, [hot(0), busy(1)], null))), 1);
  // Still overloaded at the next tick: the same episode, no second instance (the pool now has 3).
  assert.equal(net(s.decide(signals(20, [hot(0), busy(1), busy(2)], null))), 0);
  // Instance 1 enters an episode too → +1.
  assert.equal(net(s.decide(signals(30, [hot(0), hot(1), busy(2)], null))), 1);
  // 945 + j > 950 for j = 6..24 (19 of 100 steps) → overloaded; 10 or fewer would not be.
  const s2 = createScaler('preserve', { ...MU, windowS: 1000, windowsPerDay: 1, warmup: 'rules-b-c', ...TOKENS }, ctx);
  assert.equal(net(s2.decide(signals(10, [edge(0)], null))), 1);
  const mild = instance(0, [prog({ inputTokens: 945, predicted: 16, generated: 1 })], { kvCapacityTokens: 1000 }); // j = 6..15: 10 steps
  const s3 = createScaler('preserve', { ...MU, windowS: 1000, windowsPerDay: 1, warmup: 'rules-b-c', ...TOKENS }, ctx);
  assert.equal(net(s3.decide(signals(10, [mild], null))), 0);
});

test('rule B: an instance still in its overload episode does not trigger again at the next window boundary (overloadDedup: window re-arms it)', () => {
  const hot = (id: number) => instance(id, [prog({ inputTokens: 960, predicted: 40, generated: 11 })], { kvCapacityTokens: 1000 });
  // seasonal-naive needs 2 windows of history; 100 prompt + 100 output tokens a 10-s tick over 100-s windows → P = D =
  // 1,000 a window → target ⌈max(1, 1, 1.33)⌉ = 2 at every boundary from t = 200 on.
  const boundaryAdds = (overloadDedup: 'episode' | 'window') => {
    const s = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, forecaster: 'seasonal-naive', overloadDedup }, ctx);
    for (let t = 10; t <= 190; t += 10) s.decide(signals(t, [busy(0), busy(1)], { input: 100, output: 100 }));
    // t = 200: Tier 1 sets 2; instance 0 enters an episode → +1 (3 wanted).
    const first = net(s.decide(signals(200, [hot(0), busy(1)], { input: 100, output: 100 })));
    for (let t = 210; t <= 290; t += 10) s.decide(signals(t, [hot(0), busy(1), busy(2)], { input: 100, output: 100 }));
    // t = 300: Tier 1 sets 2 again while instance 0's episode goes on.
    return { first, next: net(s.decide(signals(300, [hot(0), busy(1), busy(2)], { input: 100, output: 100 }))) };
  };
  assert.deepEqual(boundaryAdds('episode'), { first: 1, next: -1 }, 'rule A alone: back to 2, the episode was counted');
  assert.deepEqual(boundaryAdds('window'), { first: 1, next: 0 }, 'sessions 1–16: the episode re-arms and adds its instance again');
});

test('rule B: instances already starting cover new overload triggers (overloadDedup: window adds one per trigger anyway)', () => {
  const hot = (id: number) => instance(id, [prog({ inputTokens: 960, predicted: 40, generated: 11 })], { kvCapacityTokens: 1000 });
  const added = (overloadDedup: 'episode' | 'window', provisioning: number, hotCount: number) => {
    const s = createScaler('preserve', { ...MU, windowS: 1000, windowsPerDay: 1, warmup: 'rules-b-c', overloadDedup }, ctx);
    const insts = [0, 1, 2].map((id) => (id < hotCount ? hot(id) : busy(id)));
    return net(s.decide(signals(10, insts, null, provisioning)));
  };
  assert.equal(added('episode', 1, 1), 0, 'one entering, one starting: covered');
  assert.equal(added('episode', 1, 3), 2, 'three entering, one starting: two more');
  assert.equal(added('episode', 0, 2), 2);
  assert.equal(added('window', 1, 1), 1);
  assert.equal(added('window', 1, 3), 3);
  assert.deepEqual([ruleBScaleOut(2, 1, 'episode'), ruleBScaleOut(1, 3, 'episode'), ruleBScaleOut(2, 1, 'window')], [1, 0, 2]);
});

test('rule B (overloadDedup: episode) counts a scale-out the governor has not let through yet as in flight', () => {
  const hot = (id: number) => instance(id, [prog({ inputTokens: 960, predicted: 40, generated: 11 })], { kvCapacityTokens: 1000 });
  const s = createScaler('preserve', { ...MU, windowS: 1000, windowsPerDay: 1, warmup: 'rules-b-c', overloadDedup: 'episode' }, ctx);
  assert.equal(net(s.decide(signals(10, [hot(0), busy(1)], null))), 1);
  // The add was vetoed (still 2 ready, none starting): it is asked for again, and covers instance 1's new episode.
  assert.equal(net(s.decide(signals(20, [hot(0), hot(1)], null))), 1);
});

test('at most one scale-in per window, to ceil(Σ peak / 0.3), when every projection stays below 30 %', () => {
  const s = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, forecaster: 'seasonal-naive', warmup: 'rules-b-c' }, ctx);
  // Four instances at 10 % (M = 1,000: 100 tokens) → Σ peak 0.4 + ... → keep ⌈(0.1 + 0.1 + 0.1 + 0.101·0)/0.3⌉
  const low = (id: number, tokens: number) => instance(id, [prog({ inputTokens: tokens, predicted: 1, generated: 1 })], { kvCapacityTokens: 1000 });
  const four = [low(0, 100), low(1, 100), low(2, 100), low(3, 100)];
  // Σ peak = 0.4 → keep ⌈1.33⌉ = 2 → remove 2.
  assert.deepEqual(s.decide(signals(10, four, null)), [{ kind: 'remove', pool: 'p', count: 2, reason: 'anticipated-underload' }]);
  // Later in the same window, with 2 left and still idle: no second scale-in.
  assert.equal(net(s.decide(signals(20, [low(0, 10), low(1, 10)], null))), 0);
  // One instance above 30 % blocks it: 'max-peak' divisor variant after the next window opens is not reached here.
  const s2 = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, warmup: 'rules-b-c' }, ctx);
  assert.equal(net(s2.decide(signals(10, [low(0, 100), low(1, 350)], null))), 0);
  // Divisor 'one' packs to 100 %: Σ 0.4 → keep 1.
  const s3 = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, scaleDownDivisor: 'one', warmup: 'rules-b-c' }, ctx);
  assert.equal(net(s3.decide(signals(10, four, null))), -3);
});

test('rule C does not countermand the forecast on the boundary tick or while the scale-out is starting (once the new instances are ready and idle it may: the paper\'s rule C)', () => {
  const idle = (id: number) => instance(id, [], { kvCapacityTokens: 1000 });
  const run = (scaleDownWhileStarting: boolean) => {
    const s = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, forecaster: 'seasonal-naive', scaleDownWhileStarting }, ctx);
    // P = D = 5,000 a window → target ⌈max(5, 5, 6.67)⌉ = 7, while both ready instances are idle (under 30 %).
    for (let t = 10; t <= 190; t += 10) s.decide(signals(t, [idle(0), idle(1)], { input: 500, output: 500 }));
    const atBoundary = s.decide(signals(200, [idle(0), idle(1)], { input: 500, output: 500 }));
    const inWindow = s.decide(signals(210, [idle(0), idle(1)], { input: 500, output: 500 }, 5));
    const allReady = s.decide(signals(220, [0, 1, 2, 3, 4, 5, 6].map(idle), { input: 500, output: 500 }));
    return { atBoundary, inWindow, allReady };
  };
  const r = run(false);
  assert.deepEqual(r.atBoundary, [{ kind: 'add', pool: 'p', count: 5, reason: 'tier1-target' }]);
  assert.equal(net(r.inWindow), 0, 'the five starting instances are kept');
  // Once they are up and idle, every projection is under 30 %: rule C shrinks the fleet within the window.
  assert.deepEqual(r.allReady, [{ kind: 'remove', pool: 'p', count: 6, reason: 'anticipated-underload' }]);
  // Sessions 1–7: judging the ready instances alone cancels the scale-out inside the window.
  assert.ok(net(run(true).inWindow) < 0);
});

test('before Tier 1 has history the fleet is held by default (the paper falls back to default scaling)', () => {
  const hot = instance(0, [prog({ inputTokens: 960, predicted: 40, generated: 11 })], { kvCapacityTokens: 1000 });
  const idle = instance(1, [], { kvCapacityTokens: 1000 });
  const s = createScaler('preserve', { ...MU, windowS: 100, windowsPerDay: 1, forecaster: 'seasonal-naive' }, ctx);
  assert.equal(net(s.decide(signals(10, [hot, idle], null))), 0);
  assert.equal(net(s.decide(signals(20, [idle, instance(2, [], { kvCapacityTokens: 1000 })], null))), 0);
  // Once warm (2 windows of history) Tier 1 takes over: zero tokens forecast → 1 instance (at least one is kept).
  for (let t = 30; t <= 200; t += 10) s.decide(signals(t, [busy(0), busy(1)], { input: 0, output: 0 }));
  assert.equal(net(s.decide(signals(210, [idle, instance(2, [], { kvCapacityTokens: 1000 })], null))), -1);
});

test('the preserve scaler needs its capacities and names a bad one', () => {
  assert.throws(() => createScaler('preserve', {}, ctx), /scaling\.options\.muPrefill/);
  assert.throws(() => createScaler('preserve', { ...MU, windowS: -1 }, ctx), /scaling\.options\.windowS/);
});

test('static holds the configured count and restores it', () => {
  const s = createScaler('static', { count: 3 }, ctx);
  assert.deepEqual(s.decide(signals(10, [busy(0)], null)), [{ kind: 'add', pool: 'p', count: 2, reason: 'static-count' }]);
  assert.equal(net(s.decide(signals(20, [busy(0), busy(1), busy(2)], null))), 0);
  const keep = createScaler('static', {}, ctx);
  assert.equal(net(keep.decide(signals(10, [busy(0), busy(1)], null))), 0);
  assert.equal(net(keep.decide(signals(20, [busy(0)], null))), 1);
});

test('windows far shorter than the tick interval are skipped at once, not one loop turn each', () => {
  const s = createScaler('preserve', { ...MU, windowS: 0.001, windowsPerDay: 1, forecaster: 'seasonal-naive' }, ctx);
  const insts = [busy(0)];
  // 1e9 s of clock in 1 ms windows: 1e12 turns of a one-window-per-turn loop, which would never finish here.
  s.decide(signals(10, insts, { input: 150, output: 100 }));
  s.decide(signals(1e9, insts, { input: 150, output: 100 }));
  const after = s.decide(signals(1e9 + 10, insts, { input: 150, output: 100 }));
  assert.ok(Array.isArray(after));
});
