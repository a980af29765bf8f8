import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../../src/metrics/summary.ts';
import { run, scenarioFor } from '../helpers/sim.ts';

test('requests dropped for a model no pool serves are named in a note with the mapping that fixes it', () => {
  // BurstGPT-like labels against a llama3.1-8b fleet.
  const path = join(mkdtempSync(join(tmpdir(), 'llmfleet-test-')), 'trace.csv');
  writeFileSync(path, 'arrival_s,input_tokens,output_tokens,model\n0,10,2,ChatGPT\n0.5,10,2,GPT-4\n1,10,2,ChatGPT\n1.5,10,2,llama3.1-8b\n');
  const s = summarize(run(scenarioFor(path), 'fast'), 0);
  assert.equal(s.requests.dropReasons['unknown-model'], 3);
  assert.deepEqual(s.notes, [
    'requests naming models no pool serves were dropped: ChatGPT (2), GPT-4 (1); the pools serve llama3.1-8b. ' +
      "Map them with --set workload.transforms.model=llama3.1-8b (every request) or --set 'workload.transforms.model={ChatGPT: llama3.1-8b}'",
  ]);
  const mapped = summarize(run(scenarioFor(path, { workload: { trace: { path, format: 'csv' }, transforms: { model: 'llama3.1-8b' } } }), 'fast'), 0);
  assert.equal(mapped.requests.completed, 4);
  assert.deepEqual(mapped.notes, []);
});
