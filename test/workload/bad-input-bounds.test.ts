import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.ts';
import { parseConfigText, validateConfig } from '../../src/util/config-file.ts';
import { openWorkload, workloadSchema } from '../../src/workload/schema.ts';
import { labelPicker } from '../../src/workload/generators/labels.ts';
import { arrivalTimes } from '../../src/workload/generators/arrivals.ts';
import { relabelModels } from '../../src/workload/transforms.ts';
import { all, assertConfigError, tempDir } from './helpers.ts';
import { openTrace } from '../../src/workload/trace.ts';
import type { TraceFormat } from '../../src/workload/types.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** The workload section as a scenario file would give it: validated with file, line and dotted path in errors. */
const workload = (yaml: string) => validateConfig(parseConfigText(yaml, 'w.yaml'), workloadSchema);
const SYN = 'synthetic:\n  durationS: 60\n  lengths: { kind: lognormal, input: { mu: 5, sigma: 1 }, output: { mu: 4, sigma: 1 } }\n';

test('label weights whose sum overflows to Infinity keep their ratios (equal weights draw both names, not only the last)', () => {
  const pick = labelPicker({ a: 1e308, b: 1e308 }, 'tier');
  const rng = new Rng(7);
  const n = { a: 0, b: 0 } as Record<string, number>;
  for (let i = 0; i < 4000; i++) n[pick(rng)]!++;
  assert.ok(n.a! > 1800 && n.b! > 1800, JSON.stringify(n));
  // A huge weight next to a small one: the small one is (almost) never drawn, and a zero weight never is.
  const lopsided = labelPicker({ a: 1e308, b: 1e308, c: 1, d: 0 }, 'tier');
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) seen.add(lopsided(rng));
  assert.deepEqual([...seen].sort(), ['a', 'b']);
  // End to end through the schema and the synthetic generator.
  const spec = workload(`${SYN}  arrivals: { kind: poisson, ratePerS: 20 }\n  labels: { tier: { a: 1e308, b: 1e308 } }\n`);
  const tiers = all(openWorkload(spec, new Rng(1), '.')).map((r) => r.tier);
  assert.ok(tiers.includes('a') && tiers.includes('b'), `tiers: ${[...new Set(tiers)].join(', ')}`);
});

test('gamma arrivals: cv below 1e-6 is refused at its line (a cv of 1e-200 made the shape Infinity and the sampler loop forever)', () => {
  for (const cv of ['1e-200', '1e-160', '1e-7']) {
    assertConfigError(() => workload(`${SYN}  arrivals: { kind: gamma, ratePerS: 1, cv: ${cv} }\n`), 'w.yaml:4 synthetic.arrivals.cv: expected ≥ 0.000001');
  }
  // The documented minimum is evenly spaced arrivals: gaps of 1/rate to within a few parts per million.
  const spec = workload(`${SYN}  arrivals: { kind: gamma, ratePerS: 2, cv: 1e-6 }\n`);
  const times = all(openWorkload(spec, new Rng(1), '.')).map((r) => r.arrivalS);
  assert.ok(times.length === 119 || times.length === 120, String(times.length)); // the 120th lands within a hair of 60 s
  for (let i = 1; i < times.length; i++) assert.ok(Math.abs(times[i]! - times[i - 1]! - 0.5) < 1e-4, `gap ${i}`);
  // Direct callers get an error instead of a hang.
  assert.throws(() => new Rng(1).gamma(Infinity, 1), RangeError);
  assert.throws(() => arrivalTimes({ kind: 'gamma', ratePerS: 1, cv: 1e-200 }, new Rng(1)).next(), /cv in \[0\.000001, 20\], got 1e-200/);
});

