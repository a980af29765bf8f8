import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Summary } from '../../src/metrics/summary.ts';
import { summarize } from '../../src/metrics/summary.ts';
import { formatAttainment } from '../../src/report/format.ts';
import { comparisonTable, formatComparisonTable, frontierNames } from '../../src/report/table.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { tierScenario } from './fixture.ts';

const d = (p50: number, p99: number) => ({ mean: p50, p50, p90: p99, p95: p99, p99 });

/** A real summary (so every field the type requires is there) with what the table reads set by hand. */
const REAL = summarize(simulate(tierScenario({ slo: { ttftS: 1, tpotS: 0.1, tiers: {} } }), '.', { mode: 'fast' }), 0);

function summary(o: { cost: number; gpuH: number; slo: number; ttft: number; completed?: number; dropped?: number; tiers?: Record<string, number> }): Summary {
  const set = <T extends Omit<Summary, 'tiers' | 'sim' | 'fleet' | 'throughput' | 'engine' | 'scenario' | 'seed'>>(b: T, att: number): T => ({
    ...b,
    requests: { ...b.requests, total: 100, completed: o.completed ?? 100, dropped: o.dropped ?? 0, unfinished: 0 },
    ttft: d(o.ttft, o.ttft * 4),
    tpot: d(0.02, 0.05),
    e2e: d(1, 5),
    slo: { ...b.slo, attainment: att },
  });
  const s = structuredClone(REAL);
  delete s.tiers;
  delete s.slo.attainmentByTier; // `slo` below is then the headline
  return {
    ...set(s, o.slo),
    fleet: { ...s.fleet, gpuHours: o.gpuH, costUsd: o.cost },
    ...(o.tiers ? { tiers: Object.fromEntries(Object.entries(o.tiers).map(([k, v]) => [k, set({ ...s, requests: s.requests }, v)])) } : {}),
  } as Summary;
}

const col = (t: ReturnType<typeof comparisonTable>, key: string) => t.columns.findIndex((c) => c.key === key);
const bestOf = (t: ReturnType<typeof comparisonTable>, key: string) => t.rows.filter((r) => r.cells[col(t, key)]!.best).map((r) => r.name);

test('marks the lowest cost, GPU-hours, latency and drops and the highest SLO attainment', () => {
  const t = comparisonTable([
    { name: 'cheap', summary: summary({ cost: 10, gpuH: 4, slo: 0.8, ttft: 0.3, dropped: 5 }) },
    { name: 'fast', summary: summary({ cost: 20, gpuH: 8, slo: 0.99, ttft: 0.1, dropped: 0 }) },
    { name: 'mid', summary: summary({ cost: 15, gpuH: 6, slo: 0.9, ttft: 0.2, dropped: 1 }) },
  ]);
  assert.deepEqual(bestOf(t, 'cost'), ['cheap']);
  assert.deepEqual(bestOf(t, 'gpuHours'), ['cheap']);
  assert.deepEqual(bestOf(t, 'slo'), ['fast']);
  assert.deepEqual(bestOf(t, 'ttftP50'), ['fast']);
  assert.deepEqual(bestOf(t, 'ttftP99'), ['fast']);
  assert.deepEqual(bestOf(t, 'drops'), ['fast']);
  const text = formatComparisonTable(t);
  assert.match(text, /^cheap\s+\$10\.00\*/m);
  assert.match(text, /^fast\s+\$20\.00 /m);
  assert.match(text, /99\.00%\*/);
  assert.doesNotMatch(text, /unfinished/, 'no unfinished column when every variant finished everything');
});

test('frontierNames lists the variants no other beats on both cost and SLO, cheapest first', () => {
  const e = [
    { name: 'fast', summary: summary({ cost: 20, gpuH: 8, slo: 0.99, ttft: 0.1 }) },
    { name: 'worse', summary: summary({ cost: 16, gpuH: 6, slo: 0.85, ttft: 0.2 }) },
    { name: 'cheap', summary: summary({ cost: 10, gpuH: 4, slo: 0.9, ttft: 0.3 }) },
  ];
  assert.deepEqual(frontierNames(e), ['cheap', 'fast']);
});

test('values that print the same are tied and both marked', () => {
  const t = comparisonTable([
    { name: 'a', summary: summary({ cost: 6.0301, gpuH: 1, slo: 1, ttft: 0.1 }) },
    { name: 'b', summary: summary({ cost: 6.0299, gpuH: 1, slo: 1, ttft: 0.1 }) },
    { name: 'c', summary: summary({ cost: 6.04, gpuH: 1, slo: 0.5, ttft: 0.1 }) },
  ]);
  assert.deepEqual(bestOf(t, 'cost'), ['a', 'b']);
  assert.deepEqual(bestOf(t, 'slo'), ['a', 'b']);
});

