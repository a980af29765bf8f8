/**
 * Regressions for input handling: one header normaliser shared by format detection and every CSV reader,
 * zero token counts written as `00`, and which skipped trace rows a workload counts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { Rng } from '../../src/util/rng.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { detectFormat, openTrace } from '../../src/workload/trace.ts';
import { openWorkload, workloadSchema } from '../../src/workload/schema.ts';
import { AZURE_SKIP_NO_OUTPUT } from '../../src/workload/readers/azure.ts';
import { BURSTGPT_SKIP_FAILED } from '../../src/workload/readers/burstgpt.ts';
import type { TraceFormat } from '../../src/workload/types.ts';
import { all, assertConfigError, tempDir } from './helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

const STAMP = '2023-11-16 18:15:46.6805900';

test('detectFormat and the readers agree on headers with quoted names, spaces, a BOM and CRLF', () => {
  const cases: [TraceFormat, string, string][] = [
    ['azure', '"TIMESTAMP","ContextTokens","GeneratedTokens"', `${STAMP},10,20`],
    ['azure', 'TIMESTAMP,"ContextTokens",GeneratedTokens', `${STAMP},10,20`],
    ['azure', ' "TIMESTAMP" , ContextTokens ,"GeneratedTokens" ', `${STAMP},10,20`],
    ['azure', '\ufeff"TIMESTAMP","ContextTokens","GeneratedTokens"', `"${STAMP}","10","20"`],
    ['azure', 'TIMESTAMP,ContextTokens,GeneratedTokens', ` ${STAMP} , 10 ,"20"`],
    ['burstgpt', ' "Timestamp" ,"Model", "Request tokens" ,"Response tokens"', '0,"m",10,20'],
    ['splitwise', '"arrival_timestamp" , "prompt_size","token_size"', '0,10,20'],
    ['csv', '\ufeff "arrival_s", "input_tokens" ,output_tokens', '0,10,20'],
  ];
  cases.forEach(([format, header, row], i) => {
    for (const eol of ['\n', '\r\n']) {
      const p = tmp.file(`h${i}.csv`, `${header}${eol}${row}${eol}`);
      assert.equal(detectFormat(p), format, `${header} (${JSON.stringify(eol)})`);
      const reqs = all(openTrace(p, format));
      assert.deepEqual(reqs.map((r) => [r.arrivalS, r.inputTokens, r.outputTokens]), [[0, 10, 20]], header);
    }
  });
});

test('an Azure header that is not the Azure header still names line 1 and what was expected', () => {
  const p = tmp.file('hbad.csv', '"TIMESTAMP","ContextTokens","Generated"\n' + `${STAMP},10,20\n`);
  assertConfigError(() => openTrace(p, 'azure'), 'hbad.csv:1 header: expected TIMESTAMP,ContextTokens,GeneratedTokens');
  const q = tmp.file('rbad.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},10,20\n"${STAMP},10,20\n`);
  assertConfigError(() => all(openTrace(q, 'azure')), 'rbad.csv:3 row: expected 3 comma-separated fields');
});

const BURST = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

test('a row whose quoting is broken says so: an unterminated quote, or text after a closing quote (Azure and the shared readers)', () => {
  const open = tmp.file('q1.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},"10,20\n`);
  assertConfigError(() => all(openTrace(open, 'azure')), `q1.csv:2 row: expected 3 comma-separated fields, and a closing quote for the one at column ${STAMP.length + 2}`);
  const after = tmp.file('q2.csv', `${BURST}\n0,ChatGPT,"10"5,5,15,Conversation log\n`);
  assertConfigError(() => all(openTrace(after, 'burstgpt')), 'q2.csv:2 row: expected 6 comma-separated fields, and a comma right after the quoted cell that ends at column 14');
  // A plain field-count mismatch keeps the short message.
  const short = tmp.file('q3.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},10\n`);
  assertConfigError(() => all(openTrace(short, 'azure')), 'q3.csv:2 row: expected 3 comma-separated fields, got');
});



test('BurstGPT failures written as 0, 00, " 0 " or "0" are skipped and counted, like Azure GeneratedTokens 0 / 00', () => {
  const rows = ['0,ChatGPT,10,5,15,Conversation log', '1,ChatGPT,10,00,10,Conversation log', '2,ChatGPT,10, 0 ,10,Conversation log', '3,ChatGPT,10,"0",10,Conversation log', '4,GPT-4,10,0,10,API log', '5,GPT-4,10,007,17,API log'];
  const src = openTrace(tmp.file('b0.csv', [BURST, ...rows].join('\n')), 'burstgpt');
  assert.deepEqual(all(src).map((r) => [r.arrivalS, r.outputTokens]), [[0, 5], [5, 7]]);
  assert.deepEqual(src.stats, { rows: 2, skipped: { [BURSTGPT_SKIP_FAILED]: 4 } });
  const az = openTrace(tmp.file('a0.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},10,5\n${STAMP},10,00\n${STAMP},10,"0"\n`), 'azure');
  assert.equal(all(az).length, 1);
  assert.deepEqual(az.stats.skipped, { [AZURE_SKIP_NO_OUTPUT]: 2 });
});

test('a zero written as a decimal (0.0) is an error that shows the cell as written, in both readers', () => {
  const b = tmp.file('b1.csv', [BURST, '0,ChatGPT,10,5,15,x', '1,ChatGPT,10,0.0,10,x'].join('\n'));
  assertConfigError(() => all(openTrace(b, 'burstgpt')), 'b1.csv:3 Response tokens: expected an integer ≥ 0 and ≤ 1e9 (0 = a failed request, skipped), got "0.0"');
  const a = tmp.file('a1.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},10,5\n${STAMP},10,0.0\n`);
  assertConfigError(() => all(openTrace(a, 'azure')), 'a1.csv:3 GeneratedTokens: expected an integer ≥ 0 and ≤ 1e9 (rows with 0 are skipped), got "0.0"');
  // Numbers written plainly still print as numbers.
  assertConfigError(() => all(openTrace(tmp.file('b2.csv', [BURST, '0,ChatGPT,10,-5,5,x'].join('\n')), 'burstgpt')), 'got -5');
});

// ----- skipped rows a workload counts ---------------------------------------------------------------

/** BurstGPT rows at these times; `f` marks a failure (Response tokens 0). */
function burst(name: string, rows: [number, 'ok' | 'f'][]): string {
  return tmp.file(name, [BURST, ...rows.map(([t, k]) => `${t},m,10,${k === 'ok' ? 5 : 0},15,x`)].join('\n'));
}

