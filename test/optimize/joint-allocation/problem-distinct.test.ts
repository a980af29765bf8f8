import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/util/errors.ts';
import { loadProblem, parseProblem } from '../../../src/optimize/joint-allocation/problem.ts';
import { generateProblem } from '../../../src/optimize/joint-allocation/generate.ts';
import { configsOf } from '../../../src/optimize/joint-allocation/coefficients.ts';

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