test('a variant that completed nothing shows no latency and cannot win a latency column', () => {
  const t = comparisonTable([
    { name: 'dead', summary: summary({ cost: 1, gpuH: 1, slo: 0, ttft: 0, completed: 0, dropped: 100 }) },
    { name: 'alive', summary: summary({ cost: 2, gpuH: 2, slo: 0.9, ttft: 0.5 }) },
  ]);
  const dead = t.rows[0]!.cells[col(t, 'ttftP50')]!;
  assert.equal(dead.text, '–');
  assert.equal(dead.best, false);
  assert.deepEqual(bestOf(t, 'ttftP50'), ['alive']);
});

test('tier columns come from the union of tier names, and a variant without a tier shows a dash', () => {
  const t = comparisonTable([
    { name: 'a', summary: summary({ cost: 1, gpuH: 1, slo: 0.9, ttft: 0.1, tiers: { gold: 0.7, bronze: 0.95 } }) },
    { name: 'b', summary: summary({ cost: 1, gpuH: 1, slo: 0.9, ttft: 0.1, tiers: { gold: 0.8 } }) },
  ]);
  assert.deepEqual(t.columns.filter((c) => c.key.startsWith('slo:')).map((c) => c.title), ['SLO bronze', 'SLO gold']);
  assert.deepEqual(bestOf(t, 'slo:gold'), ['b']);
  assert.deepEqual(bestOf(t, 'slo:bronze'), ['a']);
  assert.equal(t.rows[1]!.cells[col(t, 'slo:bronze')]!.text, '–');
});

test('a variant that left requests unfinished shows them in their own column, and latencies are flagged as finished-only', () => {
  const left = summary({ cost: 1, gpuH: 1, slo: 0.3, ttft: 0.05 });
  left.requests = { ...left.requests, completed: 30, unfinished: 70 };
  const t = comparisonTable([
    { name: 'one', summary: left },
    { name: 'two', summary: summary({ cost: 2, gpuH: 2, slo: 0.9, ttft: 0.5 }) },
  ]);
  assert.deepEqual(t.rows.map((r) => r.cells[col(t, 'unfinished')]!.text), ['70', '0']);
  assert.deepEqual(bestOf(t, 'unfinished'), ['two']);
  assert.match(formatComparisonTable(t), /latencies cover finished requests only/);
});

test('the Pareto frontier agrees with the ties the table prints (cents, 0.01 % of attainment)', () => {
  const e = [
    { name: 'rr', summary: summary({ cost: 23.93, gpuH: 1, slo: 1, ttft: 0.1 }) },
    { name: 'lk', summary: summary({ cost: 23.93003, gpuH: 1, slo: 1, ttft: 0.1 }) },
    { name: 'near', summary: summary({ cost: 23.93, gpuH: 1, slo: 0.99991, ttft: 0.1 }) },
  ];
  assert.deepEqual(frontierNames(e), ['rr', 'lk']);
  const t = comparisonTable(e);
  assert.deepEqual(bestOf(t, 'cost'), ['rr', 'lk', 'near']);
  assert.deepEqual(bestOf(t, 'slo'), ['rr', 'lk']);
  assert.deepEqual(t.rows.map((r) => r.cells[col(t, 'slo')]!.text), ['100%', '100%', '99.99%']);
});

test('attainment prints to 0.01 %, rounded down: a run with a miss never shows 100 %', () => {
  assert.equal(formatAttainment(1), '100%');
  assert.equal(formatAttainment(0.99971), '99.97%');
  assert.equal(formatAttainment(0.999999), '99.99%');
  assert.equal(formatAttainment(0.29), '29.00%');
  assert.equal(formatAttainment(0), '0.00%');
});

test('a prefix-hit column appears when a variant ran with engine.prefixCache; one without it shows a dash', () => {
  const base = summary({ cost: 1, gpuH: 1, slo: 0.9, ttft: 0.1 });
  const withCache = (hitRate: number): Summary => ({ ...base, engine: { ...base.engine, prefixCache: { queryTokens: 100, hitTokens: 100 * hitRate, hitRate } } });
  assert.equal(col(comparisonTable([{ name: 'a', summary: base }]), 'prefixHitRate'), -1);
  const t = comparisonTable([
    { name: 'off', summary: base },
    { name: 'rr', summary: withCache(0.5) },
    { name: 'aware', summary: withCache(0.7) },
  ]);
  assert.deepEqual(t.rows.map((r) => r.cells[col(t, 'prefixHitRate')]!.text), ['–', formatAttainment(0.5), formatAttainment(0.7)]);
  assert.deepEqual(bestOf(t, 'prefixHitRate'), ['aware']);
});