function workload(path: string, transforms?: string) {
  const spec = workloadSchema.parse(parse(`trace: { path: ${JSON.stringify(path)}, format: burstgpt }${transforms ? `\ntransforms: ${transforms}` : ''}`));
  return openWorkload(spec, new Rng(1), tmp.dir);
}

test('a window counts the skipped rows inside it, wherever the next request after the window lies', () => {
  const rows: [number, 'ok' | 'f'][] = [[0, 'ok'], [0.5, 'f'], [2, 'ok'], [5, 'f'], [8, 'ok'], [9, 'f'], [12, 'f'], [14, 'f']];
  for (const next of [13, 20, 30]) {
    const w = workload(burst(`w${next}.csv`, [...rows, [next, 'ok'] as [number, 'ok']].sort((a, b) => a[0] - b[0])), '{ window: { startS: 1, endS: 10 } }');
    assert.deepEqual(all(w).map((r) => r.arrivalS), [1, 7]);
    assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 2 }, `next request at ${next}`);
  }
});

test('the whole trace read to its end counts every skipped row, trailing ones too', () => {
  const w = workload(burst('all.csv', [[0, 'f'], [1, 'ok'], [2, 'f'], [3, 'ok'], [4, 'f'], [5, 'f']]));
  assert.equal(all(w).length, 2);
  assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 4 });
  // A second pass counts the same (not twice).
  assert.equal(all(w).length, 2);
  assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 4 });
});

