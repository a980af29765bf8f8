import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printSummary } from '../../src/cli/print.ts';
import { printed } from '../helpers/cli.ts';
import { summarize, type Summary } from '../../src/metrics/summary.ts';
import { writeRunOutputs } from '../../src/metrics/write.ts';
import { comparisonTable } from '../../src/report/table.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { scenarioSchema } from '../../src/scenario/schema.ts';
import { AFTER_END_LOOKAHEAD, simulate, type SimResult } from '../../src/sim/simulator.ts';
import { ConfigError } from '../../src/util/errors.ts';
import { run, scenarioFor, writeTrace, type Req } from '../helpers/sim.ts';

/** requests.csv of a run as rows of cells by column name. */
async function requestsCsv(res: SimResult, s: Summary): Promise<Record<string, string>[]> {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-edge-'));
  await writeRunOutputs(dir, s, res);
  const [head, ...rows] = readFileSync(join(dir, 'requests.csv'), 'utf8').trimEnd().split('\n');
  const names = head!.split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((v, j) => [names[j]!, v])));
}

test('a run whose completed requests all have one output token has no TPOT: count 0, – in the tables, never best', async () => {
  const reqs: Req[] = Array.from({ length: 6 }, (_, i) => ({ t: i * 0.2, in: 100 + i, out: 1 }));
  const res = run(scenarioFor(writeTrace(reqs)), 'fast');
  const s = summarize(res, 0);
  assert.equal(s.requests.completed, 6);
  const out = printed(() => printSummary(s));
  assert.match(out, /^TPOT\s+–\s+–\s+–\s+–$/m);
  assert.match(out, /^TTFT\s+\d+\.\d ms/m, 'other latencies still print');
  // compare: the 0 written for the empty sample is not a value, so it cannot win the column.
  const other = summarize(run(scenarioFor(writeTrace(reqs.map((r) => ({ ...r, out: 20 })))), 'fast'), 0);
  assert.ok(other.tpot.count > 0);
  const t = comparisonTable([{ name: 'one', summary: s }, { name: 'many', summary: other }]);
  for (const key of ['tpotP50', 'tpotP99']) {
    const j = t.columns.findIndex((c) => c.key === key);
    assert.equal(t.rows[0]!.cells[j]!.text, '–', key);
    assert.equal(t.rows[0]!.cells[j]!.best, false, key);
    assert.equal(t.rows[1]!.cells[j]!.best, true, key);
  }
  const rows = await requestsCsv(res, s);
  assert.ok(rows.every((r) => r.status === 'completed' && r.tpot_s === '' && r.ttft_s !== ''), 'tpot_s empty for one-token rows');
  assert.equal(s.tpot.count, 0, 'summary.json: no request has a TPOT');
});

test('requests.csv: tpot_s is empty for one-token rows, so its mean is summary.json tpot.mean over tpot.count rows', async () => {
  const reqs: Req[] = Array.from({ length: 10 }, (_, i) => ({ t: i * 0.5, in: 200, out: i % 2 === 0 ? 1 : 30 }));
  const res = run(scenarioFor(writeTrace(reqs)), 'fast');
  const s = summarize(res, 0);
  const rows = await requestsCsv(res, s);
  const given = rows.filter((r) => r.tpot_s !== '');
  assert.deepEqual(given.map((r) => r.output_tokens), ['30', '30', '30', '30', '30']);
  const mean = given.reduce((a, r) => a + Number(r.tpot_s), 0) / given.length;
  assert.ok(Math.abs(mean - s.tpot.mean) < 1e-6, `${mean} vs ${s.tpot.mean}`);
  assert.equal(s.tpot.count, 5);
});

test('endS: requests arriving after it are counted in requests.afterEnd and named in a note; none without endS', () => {
  const reqs: Req[] = Array.from({ length: 100 }, (_, i) => ({ t: i * 0.5, in: 100, out: 20 }));
  const trace = writeTrace(reqs);
  for (const mode of ['fast', 'step'] as const) {
    const s = summarize(run(scenarioFor(trace, { endS: 10.3 }), mode), 0);
    assert.equal(s.requests.total, 21, mode); // arrivals 0, 0.5, …, 10.0
    assert.equal(s.requests.afterEnd, 79, mode);
    assert.equal(s.requests.afterEndComplete, true, mode);
    assert.ok(s.notes.some((n) => /endS = 10\.3 s: 79 requests of the workload arrive after it: not replayed/.test(n)), s.notes.join('\n'));
  }
  // Cut after the last arrival: nothing left out, no note.
  const all = summarize(run(scenarioFor(trace, { endS: 1000 }), 'fast'), 0);
  assert.equal(all.requests.afterEnd, 0);
  assert.ok(!all.notes.some((n) => n.startsWith('endS')));
  // A bad row past endS does not fail the run (it never did): it ends the count, which the note says.
  const bad = writeTrace(reqs);
  writeFileSync(bad, readFileSync(bad, 'utf8') + '60,-5,20\n');
  const cut = summarize(run(scenarioFor(bad, { endS: 10.3 }), 'fast'), 0);
  assert.deepEqual([cut.requests.total, cut.requests.afterEnd, cut.requests.afterEndComplete], [21, 79, false]);
  assert.ok(cut.notes.some((n) => /at least 79 requests .*counting stopped at a row it could not read: .*input_tokens/.test(n)), cut.notes.join('\n'));
  // Without endS the key is absent (summary.json of a normal run is unchanged).
  const full = summarize(run(scenarioFor(trace), 'fast'), 0);
  assert.ok(!('afterEnd' in full.requests) && !('afterEndComplete' in full.requests));
});

