import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/util/errors.ts';
import { loadProblem, parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { buildCoefficients, delayOf } from '../../../src/optimize/joint-allocation/coefficients.ts';

test('the bundled example problem loads and has the paper base size 6 x 6 x 10', () => {
  const p = loadProblem('scenarios/plan-example.yaml');
  assert.equal(p.types.length, 6);
  assert.equal(p.models.length, 6);
  assert.equal(p.tiers.length, 10);
  assert.equal(p.budgetUsd, 100);
});

test('a bad field is reported with file, line and path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-'));
  const f = join(dir, 'p.yaml');
  const p = generateProblem(2, 2, 2, 1);
  const bad = { ...p, types: [{ ...p.types[0]!, delaySloS: -1 }, p.types[1]!] };
  writeFileSync(f, JSON.stringify(bad, null, 1));
  assert.throws(() => loadProblem(f), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /p\.yaml:\d+ types\[0\]\.delaySloS: expected > 0/);
    assert.match(e.message, /got -1/);
    return true;
  });
});

test('a model without an error rate for some query type is rejected naming the type', () => {
  const p = generateProblem(2, 1, 1, 1);
  const m = { ...p.models[0]!, baseError: { [p.types[0]!.name]: 0.01 } };
  assert.throws(() => parseProblem({ ...p, models: [m] }), /missing "/);
});

test('unknown keys are errors, not silently ignored', () => {
  const p = generateProblem(1, 1, 1, 1);
  assert.throws(() => parseProblem({ ...p, budget: 5 }), ConfigError);
});

test('the generator is deterministic per seed and differs across seeds', () => {
  assert.deepEqual(generateProblem(5, 5, 5, 7), generateProblem(5, 5, 5, 7));
  assert.notDeepEqual(generateProblem(5, 5, 5, 7), generateProblem(5, 5, 5, 8));
  const big = generateProblem(20, 20, 20, 1);
  assert.equal(new Set(big.types.map((t) => t.name)).size, 20);
  assert.equal(new Set(big.tiers.map((t) => t.name)).size, 20);
});

test('generated parameters stay inside the paper ranges', () => {
  const p = generateProblem(12, 12, 12, 3);
  for (const t of p.types) {
    assert.ok(t.delaySloS >= 1.5 && t.delaySloS <= 25, `Δ ${t.delaySloS}`);
    assert.ok(t.errorSlo >= 0.02 && t.errorSlo <= 0.08, `ε ${t.errorSlo}`);
    assert.ok(t.arrivalsPerHour >= 1000 && t.arrivalsPerHour <= 25000);
  }
  for (const k of p.tiers) {
    assert.ok(k.memoryGb >= 24 && k.memoryGb <= 80);
    assert.ok(k.tflops >= 40.7 && k.tflops <= 1484);
    assert.ok(k.bandwidthGbPerS >= 768 && k.bandwidthGbPerS <= 3350);
  }
  assert.ok(p.storagePriceUsdPerGbHour >= 0.0005 && p.storagePriceUsdPerGbHour <= 0.001);
});

test('there are 12 TP x PP configurations and GPU counts are n·m in {1,2,4,8,16,32}', () => {
  const c = buildCoefficients(generateProblem(2, 2, 2, 1));
  assert.equal(c.configs.length, 12);
  assert.deepEqual([...new Set(c.configs.map((x) => x.gpus))].sort((a, b) => a - b), [1, 2, 4, 8, 16, 32]);
});

test('two-phase delay: TP divides both phases, PP adds m·d_comm per output token', () => {
  const c = buildCoefficients(generateProblem(1, 1, 1, 1));
  const r = c.tokens[0]!, f = c.outTokens[0]!;
  const idx = (tp: number, pp: number) => c.configs.findIndex((x) => x.tp === tp && x.pp === pp);
  const d11 = delayOf(c, 0, 0, idx(1, 1));
  assert.ok(Math.abs(d11 - (c.dcomp[0]! * r + c.dcomm[0]! * f)) < 1e-12);
  assert.ok(Math.abs(delayOf(c, 0, 0, idx(4, 2)) - (c.dcomp[0]! * r / 4 + 2 * c.dcomm[0]! * f)) < 1e-12);
  assert.ok(delayOf(c, 0, 0, idx(8, 1)) < delayOf(c, 0, 0, idx(4, 2)), 'same product: larger TP is faster');
});

/** Writes `text` to a fresh temp file named `name` and returns its path. */
function tempFile(name: string, text: string): string {
  const f = join(mkdtempSync(join(tmpdir(), 'plan-')), name);
  writeFileSync(f, text);
  return f;
}

const rejects = (f: string, re: RegExp) => assert.throws(() => loadProblem(f), (e: unknown) => {
  assert.ok(e instanceof ConfigError, String(e));
  assert.match(e.message, re);
  assert.equal(e.message.split('\n').length, 1);
  return true;
});

test('magnitudes past the schema caps are rejected naming file, line and field (no solver crash, no nonsense plan)', () => {
  const p = generateProblem(2, 2, 2, 1);
  const withType = (patch: object) => ({ ...p, types: [{ ...p.types[0]!, ...patch }, p.types[1]!] });
  rejects(tempFile('p.json', JSON.stringify(withType({ arrivalsPerHour: 1e19 }), null, 1)), /p\.json:\d+ types\[0\]\.arrivalsPerHour: expected ≤ 1000000000000, got 10000000000000000000/);
  rejects(tempFile('p.json', JSON.stringify(withType({ outputTokens: 1e300 }), null, 1)), /p\.json:\d+ types\[0\]\.outputTokens: expected ≤ /);
  rejects(tempFile('p.json', JSON.stringify({ ...p, budgetUsd: 1e300 }, null, 1)), /p\.json:\d+ budgetUsd: expected ≤ /);
  rejects(tempFile('p.json', JSON.stringify({ ...p, tiers: [{ ...p.tiers[0]!, priceUsdPerHour: 1e20 }, p.tiers[1]!] }, null, 1)), /p\.json:\d+ tiers\[0\]\.priceUsdPerHour: expected ≤ /);
  rejects(tempFile('p.json', JSON.stringify({ ...p, models: [{ ...p.models[0]!, weightsGb: 1e12 }, p.models[1]!] }, null, 1)), /p\.json:\d+ models\[0\]\.weightsGb: expected ≤ /);
  // A horizon of 1e-300 h solved with every GPU free (a $0 rental term).
  rejects(tempFile('p.json', JSON.stringify({ ...p, horizonHours: 1e-300 }, null, 1)), /p\.json:\d+ horizonHours: expected ≥ 0\.0166/);
  // The bundled example and generated instances are far inside the caps.
  assert.doesNotThrow(() => parseProblem(generateProblem(6, 6, 10, 3)));
});

test('TP degrees outside {1,2,4,8} and PP depths outside {1,2,4} are rejected', () => {
  const p = generateProblem(2, 2, 2, 1);
  rejects(tempFile('p.json', JSON.stringify({ ...p, tpDegrees: [1, 3] }, null, 1)), /p\.json:\d+ tpDegrees\[1\]: expected one of 1, 2, 4, 8, got 3/);
  rejects(tempFile('p.json', JSON.stringify({ ...p, ppDepths: [8] }, null, 1)), /p\.json:\d+ ppDepths\[0\]: expected one of 1, 2, 4, got 8/);
  assert.deepEqual(parseProblem({ ...p, tpDegrees: [2, 8], ppDepths: [4] }).tpDegrees, [2, 8]);
});

test('an empty, null or non-mapping problem file says so, not "budgetUsd … missing"', () => {
  for (const [name, text] of [['e.yaml', ''], ['n.yaml', 'null\n'], ['e.json', ''], ['c.yaml', '# only a comment\n']] as const) {
    rejects(tempFile(name, text), new RegExp(`${name.replace('.', '\\.')}: expected a mapping of the problem's fields \\(budgetUsd, .*\\), but the document is empty$`));
  }
  rejects(tempFile('l.yaml', '- 1\n- 2\n'), /l\.yaml(:\d+)?: expected a mapping of the problem's fields .*, got \[1,2\]$/);
});

test('a truncated JSON problem file is reported as invalid JSON with its line', () => {
  const text = JSON.stringify(generateProblem(2, 2, 2, 1), null, 1);
  rejects(tempFile('p.json', text.slice(0, 300)), /p\.json:\d+: expected valid JSON, got /);
  rejects(tempFile('p.yaml', 'budgetUsd: [1, 2\n'), /p\.yaml:\d+: expected valid YAML \(the parser: .*\)$/);
});

// A type with λ = 0 still pays its unmet penalty T·φ·u and its delay penalty (neither scales with λ in (8a)): on the
// bundled example with every λ = 0 the MILP rented 2 GPUs and charged $5.78 of delay penalty for serving nothing.
test('a query type with arrivalsPerHour 0 (or below) is rejected naming the field and how to drop the type', () => {
  const p = generateProblem(2, 2, 2, 1);
  for (const rate of [0, -3]) {
    rejects(tempFile('p.json', JSON.stringify({ ...p, types: [p.types[0]!, { ...p.types[1]!, arrivalsPerHour: rate }] }, null, 1)),
      new RegExp(`p\\.json:\\d+ types\\[1\\]\\.arrivalsPerHour: expected > 0 arrivals per hour .*to drop a type, remove it from types\\), got ${rate}$`));
  }
  assert.equal(parseProblem({ ...p, types: [p.types[0]!, { ...p.types[1]!, arrivalsPerHour: 1e-3 }] }).types[1]!.arrivalsPerHour, 1e-3);
});

test('the generator never produces a type with no arrivals (sizes past the six archetypes cycle with fresh draws)', () => {
  for (const [I, J, K] of [[1, 1, 1], [6, 6, 10], [20, 3, 3], [45, 2, 2]] as const) {
    for (let seed = 1; seed <= 5; seed++) {
      for (const t of generateProblem(I, J, K, seed).types) assert.ok(t.arrivalsPerHour >= 1000, `(${I},${J},${K}) seed ${seed} ${t.name}: λ ${t.arrivalsPerHour}`);
    }
  }
});
