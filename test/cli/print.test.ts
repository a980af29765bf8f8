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
