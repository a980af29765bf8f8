import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keptTransformsNote } from '../../src/cli/util.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { tempDir } from './helpers.ts';

/** What `keptTransformsNote` writes on stderr for a scenario loaded as `--trace F --set …` loads it. */
function note(transforms: string, sets: string[], quiet = false): string {
  const tmp = tempDir();
  try {
    const trace = tmp.file('t.csv', 'arrival_s,input_tokens,output_tokens\n0,10,5\n1,10,5\n');
    const scenario = tmp.file(
      's.yaml',
      [
        'workload:',
        '  synthetic: { durationS: 10, arrivals: { kind: poisson, ratePerS: 1 }, lengths: { kind: lognormal, input: { mu: 5, sigma: 1 }, output: { mu: 4, sigma: 1 } } }',
        `  transforms: ${transforms}`,
        'fleet: { pools: [{ name: h100, model: llama3.1-8b, hardware: h100-80gb, tp: 1, count: 1 }] }',
        'routing: { policy: least-requests }',
        'slo: { ttftS: 1, tpotS: 0.05 }',
      ].join('\n'),
    );
    const { scenario: sc } = loadScenario({ file: scenario, trace: { path: trace }, sets });
    let out = '';
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => ((out += String(chunk)), true)) as typeof process.stderr.write;
    try {
      keptTransformsNote({ trace: trace, set: sets, quiet }, sc.workload);
    } finally {
      process.stderr.write = write;
    }
    return out;
  } finally {
    tmp.cleanup();
  }
}

const DROP = "; --set 'workload.transforms={}' drops them\n";

test('--trace names the scenario transforms it keeps, also when --set gives other transforms keys', () => {
  assert.equal(note('{ compress: 6 }', []), `note: --trace keeps the scenario's workload.transforms (compress: 6)${DROP}`);
  // The reviewer's repro: --set workload.transforms.limit=100 silenced the note, yet compress 6 still applied.
  assert.equal(note('{ compress: 6 }', ['workload.transforms.limit=100']), `note: --trace keeps the scenario's workload.transforms (compress: 6)${DROP}`);
  assert.equal(
    note('{ compress: 6, window: { startS: 60, endS: 600 }, limit: 5 }', ['workload.transforms.limit=100', 'routing.policy=round-robin']),
    `note: --trace keeps the scenario's workload.transforms (window: {"startS":60,"endS":600}, compress: 6)${DROP}`,
  );
  // A quoted segment is read as --set reads it.
  assert.equal(note('{ compress: 6, limit: 5 }', ['workload."transforms".limit=100']), `note: --trace keeps the scenario's workload.transforms (compress: 6)${DROP}`);
});

test('--trace says nothing when the flags set every kept key, replace the transforms or the workload whole, or --quiet', () => {
  assert.equal(note('{ compress: 6 }', ['workload.transforms.compress=2']), '');
  assert.equal(note('{ compress: 6 }', ['workload.transforms={limit: 100}']), '');
  assert.equal(note('{ compress: 6 }', ['workload.transforms={}']), '');
  assert.equal(note('{ compress: 6 }', [], true), '');
});