test('a model map keeps the key __proto__ (z.record dropped it and the requests so labelled stayed unmapped)', () => {
  const trace = tmp.file('proto.csv', 'arrival_s,input_tokens,output_tokens,model\n0,100,10,__proto__\n1,100,10,llama3.1-8b\n2,100,10,other\n');
  // In a file the key is refused at its line (every config file: as a key it sets the prototype in most records)...
  assertConfigError(() => workload(`trace: { path: ${trace} }\ntransforms: { model: { __proto__: llama3.1-8b, other: llama2-7b } }\n`), 'w.yaml:2: expected keys other than "__proto__"');
  // ...while a spec built in code (JSON.parse makes it an own key) keeps it as a model name.
  const raw = JSON.parse(`{"trace": {"path": ${JSON.stringify(trace)}}, "transforms": {"model": {"__proto__": "llama3.1-8b", "other": "llama2-7b"}}}`);
  const spec = workloadSchema.parse(raw);
  const map = spec.transforms!.model as Record<string, string>;
  assert.ok(Object.hasOwn(map, '__proto__'));
  assert.deepEqual(Object.entries(map), [['__proto__', 'llama3.1-8b'], ['other', 'llama2-7b']]);
  assert.deepEqual(all(openWorkload(spec, new Rng(1), '.')).map((r) => r.model), ['llama3.1-8b', 'llama3.1-8b', 'llama2-7b']);
  // A plain map still reads as before, and a bad entry under __proto__ is reported at its own path.
  assert.deepEqual(workload(`trace: { path: ${trace} }\ntransforms: { model: { a: b } }\n`).transforms!.model, { a: 'b' });
  const bad = workloadSchema.safeParse(JSON.parse(`{"trace": {"path": "x"}, "transforms": {"model": {"__proto__": ""}}}`));
  assert.ok(!bad.success && bad.error.issues[0]!.path.join('.') === 'transforms.model.__proto__');
  // relabelModels itself looks keys up as own entries only.
  const src = [{ id: 0, arrivalS: 0, inputTokens: 1, outputTokens: 1, model: 'toString' }];
  assert.equal(all(relabelModels(src, { a: 'b' }))[0]!.model, 'toString');
});

test('a label weight map keeps the key __proto__ as a label name (built in code; a file refuses the key)', () => {
  const raw = JSON.parse('{"synthetic": {"durationS": 60, "lengths": {"kind": "lognormal", "input": {"mu": 5, "sigma": 1}, "output": {"mu": 4, "sigma": 1}}, "arrivals": {"kind": "poisson", "ratePerS": 20}, "labels": {"tier": {"__proto__": 1, "b": 1}}}}');
  const tiers = new Set(all(openWorkload(workloadSchema.parse(raw), new Rng(1), '.')).map((r) => r.tier));
  assert.deepEqual([...tiers].sort(), ['__proto__', 'b']);
  assertConfigError(() => workload(`${SYN}  arrivals: { kind: poisson, ratePerS: 1 }\n  labels: { tier: { __proto__: 1, b: 1 } }\n`), 'w.yaml:5: expected keys other than "__proto__"');
  assertConfigError(() => workload(`${SYN}  arrivals: { kind: poisson, ratePerS: 1 }\n  labels: { tier: { a: .inf } }\n`), 'synthetic.labels.tier.a: expected a finite number, got Infinity');
});

