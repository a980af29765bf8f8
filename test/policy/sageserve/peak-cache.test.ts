import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PoolStatus, ScalingSignals } from '../../../src/policy/scaling/types.ts';
import { sageserveScalingOptions } from '../../../src/policy/sageserve/options.ts';
import { PeakCache, peakKey } from '../../../src/policy/sageserve/peak-cache.ts';
import { HourlyPlanner, type EndpointPlan } from '../../../src/policy/sageserve/planner.ts';
import type { FleetView } from '../../../src/policy/types.ts';
import { Rng } from '../../../src/util/rng.ts';

const pools: PoolStatus[] = ['east', 'west'].map((region) => ({
  name: `${region}-a`, model: 'llama2-70b', hardware: 'h100-80gb', region, tp: 8, pp: 1, provisioning: 0, ready: 2, draining: 0,
  minCount: 1, maxCount: 40, kvUtilization: 0, outstandingRequests: 0, waiting: 0,
}));
const view: FleetView = { now: 0, instances: [], routable: () => [] };

/** Two hours of noisy IW arrivals (a ramp in east, flat west); the plans made at 1 h and 2 h. */
function run(forecastCacheDir: string | null): { plans: EndpointPlan[][]; planner: HourlyPlanner } {
  const p = new HourlyPlanner(sageserveScalingOptions.parse({ forecastCacheDir }));
  const rng = new Rng(7);
  const plans: EndpointPlan[][] = [];
  for (let t = 15; t <= 7200; t += 15) {
    const arrivals = pools.map((x, i) => ({
      model: x.model, region: x.region, tier: 'iw-f', requests: 1, predictedOutputTokens: 0,
      inputTokens: Math.max(0, 15 * ((i === 0 ? 8000 + t : 5000) + 1500 * rng.normal())),
    }));
    const s: ScalingSignals = { now: t, intervalS: 15, pools, arrivals, view };
    p.observe(s);
    if (p.due(t)) {
      const made = p.plan(t, pools);
      if (made) plans.push(made.map((e) => ({ ...e })));
    }
  }
  return { plans, planner: p };
}

test('a planner reading peaks from the cache makes exactly the plans of an uncached one, without fitting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'peak-cache-'));
  const plain = run(null);
  assert.equal(plain.plans.length, 2, 'plans at 1 h and 2 h');
  assert.equal(plain.planner.fits, 4);
  const cold = run(dir);
  assert.deepEqual(cold.plans, plain.plans);
  assert.equal(cold.planner.fits, 4);
  assert.equal(cold.planner.cacheHits, 0);
  const warm = run(dir);
  assert.deepEqual(warm.plans, plain.plans);
  assert.equal(warm.planner.fits, 0, 'every peak read from the cache');
  assert.equal(warm.planner.cacheHits, 4);
  // The file alone carries the cache: a fresh directory holding a copy of it serves every peak too.
  const lines = readFileSync(join(dir, 'sageserve-peaks.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 4);
  const copy = mkdtempSync(join(tmpdir(), 'peak-cache-copy-'));
  copyFileSync(join(dir, 'sageserve-peaks.jsonl'), join(copy, 'sageserve-peaks.jsonl'));
  const fromFile = run(copy);
  assert.deepEqual(fromFile.plans, plain.plans);
  assert.equal(fromFile.planner.fits, 0);
});

test('the cache key changes with any history bit, the order or the peak window; torn lines are ignored', () => {
  const base = { order: [3, 1, 2] as const, window: [1, 60] as const, horizon: 60, history: [1, 2, 3, 4.5] };
  const k = peakKey(base);
  assert.equal(peakKey({ ...base, history: [1, 2, 3, 4.5] }), k);
  assert.notEqual(peakKey({ ...base, history: [1, 2, 3, 4.5 + 1e-12] }), k);
  assert.notEqual(peakKey({ ...base, order: [2, 1, 2] }), k);
  assert.notEqual(peakKey({ ...base, window: [20, 60] }), k);
  const dir = mkdtempSync(join(tmpdir(), 'peak-cache-torn-'));
  writeFileSync(join(dir, 'sageserve-peaks.jsonl'), `${JSON.stringify({ k: 'a', v: 1.25 })}\n{"k":"b","v"\n${JSON.stringify({ k: 'c', v: null })}\n`);
  const c = new PeakCache(dir);
  assert.equal(c.get('a'), 1.25);
  assert.equal(c.get('b'), undefined);
  assert.equal(c.get('c'), null, 'a failed fit is remembered as null');
  assert.equal(c.hits, 2);
  assert.equal(c.misses, 1);
});

test('a forecastCacheDir that cannot be made is one UserError naming the option, also under /proc (no loop)', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'peak-cache-')), 'a-file');
  writeFileSync(file, '');
  for (const dir of [join(file, 'cache'), '/proc/llmfleet-no/cache']) {
    assert.throws(() => new PeakCache(dir), (e: Error) => e.name === 'UserError' && /^scaling\.options\.forecastCacheDir .*cannot write there/.test(e.message));
  }
});

test('hourly forecasts whose ARIMA fit fails fall back to the last hour\'s peak, and the planner says how many', () => {
  const plan = (tokensPerTick: number) => {
    const p = new HourlyPlanner(sageserveScalingOptions.parse({}));
    for (let t = 15; t <= 7200; t += 15) {
      p.observe({ now: t, intervalS: 15, pools, arrivals: pools.map((x) => ({ model: x.model, region: x.region, tier: 'iw-f', requests: 1, predictedOutputTokens: 0, inputTokens: tokensPerTick })), view });
      if (p.due(t)) p.plan(t, pools);
    }
    return p;
  };
  assert.deepEqual(plan(5000).notes(), []);
  // 1e300 tokens a tick overflows the fit (its likelihood is not finite): every forecast falls back.
  const failed = plan(1e300);
  assert.equal(failed.fallbacks, 4);
  assert.deepEqual(failed.notes(), ["SageServe planner: 4 of 4 hourly endpoint forecasts fell back to the last hour's peak minute (the ARIMA(3,1,2) fit failed)"]);
  assert.ok(failed.plans.every((e) => e.source === 'last-hour-peak'), JSON.stringify(failed.plans));
});
