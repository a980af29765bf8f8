import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../../src/metrics/summary.ts';
import { writeRunOutputs } from '../../src/metrics/write.ts';
import { run, scenarioFor } from '../helpers/sim.ts';

/** A trace whose label cells are given as written (quoted CSV where they hold a comma or a quote). */
function labelledTrace(rows: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-labels-'));
  writeFileSync(join(dir, 'trace.csv'), 'arrival_s,input_tokens,output_tokens,tier\n' + rows.join('\n') + '\n');
  return join(dir, 'trace.csv');
}

/** RFC 4180 fields of one line (enough for these rows: no line breaks inside cells). */
function fields(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') out.push(cell), (cell = '');
    else cell += c;
  }
  out.push(cell);
  return out;
}

test('requests.csv quotes label cells: a tier with a comma or a quote keeps every row at 15 columns', async () => {
  const res = run(scenarioFor(labelledTrace(['0,100,10,"a,b"', '1,100,10,"x""y"', '2,100,10,plain'])), 'fast');
  const out = mkdtempSync(join(tmpdir(), 'llmfleet-labels-out-'));
  await writeRunOutputs(out, summarize(res, 0), res);
  const lines = readFileSync(join(out, 'requests.csv'), 'utf8').trim().split('\n');
  assert.deepEqual(lines.map((l) => fields(l).length), [15, 15, 15, 15]);
  assert.deepEqual(lines.slice(1).map((l) => fields(l)[3]), ['a,b', 'x"y', 'plain']);
});

test("a tier named __proto__ or constructor is a tier like any other (its own block, judged by the run's targets)", () => {
  for (const tier of ['__proto__', 'constructor']) {
    const s = summarize(run(scenarioFor(labelledTrace([`0,100,10,${tier}`, `1,100,10,${tier}`])), 'fast'), 0);
    assert.ok(Object.hasOwn(s.tiers!, tier), `${tier}: ${JSON.stringify(Object.keys(s.tiers!))}`);
    assert.equal(s.tiers![tier]!.requests.total, 2);
    assert.equal(s.slo.attainmentByTier, s.slo.attainment, tier);
    assert.equal(s.slo.attainment, 1, tier);
  }
});
