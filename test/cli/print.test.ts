import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printSummary } from '../../src/cli/print.ts';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

function printed(f: () => void): string {
  const write = process.stdout.write;
  let out = '';
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    f();
  } finally {
    process.stdout.write = write;
  }
  return out;
}

test('a tier none of whose requests completed shows – for its TTFT, not 0.0 ms', () => {
  // Every 'huge' request is longer than the model's context, so it is dropped at arrival.
  const trace = writeTrace([
    { t: 0, in: 100, out: 10, tier: 'ok' },
    { t: 0.1, in: 10_000_000, out: 10, tier: 'huge' },
  ]);
  const s = summarize(run(scenarioFor(trace), 'fast'), 0);
  assert.equal(s.tiers?.huge?.requests.completed, 0);
  const out = printed(() => printSummary(s));
  assert.match(out, /tier huge: 0\.0%, TTFT p99 –, 1 request$/m);
  assert.match(out, /tier ok: 100\.0%, TTFT p99 \d+\.\d ms, 1 request$/m);
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