test('workload spans, rates and factors near the largest double are refused at their line instead of running forever', () => {
  const cases: [string, string][] = [
    [`synthetic:\n  durationS: 1e308\n  arrivals: { kind: poisson, ratePerS: 1 }\n  lengths: { kind: lognormal, input: { mu: 5, sigma: 1 }, output: { mu: 4, sigma: 1 } }\n`, 'w.yaml:2 synthetic.durationS: expected ≤ 31536000, got 1e+308'],
    ['o365: { preset: peak-day, scale: 1e308 }\n', 'w.yaml:1 o365.scale: expected ≤ 1000, got 1e+308'],
    ['o365: { preset: peak-day, startS: 1e308 }\n', 'w.yaml:1 o365.startS: expected ≤ 31536000, got 1e+308'],
    ['o365: { preset: peak-day, durationS: 1e308 }\n', 'w.yaml:1 o365.durationS: expected ≤ 31536000, got 1e+308'],
    ['o365: { preset: peak-day, bursts: [{ startS: 0, durationS: 60, factor: 1e308 }] }\n', 'w.yaml:1 o365.bursts[0].factor: expected ≤ 100, got 1e+308'],
    ['trace: { path: x.csv }\ntransforms: { compress: 1e-12 }\n', 'w.yaml:2 transforms.compress: expected ≥ 0.001, got 1e-12'],
    ['trace: { path: x.csv }\ntransforms: { compress: 1e308 }\n', 'w.yaml:2 transforms.compress: expected ≤ 1000000, got 1e+308'],
  ];
  for (const [yaml, msg] of cases) assertConfigError(() => workload(yaml), msg);
  // The bounds leave the bundled presets and ordinary values alone.
  workload('o365: { preset: week, scale: 1000, bursts: [{ startS: 0, durationS: 60, factor: 8 }] }\n');
  workload('trace: { path: x.csv }\ntransforms: { compress: 0.001 }\n');
});

test('a trace arrival past 1e10 s is refused at its line in every format (at 1e15 s a request "completed" with TTFT 0 and $6.8e12 of fleet)', () => {
  const late = (file: string) => `expected an arrival at most 1e10 s (about 317 years) after ${file}; later times are out of range`;
  const cases: [string, TraceFormat, string, string][] = [
    ['az.csv', 'azure', 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,10,5\n9999-12-31 23:59:59.9999999,10,5\n', `:3 TIMESTAMP: ${late("the trace's first row")}`],
    ['bg.csv', 'burstgpt', 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,10,5,15,Conversation log\n1e15,ChatGPT,10,5,15,Conversation log\n', `:3 Timestamp: ${late("the trace's first row")}`],
    ['vi.csv', 'vidur', 'arrived_at,num_prefill_tokens,num_decode_tokens\n5,10,5\n10000000006,10,5\n', `:3 arrived_at: ${late("the trace's first row")}`],
    ['mc.jsonl', 'mooncake', '{"timestamp": 0, "input_length": 10, "output_length": 5}\n{"timestamp": 1e300, "input_length": 10, "output_length": 5}\n', `:2 timestamp: ${late("the trace's first row")}`],
    ['ls.jsonl', 'llmservingsim', '{"arrival_time_ns": 0, "input_toks": 10, "output_toks": 5}\n{"arrival_time_ns": 1e20, "input_toks": 10, "output_toks": 5}\n', `:2 arrival_time_ns: ${late("the trace's first row")}`],
    ['c.csv', 'csv', 'arrival_s,input_tokens,output_tokens\n0,10,5\n1e11,10,5\n', `:3 arrival_s: ${late('0')}`],
    ['c.jsonl', 'jsonl', '{"arrival_s": 1e11, "input_tokens": 10, "output_tokens": 5}\n', `:1 arrival_s: ${late('0')}`],
  ];
  for (const [name, format, text, msg] of cases) {
    const p = tmp.file(name, text);
    assertConfigError(() => all(openTrace(p, format)), `${p}${msg}`);
  }
  // Within range: epoch seconds in the canonical CSV, and a trace spanning 300 years after its first row.
  assert.equal(all(openTrace(tmp.file('epoch.csv', 'arrival_s,input_tokens,output_tokens\n1700000000,10,5\n9999999999,10,5\n'), 'csv')).length, 2);
  assert.deepEqual(all(openTrace(tmp.file('bg-ok.csv', 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n7,ChatGPT,10,5,15,Conversation log\n10000000007,ChatGPT,10,5,15,Conversation log\n'), 'burstgpt')).map((r) => r.arrivalS), [0, 1e10]);
});
