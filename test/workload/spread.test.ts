import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Rng } from '../../src/util/rng.ts';
import type { RequestSource, TraceRequest } from '../../src/workload/types.ts';
import { applyTransforms, spreadTies } from '../../src/workload/transforms.ts';
import { openWorkload, workloadSchema } from '../../src/workload/schema.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';
import { all, tempDir } from './helpers.ts';

function src(times: number[], deadlineSlackS?: number): RequestSource {
  return times.map((t, i) => ({ id: i, arrivalS: t, inputTokens: 10 + i, outputTokens: 1 + i, ...(deadlineSlackS === undefined ? {} : { deadlineS: t + deadlineSlackS }) }));
}

const times = (reqs: TraceRequest[]) => reqs.map((r) => r.arrivalS);

function assertSorted(reqs: TraceRequest[]): void {
  reqs.forEach((r, i) => {
    assert.equal(r.id, i);
    if (i > 0) assert.ok(r.arrivalS >= reqs[i - 1]!.arrivalS, `arrival ${i} goes back: ${reqs[i - 1]!.arrivalS} → ${r.arrivalS}`);
  });
}

test('requests sharing an arrival time are spread evenly over [t, t + spreadS), deadlines with them', () => {
  const out = all(spreadTies(src([0, 0, 0, 0, 2, 2, 5], 10), 1));
  assert.deepEqual(times(out), [0, 0.25, 0.5, 0.75, 2, 2.5, 5]);
  assert.deepEqual(out.map((r) => r.deadlineS! - r.arrivalS), [10, 10, 10, 10, 10, 10, 10]);
  assert.deepEqual(times(all(spreadTies(src([3, 3, 3, 3]), 0.5))), [3, 3.125, 3.25, 3.375], 'the last group takes the full spreadS');
});

test('spreading keeps trace order, re-numbers ids, is deterministic and leaves its input alone', () => {
  const input = src([1, 1, 1, 4, 4, 7]) as TraceRequest[];
  const before = structuredClone(input);
  const s = spreadTies(input, 1);
  const a = all(s);
  assert.deepEqual(a.map((r) => r.inputTokens), [10, 11, 12, 13, 14, 15]);
  assertSorted(a);
  assert.deepEqual(all(s), a, 'a second pass gives the same requests');
  assert.deepEqual(all(spreadTies(input, 1)), a);
  assert.deepEqual(input, before);
});

test('a group is clamped before the next distinct timestamp when spreadS is larger than the gap', () => {
  // 4 ties 0.5 s before the next time: over [0, 0.5), not [0, 1); the pair at 0.5 takes its full 1 s (gap 9.5).
  const out = all(spreadTies(src([0, 0, 0, 0, 0.5, 0.5, 10]), 1));
  assert.deepEqual(times(out), [0, 0.125, 0.25, 0.375, 0.5, 1, 10]);
  assertSorted(out);
  // Many ties, tiny gaps and a large spreadS: still sorted, never past the next timestamp.
  const dense = all(spreadTies(src(Array.from({ length: 300 }, (_, i) => 1000 + Math.floor(i / 7) * 1e-3)), 60));
  assertSorted(dense);
  for (let i = 0; i < dense.length; i += 7) assert.equal(dense[i]!.arrivalS, 1000 + (i / 7) * 1e-3, `group ${i / 7} starts at its own time`);
});

test('single requests keep their time', () => {
  const input = src([0, 0.5, 1, 7.25], 3) as TraceRequest[];
  assert.deepEqual(all(spreadTies(input, 1)), input);
  assert.deepEqual(all(applyTransforms(input, { spreadS: 5 }, new Rng(1))), input);
});

test('spreading streams: it holds one group and reads one request past it', () => {
  let read = 0;
  const pairs: RequestSource = {
    *[Symbol.iterator]() {
      for (let i = 0; i < 1_000_000; i++) {
        read++;
        yield { id: i, arrivalS: Math.floor(i / 2), inputTokens: 1, outputTokens: 1 };
      }
    },
  };
  assert.deepEqual(times(all(applyTransforms(pairs, { spreadS: 1, limit: 3 }, new Rng(1)))), [0, 0.5, 1]);
  assert.ok(read <= 5, `read ${read}`);
});

test('spreadS works in trace seconds, before window and compress', () => {
  // Spread first: [0, 0.5, 2, 2.5], then halved.
  assert.deepEqual(times(all(applyTransforms(src([0, 0, 2, 2]), { spreadS: 1, compress: 2 }, new Rng(1)))), [0, 0.25, 1, 1.25]);
  // A window cuts the spread trace: the group at 1 spreads to [1, 1.5), and the window [1.25, 3) keeps 1.5 re-based.
  assert.deepEqual(times(all(applyTransforms(src([0, 0, 1, 1, 3]), { spreadS: 1, window: { startS: 1.25, endS: 3 } }, new Rng(1)))), [0.25]);
  // With rateScale > 1 the copies land in the gaps the spread opened, order kept.
  const scaled = all(applyTransforms(src([0, 0, 0, 1, 1, 1, 2]), { spreadS: 1, compress: 2, rateScale: 2 }, new Rng(3)));
  assert.equal(scaled.length, 14);
  assertSorted(scaled);
  const originals = times(scaled).filter((_, i) => i % 2 === 0);
  [0, 1 / 6, 1 / 3, 0.5, 0.5 + 1 / 6, 0.5 + 1 / 3, 1].forEach((t, i) => assert.ok(Math.abs(originals[i]! - t) < 1e-12, `original ${i} at ${originals[i]}, expected ${t}`));
  // Through the scenario schema: the key is validated and applied.
  const dir = tempDir();
  try {
    const path = dir.file('t.csv', 'arrival_s,input_tokens,output_tokens\n0,10,5\n0,10,5\n4,10,5\n');
    const spec = workloadSchema.parse({ trace: { path, format: 'csv' }, transforms: { spreadS: 2, compress: 2 } });
    assert.deepEqual(times(all(openWorkload(spec, new Rng(1), dir.dir))), [0, 0.5, 2]);
  } finally {
    dir.cleanup();
  }
});