test('endS: a workload going on far past it is not read to its end; the count is a lower bound and says so', () => {
  const sc = scenarioSchema.parse({
    name: 't',
    endS: 0.05,
    workload: { synthetic: { durationS: 60, arrivals: { kind: 'poisson', ratePerS: 2000 }, lengths: { kind: 'lognormal', input: { mu: 4, sigma: 0 }, output: { mu: 2, sigma: 0 } } } },
    fleet: { pools: [{ model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }] },
  });
  const s = summarize(simulate(sc, '.', { mode: 'fast' }), 0);
  assert.equal(s.requests.afterEndComplete, false);
  assert.equal(s.requests.afterEnd, AFTER_END_LOOKAHEAD + 1);
  assert.ok(s.notes.some((n) => /the workload continues past it \(more than 100,000 requests arrive later; not read to its end\)/.test(n)), s.notes.join('\n'));
});

test('an unfinished request keeps what it got to: instance, queue time, TTFT and preemptions (fast = step); a dropped one stays blank', async () => {
  // KV for 1024 tokens and two sequences at a time: 0 and 1 run together until 1 is preempted; 2 waits unscheduled.
  const trace = writeTrace([
    { t: 0, in: 100, out: 600 },
    { t: 0.001, in: 100, out: 600 },
    { t: 0.002, in: 100, out: 600 },
    { t: 0.003, in: 10_000_000, out: 10 },
    { t: 50, in: 100, out: 10 },
  ]);
  const csv: string[] = [];
  for (const mode of ['fast', 'step'] as const) {
    const res = run(scenarioFor(trace, { endS: 2.5, engine: { kvCapacityTokens: 1024, maxNumSeqs: 2 } }), mode);
    const s = summarize(res, 0);
    assert.deepEqual([s.requests.unfinished, s.requests.dropped], [3, 1], mode);
    const rows = await requestsCsv(res, s);
    csv.push(JSON.stringify(rows));
    const [r0, r1, r2, r3] = rows;
    // Running with its first token.
    assert.deepEqual([r0!.status, r0!.instance, r0!.queue_s, r0!.tpot_s, r0!.e2e_s, r0!.preemptions], ['unfinished', '0', '0.000000', '', '', '0'], mode);
    assert.ok(Number(r0!.ttft_s) > 0, mode);
    // Scheduled, given its first token, then preempted: waiting again.
    assert.deepEqual([r1!.status, r1!.instance, r1!.preemptions, r1!.e2e_s], ['unfinished', '0', '1', ''], mode);
    assert.ok(Number(r1!.queue_s) >= 0 && r1!.queue_s !== '' && Number(r1!.ttft_s) > 0, mode);
    // Waiting at the instance, never scheduled: no queue time or TTFT yet.
    assert.deepEqual([r2!.status, r2!.instance, r2!.queue_s, r2!.ttft_s, r2!.preemptions], ['unfinished', '0', '', '', '0'], mode);
    // Dropped at arrival: instance -1 and no latencies, as before.
    assert.deepEqual([r3!.status, r3!.instance, r3!.queue_s, r3!.ttft_s, r3!.tpot_s, r3!.e2e_s, r3!.preemptions], ['dropped', '-1', '', '', '', '', ''], mode);
  }
  assert.equal(csv[0], csv[1], 'fast and step write the same rows');
});

test('a window whose endS is not after its startS names both values', () => {
  assert.throws(
    () => loadScenario({ sets: ['workload.transforms={window: {startS: 10, endS: 10}}'] }),
    (e: unknown) => e instanceof ConfigError && /workload\.transforms\.window\.endS: expected > startS \(10\), got 10$/.test(e.message),
  );
});
