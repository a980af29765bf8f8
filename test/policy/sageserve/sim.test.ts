import { test } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { summarize } from '../../../src/metrics/summary.ts';
import { loadScenario } from '../../../src/scenario/load.ts';
import { o365, O365_DEADLINE_S } from '../../../src/workload/generators/o365.ts';
import { Rng } from '../../../src/util/rng.ts';
import { outcomes, run, scenarioFor } from '../../helpers/sim.ts';
import { simulate } from '../../../src/sim/simulator.ts';

/** A canonical trace with tiers, regions and deadlines. */
function tieredTrace(rows: { t: number; in: number; out: number; tier: string; region?: string }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-sage-'));
  const path = join(dir, 'trace.csv');
  const body = rows.map((r) => `${r.t},${r.in},${r.out},llama3.1-8b,${r.tier},${r.region ?? 'east'},${r.t + (O365_DEADLINE_S[r.tier] ?? 1e9)}`);
  writeFileSync(path, 'arrival_s,input_tokens,output_tokens,model,tier,region,deadline_s\n' + body.join('\n') + '\n');
  return path;
}

const pools = (kvTokens: number) => ({
  pools: [
    { name: 'east-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'east', count: 1 },
    { name: 'west-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'west', count: 1 },
  ],
  provisioning: { vmAcquireS: 0, modelLoadS: 0 },
  kv: kvTokens,
});

test('NIW requests held by the SageServe router are all served, after the IW burst, and counted once', () => {
  const rows = [];
  for (let i = 0; i < 150; i++) rows.push({ t: i * 0.01, in: 3000, out: 200, tier: 'iw-f' });
  for (let i = 0; i < 40; i++) rows.push({ t: 0.5 + i * 0.01, in: 500, out: 50, tier: 'niw' });
  rows.sort((a, b) => a.t - b.t);
  const { kv: _kv, ...fleet } = pools(0);
  const sc = scenarioFor(tieredTrace(rows), { fleet, engine: { kvCapacityTokens: 400_000 }, routing: { policy: 'sageserve' }, maxDeferS: 86_400 });
  const res = run(sc, 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 190);
  assert.equal(s.requests.total, s.requests.completed + s.requests.dropped + s.requests.unfinished);
  assert.ok(s.tiers?.niw);
  // Some NIW request waited at the gateway while the endpoints were busy with IW.
  let maxNiwQueue = 0;
  for (let i = 0; i < res.log.n; i++) if (res.log.tiers[res.log.tierIdx[i]!] === 'niw') maxNiwQueue = Math.max(maxNiwQueue, res.log.queue[i]!);
  assert.ok(maxNiwQueue > 0, 'NIW was held');
});

test('scheduling.policy picks the queue order; without it engine.queueOrder still decides', () => {
  // One instance, KV for one request at a time: the order the waiting queue releases requests is visible.
  const rows = [
    { t: 0, in: 900, out: 100, tier: 'iw-n' },
    { t: 0.001, in: 900, out: 100, tier: 'iw-n' },
    { t: 0.002, in: 900, out: 100, tier: 'iw-f' },
  ];
  const firstToken = (raw: Record<string, unknown>) => {
    const sc = scenarioFor(tieredTrace(rows), { engine: { kvBlocks: 70, blockTokens: 16 }, ...raw });
    const res = run(sc, 'fast');
    return [0, 1, 2].sort((a, b) => res.log.ttft[a]! + res.log.arrival[a]! - (res.log.ttft[b]! + res.log.arrival[b]!));
  };
  assert.deepEqual(firstToken({}), [0, 1, 2], 'fcfs by default');
  assert.deepEqual(firstToken({ scheduling: { policy: 'pf' } }), [0, 2, 1], 'PF: the IW-F request jumps the waiting IW-N one');
  assert.deepEqual(firstToken({ engine: { kvBlocks: 70, blockTokens: 16, queueOrder: 'edf' } }), [0, 2, 1], 'engine.queueOrder still works');
});

test('the peak-day scenario loads and switches scaler and queue order with --set', () => {
  for (const policy of ['sageserve-reactive', 'reactive', 'lt-i', 'lt-u', 'lt-ua', 'chiron', 'siloed']) {
    for (const order of ['fcfs', 'edf', 'pf', 'dpa']) {
      const { scenario } = loadScenario({ file: 'scenarios/sageserve-peak-day.yaml', sets: [`scaling.policy=${policy}`, `scheduling.policy=${order}`] });
      assert.equal(scenario.scaling.policy, policy);
      assert.equal(scenario.scheduling.policy, order);
    }
  }
  assert.throws(() => loadScenario({ file: 'scenarios/sageserve-peak-day.yaml', sets: ['scheduling.policy=lifo'] }), /scheduling\.policy/);
});

test("in the SageServe scenarios the paper's name `reactive` runs SageServe's Reactive (scaling.aliases)", () => {
  const outcomesOf = (sets: string[]) => {
    const { scenario, baseDir } = loadScenario({ file: 'scenarios/sageserve-peak-day.yaml', sets: ['workload.o365.durationS=1200', ...sets] });
    return outcomes(simulate(scenario, baseDir, { mode: 'fast' }));
  };
  const paper = outcomesOf(['scaling.policy=sageserve-reactive']);
  assert.deepEqual(outcomesOf(['scaling.policy=reactive']), paper);
  assert.notDeepEqual(outcomesOf(['scaling.aliases={}', 'scaling.policy=reactive']), paper, "without the alias it is the core's scaler");
  for (const file of ['scenarios/sageserve-peak-day.yaml', 'scenarios/sageserve-week.yaml']) {
    assert.equal(loadScenario({ file }).scenario.scaling.aliases.reactive, 'sageserve-reactive', file);
  }
});

test('the O365 generator: tier mix, East > Central > West, NIW flat and tiny in West, deadlines per tier', () => {
  const reqs = [...o365({ durationS: 86_400, startS: 86_400, meanRequestsPerS: 2 }, new Rng(5))];
  const n = reqs.length;
  assert.ok(n > 100_000 && n < 300_000, `about 2 × 86400 × Tuesday factor requests, got ${n}`);
  const share = (f: (r: (typeof reqs)[number]) => boolean) => reqs.filter(f).length / n;
  const niw = share((r) => r.tier === 'niw');
  assert.ok(niw > 0.2 && niw < 0.3, `NIW share ${niw}`);
  assert.ok(share((r) => r.tier === 'iw-f') > share((r) => r.tier === 'iw-n'), 'IW-F is the largest tier');
  const region = (g: string) => share((r) => r.region === g);
  assert.ok(region('east') > region('central') && region('central') > region('west'));
  assert.ok(share((r) => r.tier === 'niw' && r.region === 'west') < 0.01);
  const a = (g: string) => reqs.filter((r) => r.model === 'llama2-70b' && r.tier === 'iw-f' && r.region === g).length;
  assert.ok(Math.abs(a('east') / a('west') - 4) < 0.5, `model A IW-F East/West ${a('east') / a('west')}`);
  for (const r of reqs.slice(0, 1000)) assert.equal(r.deadlineS! - r.arrivalS, O365_DEADLINE_S[r.tier!]);
  // Diurnal IW: the 15:00 hour carries several times the 03:00 hour; NIW does not.
  const hour = (h: number, tier: string) => reqs.filter((r) => r.tier === tier && r.arrivalS >= h * 3600 && r.arrivalS < (h + 1) * 3600).length;
  assert.ok(hour(15, 'iw-f') > 5 * hour(3, 'iw-f'));
  assert.ok(hour(15, 'niw') < 1.5 * hour(3, 'niw'));
  // Arrivals are in order and ids count up; the same rng gives the same trace.
  for (let i = 1; i < 2000; i++) assert.ok(reqs[i]!.arrivalS >= reqs[i - 1]!.arrivalS && reqs[i]!.id === i);
  const again = [...o365({ durationS: 600, meanRequestsPerS: 2 }, new Rng(5))];
  assert.deepEqual(again, [...o365({ durationS: 600, meanRequestsPerS: 2 }, new Rng(5))]);
});

test('the O365 generator: weekends are quieter than weekdays for IW', () => {
  const day = (d: number) => [...o365({ startS: d * 86_400, durationS: 86_400, meanRequestsPerS: 0.2, models: ['llama2-70b'] }, new Rng(1))].filter((r) => r.tier === 'iw-f').length;
  assert.ok(day(5) < 0.5 * day(2), `Saturday ${day(5)} vs Wednesday ${day(2)}`);
});

test('Chiron end to end: NIW only on batch or mixed instances, IW never on batch ones and onto mixed ones once the interactive pool is full', () => {
  // From t = 30 s (after Chiron's first tick started 1 mixed + 1 batch instance, no lead time): a burst of long IW
  // prompts fills the single interactive instance's small KV past 70 %, NIW arrives throughout.
  const rows = [];
  for (let i = 0; i < 120; i++) rows.push({ t: 30 + i * 0.05, in: 3000, out: 300, tier: 'iw-f' });
  for (let i = 0; i < 30; i++) rows.push({ t: 30 + i * 0.2, in: 500, out: 50, tier: 'niw' });
  rows.sort((a, b) => a.t - b.t);
  const fleet = {
    pools: [
      { name: 'east-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'east', count: 1, minCount: 1 },
      { name: 'east-a-mixed', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'east', count: 0 },
      { name: 'east-a-niw', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'east', count: 0 },
    ],
    provisioning: { vmAcquireS: 0, modelLoadS: 0 },
  };
  const sc = scenarioFor(tieredTrace(rows), {
    fleet, engine: { kvCapacityTokens: 60_000 }, routing: { policy: 'sageserve' }, maxDeferS: 86_400,
    scaling: { policy: 'chiron', intervalS: 15, options: { chironStart: { interactive: 1, mixed: 1, batch: 1 }, chironFloor: 1 } },
  });
  const res = run(sc, 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 150);
  const poolOf = (i: number) => res.fleet.instances[res.log.instance[i]!]!.pool;
  const tierOf = (i: number) => res.log.tiers[res.log.tierIdx[i]!];
  const count = (tier: string, pool: string) => {
    let n = 0;
    for (let i = 0; i < res.log.n; i++) if (tierOf(i) === tier && poolOf(i) === pool) n++;
    return n;
  };
  assert.equal(count('niw', 'east-a'), 0, 'NIW never on the interactive pool');
  assert.equal(count('iw-f', 'east-a-niw'), 0, 'IW never on the batch pool');
  assert.ok(count('niw', 'east-a-niw') > 0, 'NIW on the batch pool');
  assert.ok(count('iw-f', 'east-a-mixed') > 0, 'IW spilled into the mixed pool');
  // The first IW requests go to the interactive pool; the spill starts only once its KV passed 70 %.
  const firstIw = [...Array(res.log.n).keys()].filter((i) => tierOf(i) === 'iw-f').sort((a, b) => res.log.arrival[a]! - res.log.arrival[b]!);
  assert.deepEqual(firstIw.slice(0, 5).map(poolOf), Array(5).fill('east-a'));
  assert.ok(count('iw-f', 'east-a') >= 5);
});

test('held NIW requests are released only on endpoint signals (niwReleaseTo: signalling), not on their own arrival', () => {
  // NIW from East, whose endpoint has no instance; West is idle. West first signals at the periodic signal (60 s
  // here), then at each of its completions; `preference` releases each request to West as it arrives.
  const rows = Array.from({ length: 10 }, (_, i) => ({ t: 1 + i * 0.01, in: 500, out: 20, tier: 'niw', region: 'east' }));
  const fleet = { pools: [{ name: 'west-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'west', count: 1 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } };
  const firstTokens = (niwReleaseTo: string) => {
    const sc = scenarioFor(tieredTrace(rows), { fleet, routing: { policy: 'sageserve', options: { niwReleaseTo, niwSignalIntervalS: 60 } }, maxDeferS: 86_400 });
    const res = run(sc, 'fast');
    assert.equal(summarize(res, 0).requests.completed, 10);
    return Array.from({ length: 10 }, (_, i) => res.log.arrival[i]! + res.log.ttft[i]!);
  };
  const signalled = firstTokens('signalling');
  assert.ok(signalled.every((t) => t >= 60), `nothing before West's first signal, got ${Math.min(...signalled)}`);
  assert.ok(firstTokens('preference').every((t) => t < 5), 'released on arrival');
});

test('an instance that starts with no provisioning lead signals held NIW requests at once, like one that becomes ready later', () => {
  // East has no instance until a scheduled add at 5 s; its NIW requests are held (no reroute). The new instance
  // signals as it comes up, with or without a lead time, so they start then, not at the periodic signal (60 s).
  const rows = Array.from({ length: 5 }, (_, i) => ({ t: 1 + i * 0.01, in: 500, out: 20, tier: 'niw', region: 'east' }));
  const firstTokens = (leadS: number) => {
    const fleet = {
      pools: [{ name: 'east-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'east', count: 0 }],
      provisioning: { vmAcquireS: leadS, modelLoadS: 0 },
    };
    const sc = scenarioFor(tieredTrace(rows), {
      fleet,
      routing: { policy: 'sageserve', options: { reroute: false, niwReleaseTo: 'signalling', niwSignalIntervalS: 60 } },
      scaling: { policy: 'scheduled', actions: [{ atS: 5, action: 'add', pool: 'east-a' }] },
      maxDeferS: 86_400,
    });
    const res = run(sc, 'fast');
    assert.equal(summarize(res, 0).requests.completed, 5);
    return Array.from({ length: 5 }, (_, i) => res.log.arrival[i]! + res.log.ttft[i]!);
  };
  for (const leadS of [0, 2]) {
    const t = firstTokens(leadS);
    assert.ok(t.every((x) => x >= 5 + leadS && x < 30), `lead ${leadS} s: first tokens ${t.map((x) => x.toFixed(2)).join(', ')}`);
  }
});

test('held NIW requests are released on the periodic signal grid whatever the timeline interval (an output setting)', () => {
  const rows = Array.from({ length: 10 }, (_, i) => ({ t: 1 + i * 0.01, in: 500, out: 20, tier: 'niw', region: 'east' }));
  const fleet = { pools: [{ name: 'west-a', model: 'llama3.1-8b', hardware: 'h100-80gb', region: 'west', count: 1 }], provisioning: { vmAcquireS: 0, modelLoadS: 0 } };
  const firstTokens = (timelineIntervalS: number) => {
    const sc = scenarioFor(tieredTrace(rows), { fleet, routing: { policy: 'sageserve', options: { niwSignalIntervalS: 30 } }, output: { timelineIntervalS }, maxDeferS: 86_400 });
    const res = run(sc, 'fast');
    return Array.from({ length: 10 }, (_, i) => res.log.arrival[i]! + res.log.ttft[i]!);
  };
  const at30 = firstTokens(30);
  assert.ok(at30.every((t) => t >= 30), `nothing before the first periodic signal at 30 s, got ${Math.min(...at30)}`);
  assert.deepEqual(firstTokens(1), at30);
  assert.deepEqual(firstTokens(7), at30);
});

/**
 * East's endpoint is over 60 % full with one long IW request (no NIW budget there); West's is idle. A NIW request of
 * East is held first, then one of West; no reroute, so each can go only to its own region. The periodic signal at
 * 30 s finds East refusing its head: with one FIFO per model West's request waits behind it until East has room
 * and West signals again; with one per (model, region) West's goes at 30 s.
 */
const headOfLine = (niwQueues: string) => {
  const rows = [
    { t: 0, in: 30_000, out: 6_000, tier: 'iw-f', region: 'east' },
    { t: 1, in: 200, out: 10, tier: 'niw', region: 'east' },
    { t: 1.01, in: 200, out: 10, tier: 'niw', region: 'west' },
  ];
  const { kv: _kv, ...fleet } = pools(0);
  const options = { niwQueues, reroute: false, niwReleaseTo: 'signalling', niwSignalIntervalS: 30 };
  const sc = scenarioFor(tieredTrace(rows), { fleet, engine: { kvCapacityTokens: 40_000 }, routing: { policy: 'sageserve', options }, maxDeferS: 86_400 });
  const res = run(sc, 'fast');
  assert.equal(summarize(res, 0).requests.completed, 3);
  const firstToken = (i: number) => res.log.arrival[i]! + res.log.ttft[i]!;
  return { eastIwDone: res.log.arrival[0]! + res.log.e2e[0]!, eastNiw: firstToken(1), westNiw: firstToken(2) };
};

test("niwQueues: model-region — a held NIW request of one region does not block another region's behind it", () => {
  const r = headOfLine('model-region');
  assert.ok(r.eastIwDone > 60, `East stays busy past the first signals (its IW request ends at ${r.eastIwDone} s)`);
  assert.ok(r.westNiw >= 30 && r.westNiw < 31, `West's request goes at the first periodic signal, got ${r.westNiw} s`);
  assert.ok(r.eastNiw > 30, `East's stays held while East is over 60 %, got ${r.eastNiw} s`);
});

test('niwQueues: model (the default) keeps one FIFO per model: the refused head holds the other region back', () => {
  const r = headOfLine('model');
  assert.ok(r.westNiw > r.eastNiw, `West's request after East's (${r.westNiw} s vs ${r.eastNiw} s)`);
  assert.ok(r.westNiw > 60, `West's request waits for East's head, got ${r.westNiw} s`);
});
