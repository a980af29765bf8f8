import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { networkDelay } from '../../../src/sim/simulator.ts';
import { outcomes, run, scenarioFor } from '../../helpers/sim.ts';

/** A canonical trace with an origin region per request. */
function regionTrace(rows: { t: number; in: number; out: number; region: string }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-net-'));
  const path = join(dir, 'trace.csv');
  writeFileSync(path, 'arrival_s,input_tokens,output_tokens,region\n' + rows.map((r) => `${r.t},${r.in},${r.out},${r.region}`).join('\n') + '\n');
  return path;
}

// One instance, in east; a west pool with no instance. Every request is served in east.
const rows = [
  { t: 0, in: 100, out: 1, region: 'west' },
  { t: 10, in: 100, out: 1, region: 'east' },
  { t: 20, in: 100, out: 3, region: 'central' },
];
const pools = {
  pools: [
    { name: 'east', region: 'east', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 },
    { name: 'west', region: 'west', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 0 },
  ],
};
const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

test('a request served outside its own region pays the network delay in TTFT and E2E; one served at home does not', () => {
  const sc = scenarioFor(regionTrace(rows), { fleet: pools, network: { crossRegionS: 0.05, latencyS: { central: { east: 0.2 } } } });
  for (const mode of ['fast', 'step'] as const) {
    const res = run(sc, mode);
    // Prefill of 100 tokens: 0.001 + 1e-5 · 100 = 0.002 s (linear test perf model); one output token ends with it.
    close(res.log.ttft[0]!, 0.05 + 0.002, `${mode} west → east (crossRegionS)`);
    close(res.log.e2e[0]!, 0.05 + 0.002, `${mode} west → east e2e`);
    close(res.log.ttft[1]!, 0.002, `${mode} east → east`);
    // central → east from the matrix: 0.2 s, then prefill, then two decode steps at context 101 and 102.
    const decode = 0.005 + 1e-4 + 1e-6 * 101 + (0.005 + 1e-4 + 1e-6 * 102);
    close(res.log.ttft[2]!, 0.2 + 0.002, `${mode} central → east (matrix)`);
    close(res.log.e2e[2]!, 0.2 + 0.002 + decode, `${mode} central → east e2e`);
  }
});

test('no network section and a zero delay give identical runs', () => {
  const plain = run(scenarioFor(regionTrace(rows), { fleet: pools }), 'fast');
  const zero = run(scenarioFor(regionTrace(rows), { fleet: pools, network: { crossRegionS: 0 } }), 'fast');
  assert.deepEqual(outcomes(zero), outcomes(plain));
  assert.equal(zero.events, plain.events);
  assert.deepEqual(zero.timeline.rows, plain.timeline.rows);
});

test('a request in flight to an instance that stopped meanwhile is routed again on arrival there', () => {
  // The east instance drains at 0.01 s while the west request (sent at 0) is still on the wire (0.05 s); a west
  // instance is ready from 0.01 s, so at 0.05 s the request is routed again, to west (home: no second delay).
  const sc = scenarioFor(regionTrace([{ t: 0, in: 100, out: 1, region: 'west' }]), {
    fleet: { ...pools, provisioning: { vmAcquireS: 0, modelLoadS: 0 } },
    network: { crossRegionS: 0.05 },
    scaling: {
      policy: 'scheduled',
      actions: [
        { atS: 0.01, action: 'drain', pool: 'east' },
        { atS: 0.01, action: 'add', pool: 'west' },
      ],
    },
  });
  const res = run(sc, 'step');
  assert.ok(res.log.isDone(0));
  assert.equal(res.log.instance[0], 1);
  close(res.log.ttft[0]!, 0.05 + 0.002, 'bounced request');
});

test('networkDelay: the matrix wins, then crossRegionS between two named regions, else 0', () => {
  const d = networkDelay({ crossRegionS: 0.05, latencyS: { a: { a: 0.001, b: 0.3 } } });
  assert.equal(d('a', 'b'), 0.3);
  assert.equal(d('a', 'a'), 0.001);
  assert.equal(d('b', 'a'), 0.05);
  assert.equal(d('b', 'b'), 0);
  assert.equal(d('', 'a'), 0);
  assert.equal(networkDelay(undefined)('a', 'b'), 0);
});

test('a latency matrix naming a serving region no pool has is a ConfigError with the path', () => {
  const sc = scenarioFor(regionTrace(rows), { fleet: pools, network: { latencyS: { west: { eats: 0.1 } } } });
  assert.throws(() => run(sc, 'fast'), (e: Error) => e.name === 'ConfigError' && /network\.latencyS\.west\.eats/.test(e.message) && /central|east/.test(e.message));
});
