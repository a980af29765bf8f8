import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printSummary } from '../../src/cli/print.ts';
import { formatAmount } from '../../src/report/format.ts';
import { printed } from '../helpers/cli.ts';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

test('a tier none of whose requests completed shows – for its TTFT, not 0.0 ms', () => {
  // Every 'huge' request is longer than the model's context, so it is dropped at arrival.
  const trace = writeTrace([
    { t: 0, in: 100, out: 10, tier: 'ok' },
    { t: 0.1, in: 10_000_000, out: 10, tier: 'huge' },
  ]);
  const s = summarize(run(scenarioFor(trace), 'fast'), 0);
  assert.equal(s.tiers?.huge?.requests.completed, 0);
  const out = printed(() => printSummary(s));
  assert.match(out, /tier huge: 0\.00% attained, TTFT p99 –, TPOT p99 –, 1 request$/m);
  assert.match(out, /tier ok: 100% attained, TTFT p99 \d+\.\d ms, TPOT p99 (–|\d+\.\d ms), 1 request$/m);
  // The headline judges each request by its own tier's targets (no untiered requests here).
  assert.match(out, /^SLO \(each request by its tier's targets\): 50\.00% attained$/m);
});

test("with tiers, the headline attainment judges each request by its own tier's targets", () => {
  // Long prompts take longer than the top-level 0.05 s to their first token; the tiers allow 5 s.
  const trace = writeTrace([
    { t: 0, in: 8000, out: 10, tier: 'a' },
    { t: 0, in: 8000, out: 10, tier: 'b' },
    { t: 0, in: 8000, out: 10 },
  ]);
  const s = summarize(run(scenarioFor(trace, { slo: { ttftS: 0.05, tpotS: 10, tiers: { a: { ttftS: 5 }, b: { ttftS: 5 } } } }), 'fast'), 0);
  assert.ok(s.ttft.p50 > 0.05, `TTFT ${s.ttft.p50}`);
  assert.equal(s.slo.attainmentByTier, 2 / 3, 'a and b by their targets; the untiered one misses the top-level TTFT');
  assert.ok(s.slo.attainment < 2 / 3, 'the top-level block still judges all by the top-level targets');
  const out = printed(() => printSummary(s));
  assert.match(out, /^SLO \(each request by its tier's targets; untiered: TTFT ≤ 0\.05 s, TPOT ≤ 10 s\): 66\.66% attained$/m);
});

test('a run without requests prints – for its attainment, not 0 %', () => {
  const trace = writeTrace([{ t: 10, in: 100, out: 10 }]);
  const s = summarize(run(scenarioFor(trace, { endS: 1 }), 'fast'), 0);
  assert.equal(s.requests.total, 0);
  assert.match(printed(() => printSummary(s)), /^SLO \(TTFT ≤ [0-9.]+ s, TPOT ≤ [0-9.]+ s\): –$/m);
});

test('latencies of a second and more print in seconds, and wide cells stay apart', () => {
  // One instance, the second request waits behind the first's long decode.
  const trace = writeTrace([
    { t: 0, in: 100, out: 4000 },
    { t: 0.1, in: 100, out: 10 },
  ]);
  const s = summarize(run(scenarioFor(trace), 'fast'), 0);
  assert.ok(s.e2e.p99 >= 1, `E2E p99 ${s.e2e.p99}`);
  const row = printed(() => printSummary(s)).split('\n').find((l) => l.startsWith('E2E '))!;
  assert.match(row, /^E2E( +\d+(\.\d) ms| +\d+\.\d\d s){4}$/);
  assert.doesNotMatch(row, /\d{4,} ms/);
  // 1e7 s fills its column: still a space before it
  const wide = { ...s, e2e: { ...s.e2e, p99: 12_345_678.9 } };
  assert.match(printed(() => printSummary(wide)), /^E2E .* 12345678\.90 s$/m);
});

test('a fleet amount that is not 0 but rounds to 0.00 is printed to 2 significant digits (a one-request run showed $0.00, 0.00 GPU-h)', () => {
  const s = summarize(run(scenarioFor(writeTrace([{ t: 0, in: 100, out: 10 }])), 'fast'), 0);
  assert.ok(s.fleet.gpuHours > 0 && s.fleet.gpuHours < 0.005);
  const out = printed(() => printSummary(s));
  assert.match(out, new RegExp(`instance-h, ${s.fleet.gpuHours.toPrecision(2).replace('.', '\\.')} GPU-h \\(0\\.00 provisioning\\), \\$${s.fleet.costUsd.toPrecision(2).replace('.', '\\.')}$`, 'm'));
  assert.equal(formatAmount(0), '0.00');
  assert.equal(formatAmount(12.345), '12.35');
  assert.equal(formatAmount(0.00024), '0.00024');
});
