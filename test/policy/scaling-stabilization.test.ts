import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveAutoscaler } from '../../src/live/autoscaler/controller.ts';
import type { Actuator, GatewayHandle, ScaledPool } from '../../src/live/autoscaler/types.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { LiveFleet } from '../../src/live/gateway/live-fleet.ts';
import { summarize } from '../../src/metrics/summary.ts';
import { Governor, type GovernorLimits } from '../../src/policy/scaling/governor.ts';
import type { PoolStatus, ScaleAction, Scaler } from '../../src/policy/scaling/types.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { UserError } from '../../src/util/errors.ts';
import { run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

const INTERVAL = 60;
/** An oscillating demand (desired instance counts per tick), then a long low stretch. */
const DESIRED = [2, 5, 2, 5, 3, 5, 2, 2, 5, 1, 4, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1];

/** A stub scaler that asks for the difference between the tick's desired count and the pool's current one. */
function stub(desired: readonly number[]): Scaler {
  let k = 0;
  return {
    name: 'stub',
    decide(s) {
      const p = s.pools[0]!;
      const d = desired[k++]! - (p.provisioning + p.ready);
      return d > 0 ? [{ kind: 'add', pool: p.name, count: d, reason: 'stub' }] : d < 0 ? [{ kind: 'remove', pool: p.name, count: -d, reason: 'stub' }] : [{ kind: 'hold', reason: 'stub' }];
    },
  };
}

const pool = (ready: number): PoolStatus => ({
  name: 'p', model: 'm', hardware: 'h', region: '', tp: 1, pp: 1, provisioning: 0, ready, draining: 0,
  minCount: 1, maxCount: 8, kvUtilization: 0, outstandingRequests: 0, waiting: 0,
});

/** Runs the stub through a bare Governor, instances ready at once; per tick: time, count after, governed actions. */
function governed(limits: GovernorLimits) {
  const g = new Governor(limits);
  const s = stub(DESIRED);
  let count = 2;
  const ticks: { t: number; after: number; actions: ScaleAction[] }[] = [];
  for (let i = 0; i < DESIRED.length; i++) {
    const t = 1000 + i * INTERVAL;
    const status = [pool(count)];
    const actions = g.apply(s.decide({ now: t, intervalS: INTERVAL, pools: status, arrivals: [], view: { now: t, instances: [], routable: () => [] } }), status, t);
    for (const a of actions) if (a.kind !== 'hold') count += a.kind === 'add' ? a.count : -a.count;
    ticks.push({ t, after: count, actions });
  }
  return ticks;
}

const limits = (downStabilizationS?: number): GovernorLimits => ({ upCooldownS: 0, downCooldownS: 0, maxStep: 100, ...(downStabilizationS !== undefined ? { downStabilizationS } : {}) });
const scaleIns = (ticks: ReturnType<typeof governed>) => ticks.filter((x) => x.actions.some((a) => a.kind === 'remove')).length;

test('downStabilizationS: an oscillating demand gives fewer scale-ins, never below the highest count recommended within the window; scale-ups pass at once', () => {
  const off = governed(limits());
  const zero = governed(limits(0));
  assert.deepEqual(zero, off, '0 = off');
  const W = 180;
  const on = governed(limits(W));
  assert.ok(scaleIns(on) < scaleIns(off), `scale-ins with the window ${scaleIns(on)}, without ${scaleIns(off)}`);
  assert.ok(scaleIns(on) > 0, 'a demand that stays low is followed down');
  for (const [i, x] of on.entries()) {
    // The window: ticks in (t - W, t].
    const windowMax = Math.max(...DESIRED.slice(0, i + 1).filter((_, j) => on[j]!.t > x.t - W));
    const before = i === 0 ? 2 : on[i - 1]!.after;
    if (x.after < before) assert.equal(x.after, Math.max(1, windowMax), `t=${x.t}: a scale-in goes down to the window's highest recommendation`);
    if (DESIRED[i]! > before) assert.equal(x.after, DESIRED[i], `t=${x.t}: a scale-up is not held`);
    assert.equal(x.after, Math.max(DESIRED[i]!, Math.min(before, windowMax)), `t=${x.t}`);
  }
  // Without the window the count simply follows the demand.
  for (const [i, x] of off.entries()) assert.equal(x.after, DESIRED[i]);
});

test('downStabilizationS combines with the other limits: the bounds and maxStep still clamp a stabilized scale-in', () => {
  const g = new Governor({ upCooldownS: 0, downCooldownS: 0, maxStep: 1, downStabilizationS: 100 });
  const remove = (count: number): ScaleAction => ({ kind: 'remove', pool: 'p', count, reason: 'x' });
  assert.deepEqual(g.apply([{ kind: 'hold', reason: 'x' }], [pool(6)], 0), []);
  assert.deepEqual(g.apply([remove(4)], [pool(6)], 50), [], 'the 6 recommended at 0 s is within the window');
  assert.deepEqual(g.apply([remove(3)], [pool(6)], 100), [{ kind: 'remove', pool: 'p', count: 1, reason: 'governed' }], 'down to max(2, 3) = 3, one per tick');
  assert.deepEqual(g.apply([remove(9)], [pool(5)], 160), [{ kind: 'remove', pool: 'p', count: 1, reason: 'governed' }], 'window (60, 160]: 3 and 1 (minCount): down to 3, one per tick');
});

/** A gateway stand-in whose backends the actuator below adds and removes at once. */
function liveFleet(n: number): { gateway: GatewayHandle; actuator: Actuator } {
  const fleet = new LiveFleet();
  let port = 9000;
  const add = () => {
    fleet.add(`http://127.0.0.1:${port++}`, 'm', 'h', 100).healthy = true;
  };
  for (let i = 0; i < n; i++) add();
  fleet.refresh(0);
  const gateway: GatewayHandle = {
    fleet,
    queuedFor: () => 0,
    takeArrivals: () => [],
    addBackend: (model, url) => fleet.add(url, model, '', 100),
    drainBackend: async () => {},
    probe: async () => {},
  };
  const actuator: Actuator = {
    kind: 'advisory',
    pending: () => 0,
    add: async (_p, count) => {
      for (let i = 0; i < count; i++) add();
      fleet.refresh(0);
      return `added ${count}`;
    },
    remove: async (_p, count) => {
      for (const b of fleet.instances.filter((x) => !x.removed).slice(-count)) b.removed = true;
      fleet.refresh(0);
      return `removed ${count}`;
    },
    close: async () => {},
  };
  return { gateway, actuator };
}

test('the live autoscaler uses the same stabilization: the same demand gives the same governed actions as the simulator governor', async () => {
  const POOL: ScaledPool = { name: 'p', model: 'm', hardware: 'h', tp: 1, minCount: 1, maxCount: 8 };
  const ins: number[] = [];
  for (const W of [undefined, 180]) {
    const { gateway, actuator } = liveFleet(2);
    const clock = { now: 0 };
    const as = new LiveAutoscaler({ scaler: stub(DESIRED), limits: limits(W), pools: [POOL], actuator, gateway, intervalS: INTERVAL, now: () => clock.now });
    const live: { t: number; after: number; actions: ScaleAction[] }[] = [];
    for (let i = 0; i < DESIRED.length; i++) {
      clock.now = 1000 + i * INTERVAL;
      const rec = await as.tick();
      live.push({ t: clock.now, after: gateway.fleet.ready('m').length, actions: rec.governed });
    }
    assert.deepEqual(live, governed(limits(W)), `downStabilizationS ${W}`);
    ins.push(scaleIns(live));
  }
  assert.ok(ins[1]! < ins[0]!, `live scale-ins: ${ins[1]} with the window, ${ins[0]} without`);
});

test('scaling.downStabilizationS in a simulation: fewer scale-ins under bursty load, results unchanged at 0', () => {
  // Bursts of long requests every 240 s on small-KV instances: the reactive scaler scales out at each burst and,
  // without a window, back in between them.
  const reqs: Req[] = [];
  for (let b = 0; b < 8; b++) for (let i = 0; i < 150; i++) reqs.push({ t: b * 240 + i * 0.2, in: 400, out: 300 });
  reqs.push({ t: 3000, in: 10, out: 2 }); // then a long quiet stretch, which the window follows down
  const trace = writeTrace(reqs);
  const sc = (scaling: Record<string, unknown>) =>
    scenarioFor(trace, {
      fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, minCount: 1, maxCount: 3 }], provisioning: { vmAcquireS: 20, modelLoadS: 10 } },
      engine: { kvBlocks: 400 },
      scaling: { policy: 'reactive', intervalS: 10, downCooldownS: 0, ...scaling },
    });
  const drained = (r: ReturnType<typeof run>) => r.fleet.instances.filter((x) => x.state === 'stopped' || x.state === 'draining').length;
  const base = run(sc({}), 'fast');
  const zero = run(sc({ downStabilizationS: 0 }), 'fast');
  assert.deepEqual(summarize(zero, 0), summarize(base, 0), '0 = off');
  const on = run(sc({ downStabilizationS: 300 }), 'fast');
  assert.equal(summarize(on, 0).requests.completed, reqs.length);
  assert.ok(drained(on) < drained(base), `instances scaled in: ${drained(on)} with the window, ${drained(base)} without`);
  assert.ok(drained(on) > 0, 'scaled in once the load stayed low for the window');
  assert.ok(on.fleet.instances.length < base.fleet.instances.length, `instances started: ${on.fleet.instances.length} with, ${base.fleet.instances.length} without`);
});

