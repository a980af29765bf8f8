import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelBuilder, solveLpString, solveModel, toLpString } from '../../src/optimize/highs.ts';
import { UserError } from '../../src/util/errors.ts';

function workshop(): ModelBuilder {
  const b = new ModelBuilder('max');
  const chairs = b.addVar('chairs', 0, Infinity, 30, 'integer');
  const tables = b.addVar('tables', 0, Infinity, 50, 'integer');
  b.addRow('carpentry', [[chairs, 1], [tables, 2]], -Infinity, 40);
  b.addRow('finishing', [[chairs, 2], [tables, 1]], -Infinity, 50);
  return b;
}

test('solves a small MIP to optimality and reports objective, bound and zero gap', async () => {
  const r = await solveModel(workshop().model, { timeLimitS: 10 });
  assert.equal(r.status, 'optimal');
  assert.equal(r.objective, 1100);
  assert.deepEqual([...r.values], [20, 10]);
  assert.ok(r.bound !== null && Math.abs(r.bound - 1100) < 1e-6);
  assert.ok(r.gap !== null && r.gap < 1e-6);
});

test('the LP relaxation of the same model is solved when relax is set', async () => {
  const b = new ModelBuilder('max');
  const x = b.addVar('x', 0, Infinity, 1, 'integer');
  b.addRow('r', [[x, 2]], -Infinity, 3);
  assert.equal((await solveModel(b.model)).objective, 1);
  assert.equal((await solveModel(b.model, { relax: true })).objective, 1.5);
});

test('CPLEX LP text of a model solves to the same optimum', async () => {
  const lp = toLpString(workshop().model);
  assert.match(lp, /^Maximize/);
  assert.match(lp, /Generals/);
  const r = await solveLpString(lp);
  assert.equal(r.status, 'Optimal');
  assert.equal(r.objective, 1100);
  assert.equal(r.columns.chairs, 20);
});

test('an infeasible model returns status infeasible without throwing, and the instance stays usable', async () => {
  const b = new ModelBuilder();
  const x = b.addVar('x', 0, 1, 1, 'binary');
  b.addRow('needs2', [[x, 1]], 2, Infinity);
  const r = await solveModel(b.model);
  assert.equal(r.status, 'infeasible');
  assert.equal(r.hasSolution, false);
  assert.equal(r.objective, null);
  assert.equal((await solveModel(workshop().model)).objective, 1100);
});

test('duplicate terms in one row are merged', async () => {
  const b = new ModelBuilder('max');
  const x = b.addVar('x', 0, 10, 1);
  b.addRow('r', [[x, 1], [x, 1]], -Infinity, 4);
  assert.equal((await solveModel(b.model)).objective, 2);
});

test('a model HiGHS refuses to load (a coefficient ≥ 1e15) is one UserError line naming the entry, and the instance stays usable', async () => {
  const b = new ModelBuilder('min');
  const x = b.addVar('x', 0, 10, 1);
  b.addRow('huge_row', [[x, 7e16]], -Infinity, 5);
  await assert.rejects(solveModel(b.model), (e: unknown) => {
    assert.ok(e instanceof UserError, String(e));
    assert.match(e.message, /^HiGHS could not load the model: passModel failed .*largest \|coefficient\| 7e\+16 in row huge_row.*HiGHS accepts coefficients below 1e\+15/);
    assert.equal(e.message.split('\n').length, 1);
    assert.doesNotMatch(e.message, /async function Module/);
    return true;
  });
  const r = await solveModel(workshop().model);
  assert.equal(r.status, 'optimal');
  assert.equal(r.objective, 1100);
});
