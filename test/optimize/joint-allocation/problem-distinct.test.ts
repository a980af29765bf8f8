import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/util/errors.ts';
import { loadProblem, parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { buildCoefficients, configsOf } from '../../../src/optimize/joint-allocation/coefficients.ts';
import { evaluate } from '../../../src/optimize/joint-allocation/evaluate.ts';
import { greedy } from '../../../src/optimize/joint-allocation/gh.ts';

test('a repeated TP degree or PP depth is rejected naming file, line and entry (it would duplicate every deployment choice)', () => {
  const p = generateProblem(2, 2, 2, 1);
  const file = join(mkdtempSync(join(tmpdir(), 'problem-distinct-')), 'p.json');
  writeFileSync(file, JSON.stringify({ ...p, tpDegrees: [1, 2, 2] }, null, 1));
  assert.throws(() => loadProblem(file), (e: unknown) => e instanceof ConfigError && /p\.json:\d+ tpDegrees\[2\]: expected a value not listed before \(tpDegrees must be distinct\), got 2/.test(e.message));
  assert.throws(() => parseProblem({ ...p, ppDepths: [4, 1, 4] }), /ppDepths\[2\]: expected a value not listed before/);
  // Distinct lists in any order still load, one configuration per (TP, PP).
  const ok = parseProblem({ ...p, tpDegrees: [8, 2], ppDepths: [4, 1] });
  assert.equal(configsOf(ok).length, 4);
});

test('names inherited from Object.prototype are names like any other; "__proto__" is refused (NaN error rates, a HiGHS crash, a broken gpusByTier)', () => {
  const p = generateProblem(2, 2, 2, 1);
  const renamed = (from: string, to: string) => JSON.parse(JSON.stringify(p).replaceAll(`"${from}"`, `"${to}"`));
  // A type called "constructor" with no error rate: it read Object's constructor function as the rate.
  const t0 = p.types[0]!.name;
  const noRate = renamed(t0, 'constructor');
  for (const m of noRate.models) delete m.baseError.constructor;
  assert.throws(() => parseProblem(noRate), /models\[0\]\.baseError: expected an error rate for every query type \(missing "constructor"\)/);
  // With its rate, and a tier called "toString": a plan whose numbers are all finite and whose GPUs add up.
  const ok = parseProblem(renamed(p.tiers[0]!.name, 'toString'));
  const withRate = parseProblem(renamed(t0, 'constructor'));
  for (const q of [ok, withRate]) {
    const c = buildCoefficients(q);
    assert.ok([...c.ebar].every(Number.isFinite));
    const e = evaluate(c, greedy(c).toAllocation());
    assert.ok(Object.values(e.gpusByTier).every((g) => typeof g === 'number' && Number.isInteger(g)), JSON.stringify(e.gpusByTier));
  }
  for (const what of ['types', 'models', 'tiers'] as const) {
    const name = (p[what][0] as { name: string }).name;
    assert.throws(() => parseProblem(renamed(name, '__proto__')), new RegExp(`${what}\\[0\\]\\.name: expected a name other than "__proto__"`), what);
  }
});