test('scaling.downStabilizationS is validated with the field named', () => {
  for (const [set, why] of [['scaling.downStabilizationS=-1', /scaling\.downStabilizationS: expected ≥ 0/], ['scaling.downStabilizationS=1e300', /scaling\.downStabilizationS: expected ≤ 10000000000/]] as const) {
    assert.throws(() => loadScenario({ file: 'scenarios/default.yaml', sets: [set] }), (e: Error) => e instanceof UserError && why.test(e.message) && !e.message.includes('\n'), set);
  }
  assert.equal(loadScenario({ file: 'scenarios/default.yaml' }).scenario.scaling.downStabilizationS, 0);
  assert.equal(loadScenario({ file: 'scenarios/default.yaml', sets: ['scaling.downStabilizationS=600'] }).scenario.scaling.downStabilizationS, 600);
});

test('the live gateway config takes the window in autoscaler.limits (off by default), and refuses a negative one', () => {
  const base = { port: 0, pools: [{ model: 'm', backends: [] }] };
  const autoscaler = (limits?: Record<string, number>) => ({ policy: 'reactive', pools: [{ model: 'm', maxCount: 2 }], ...(limits ? { limits } : {}) });
  assert.equal(gatewayConfigSchema.parse({ ...base, autoscaler: autoscaler() }).autoscaler!.limits.downStabilizationS, 0);
  assert.equal(gatewayConfigSchema.parse({ ...base, autoscaler: autoscaler({ downStabilizationS: 120 }) }).autoscaler!.limits.downStabilizationS, 120);
  assert.equal(gatewayConfigSchema.safeParse({ ...base, autoscaler: autoscaler({ downStabilizationS: -1 }) }).success, false);
});