/** 200 requests at whole seconds, 4 a second (`frac` added to every time when given). */
function tiedTrace(frac = 0): string {
  return writeTrace(Array.from({ length: 200 }, (_, i) => ({ t: Math.floor(i / 4) + frac, in: 50, out: 2 })));
}

const TIE_NOTE = /^workload\.trace \(.*\): every arrival is a whole second and 100 % of the 200 requests read share their arrival time with another: .*--set workload\.transforms\.spreadS=1 /;

test('a run over a whole-second trace with ties carries a note suggesting spreadS, not over a fine-grained one', () => {
  const tied = run(scenarioFor(tiedTrace()), 'fast');
  assert.equal(tied.notes.filter((n) => TIE_NOTE.test(n)).length, 1, JSON.stringify(tied.notes));
  // The same ties at fractional times, or whole seconds without ties, or spreadS given: no note.
  assert.deepEqual(run(scenarioFor(tiedTrace(0.25)), 'fast').notes, []);
  assert.deepEqual(run(scenarioFor(writeTrace(Array.from({ length: 200 }, (_, i) => ({ t: i, in: 50, out: 2 })))), 'fast').notes, []);
  const fine = writeTrace(Array.from({ length: 200 }, (_, i) => ({ t: i * 0.137, in: 50, out: 2 })));
  assert.deepEqual(run(scenarioFor(fine), 'fast').notes, []);
  const path = tiedTrace();
  const spread = run(scenarioFor(path, { workload: { trace: { path, format: 'csv' }, transforms: { spreadS: 1 } } }), 'fast');
  assert.deepEqual(spread.notes, []);
  // An offline batch (every request at 0) is not a clock problem; nor are a few requests.
  assert.deepEqual(run(scenarioFor(writeTrace(Array.from({ length: 200 }, () => ({ t: 0, in: 50, out: 2 })))), 'fast').notes, []);
  assert.deepEqual(run(scenarioFor(writeTrace([0, 0, 1, 1].map((t) => ({ t, in: 50, out: 2 })))), 'fast').notes, []);
});

test('the whole-second note comes with BurstGPT rows read through openWorkload, counted over the latest pass', () => {
  const dir = tempDir();
  try {
    const rows = Array.from({ length: 150 }, (_, i) => `${100 + Math.floor(i / 3)},ChatGPT,20,5,25,Conversation log`);
    const path = dir.file('b.csv', `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n${rows.join('\n')}\n`);
    const w = openWorkload(workloadSchema.parse({ trace: { path, format: 'burstgpt' } }), new Rng(1), dir.dir);
    assert.equal(all(w).length, 150);
    const notes = w.notes?.() ?? [];
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /100 % of the 150 requests read share their arrival time/);
    // A pass that read only a few rows says nothing.
    const it = w[Symbol.iterator]();
    it.next();
    it.return?.();
    assert.deepEqual(w.notes?.(), []);
  } finally {
    dir.cleanup();
  }
});

test('a bad spreadS is refused with exit 2 and one line naming the field', () => {
  const dir = tempDir();
  try {
    const trace = tiedTrace();
    const out = join(dir.dir, 'o');
    for (const [v, msg] of [
      ['0', 'expected > 0, got 0'],
      ['-1', 'expected > 0, got -1'],
      ['abc', 'expected a value of type number, got "abc"'],
      ['1e9', 'expected ≤ 86400 s'],
    ] as const) {
      const r = runCli(['simulate', '--trace', trace, '--set', `workload.transforms.spreadS=${v}`, '--out', out, '--no-report', '--quiet']);
      const err = refusedInOneLine(r, `spreadS=${v}`);
      assert.ok(err.includes(`workload.transforms.spreadS: ${msg}`), err);
    }
    const scenario = dir.file('s.yaml', `workload:\n  trace: { path: ${trace} }\n  transforms: { spreadS: 0 }\nfleet: { pools: [{ name: h, model: llama3.1-8b, hardware: h100-80gb, count: 1 }] }\n`);
    const r = runCli(['simulate', '--scenario', scenario, '--out', out, '--no-report', '--quiet']);
    assert.match(refusedInOneLine(r, 'scenario file'), /s\.yaml:3 workload\.transforms\.spreadS: expected > 0, got 0\n$/);
  } finally {
    dir.cleanup();
  }
});