test('a stream cut short counts only skipped rows before the last request taken, however far reading went', () => {
  const p = burst('cut.csv', [[0, 'ok'], [1, 'f'], [2, 'ok'], [3, 'f'], [4, 'f'], [6, 'ok'], [7, 'f'], [9, 'ok']]);
  // limit 2 takes the requests at 0 and 2: the failure at 1 counts, those at 3 and 4 do not — also when
  // rateScale has read a request ahead (the copies of the request at 2 lie before the one at 6).
  for (const t of ['{ limit: 2 }', '{ rateScale: 2, rateScaleJitterS: 0, limit: 4 }', '{ compress: 2, limit: 2 }']) {
    const w = workload(p, t);
    all(w);
    assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 1 }, t);
  }
  // A consumer that stops early (as a simulation does at its end) after taking the requests at 0 and 2
  // and holding the one at 6 without replaying it: a request counts as taken once the next one is asked for.
  const w = workload(p);
  const it = w[Symbol.iterator]();
  assert.deepEqual([it.next().value?.arrivalS, it.next().value?.arrivalS, it.next().value?.arrivalS], [0, 2, 6]);
  assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 1 });
  it.next();
  assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 3 });
  it.next();
  assert.deepEqual(w.traceStats?.skipped, { [BURSTGPT_SKIP_FAILED]: 4 });
});

test('a simulation that ends at endS counts the same skipped rows wherever endS falls before the next request', () => {
  const p = burst('sim.csv', [[0, 'ok'], [1, 'f'], [2, 'ok'], [3, 'f'], [4, 'f'], [60, 'ok'], [61, 'f'], [90, 'ok']]);
  const counts = [10, 30, 59, 75].map((endS) => {
    const { scenario, baseDir } = loadScenario({ trace: { path: p, format: 'burstgpt' }, sets: [`endS=${endS}`] });
    return simulate(scenario, baseDir, { mode: 'fast' }).skippedInTrace;
  });
  // Replayed: the requests at 0 and 2 (and 60 for endS 75); the simulator's look-ahead to the next request never counts.
  assert.deepEqual(counts, [1, 1, 1, 3].map((n) => ({ [BURSTGPT_SKIP_FAILED]: n })));
});

test('review findings: a corrupt Azure year, inherited-property keys, the line of an unreadable first JSON line, all-skipped traces', () => {
  const y = tmp.file('y.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n20x3-11-16 18:00:00.0,10,5\n`);
  assert.throws(() => all(openTrace(y, 'azure')), /y\.csv:2 TIMESTAMP: expected a timestamp/);
  const y2 = tmp.file('y2.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},10,5\n202x-11-16 18:16:00.0,10,5\n`);
  assert.throws(() => all(openTrace(y2, 'azure')), /y2\.csv:3 TIMESTAMP: expected a timestamp/);
  for (const key of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    const j = tmp.file(`k-${key}.jsonl`, `{"arrival_s":0,"input_tokens":5,"output_tokens":5,"${key}":"x"}\n`);
    assert.throws(() => all(openTrace(j, 'jsonl')), new RegExp(`k-${key}\\.jsonl:1 ${key}: expected known keys`));
  }
  const d = tmp.file('d.jsonl', `\n\n{"timestamp": 0, "input_length": 10\n`);
  assert.throws(() => detectFormat(d), /d\.jsonl:3: cannot tell the trace format: the line starts with '\{' but is not JSON/);
  const z = tmp.file('z.csv', `TIMESTAMP,ContextTokens,GeneratedTokens\n${STAMP},10,0\n${STAMP},10,0\n`);
  assert.throws(() => all(openTrace(z, 'azure')), /z\.csv: the trace has no requests \(rows skipped: 2 GeneratedTokens 0\)/);
});
