import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../../src/metrics/summary.ts';
import { writeRunOutputs } from '../../src/metrics/write.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';

const twoPools = (trace: string) =>
  scenarioFor(trace, {
    fleet: {
      pools: [
        { name: 'fast', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 },
        { name: 'slow', model: 'llama3.1-8b', hardware: 'l4', count: 1 },
      ],
    },
    routing: { policy: 'round-robin' },
  });

test('with two pools, summary.pools splits the requests by the pool that served them, and requests.csv names it', async () => {
  const trace = writeTrace(Array.from({ length: 20 }, (_, i) => ({ t: i * 0.5, in: 500, out: 100 })));
  const res = simulate(twoPools(trace), '.', { mode: 'fast' }); // the roofline: an L4 is slower
  const s = summarize(res, 0);
  assert.deepEqual(Object.keys(s.pools ?? {}), ['fast', 'slow']);
  const { fast, slow } = s.pools!;
  assert.equal(fast!.requests.total + slow!.requests.total, s.requests.total);
  assert.equal(fast!.requests.total, 10); // round-robin alternates
  assert.ok(slow!.tpot.p50 > fast!.tpot.p50, `an L4 decodes slower than an H100 (${slow!.tpot.p50} vs ${fast!.tpot.p50})`);
  assert.equal(s.models, undefined, 'one model: no per-model block');

  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  await writeRunOutputs(dir, s, res);
  const [head, ...rows] = readFileSync(join(dir, 'requests.csv'), 'utf8').trimEnd().split('\n');
  const cols = head!.split(',');
  assert.equal(cols.at(-1), 'pool');
  for (const row of rows) {
    const cells = row.split(',');
    assert.equal(cells.length, cols.length);
    assert.equal(cells.at(-1), res.fleet.instances[Number(cells[cols.indexOf('instance')])]!.pool);
  }
});

test('with requests for two models, summary.models has a block each; a request dropped before any instance is in no pool', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'llmfleet-test-')), 'trace.csv');
  writeFileSync(path, 'arrival_s,input_tokens,output_tokens,model\n0,10,2,llama3.1-8b\n0.5,10,2,GPT-4\n1,10,2,llama3.1-8b\n');
  const res = run(twoPools(path), 'fast');
  const s = summarize(res, 0);
  assert.deepEqual(Object.keys(s.models ?? {}), ['GPT-4', 'llama3.1-8b']);
  assert.equal(s.models!['GPT-4']!.requests.dropped, 1);
  assert.equal(s.models!['llama3.1-8b']!.requests.completed, 2);
  assert.equal(s.pools!.fast!.requests.total + s.pools!.slow!.requests.total, 2);

  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  await writeRunOutputs(dir, s, res);
  const dropped = readFileSync(join(dir, 'requests.csv'), 'utf8').split('\n')[2]!;
  assert.match(dropped, /^1,0\.500000,GPT-4,,-1,10,2,dropped,unknown-model,,,,,,$/);
});

test('a run that drains long after its last arrival says so in a note; one that keeps up does not', () => {
  const heavy = writeTrace(Array.from({ length: 200 }, (_, i) => ({ t: i * 0.005, in: 100, out: 4000 })));
  const s = summarize(run(scenarioFor(heavy), 'fast'), 0);
  const note = s.notes.find((n) => n.includes('after the last arrival'));
  assert.ok(note, `notes: ${JSON.stringify(s.notes)}`);
  assert.match(note, /^the run went on \d+ s after the last arrival \(at 1 s\) to finish the requests in flight: \d+% of the billed time/);
  const light = writeTrace(Array.from({ length: 200 }, (_, i) => ({ t: i, in: 100, out: 10 })));
  assert.deepEqual(summarize(run(scenarioFor(light), 'fast'), 0).notes, []);
});
