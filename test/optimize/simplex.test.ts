import { test } from 'node:test';
import assert from 'node:assert/strict';
import { solveDenseLp } from '../../src/optimize/simplex.ts';
import { ModelBuilder, solveModel } from '../../src/optimize/highs.ts';
import { Rng } from '../../src/util/rng.ts';

test('the dense simplex solves a textbook LP and reports its duals', () => {
  // max 3x + 5y s.t. x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18  →  x = 2, y = 6, objective 36; duals (0, 1.5, 1).
  const r = solveDenseLp({ A: Float64Array.from([1, 0, 0, 2, 3, 2]), b: Float64Array.from([4, 12, 18]), c: Float64Array.from([-3, -5]), m: 3, n: 2 });
  assert.equal(r.status, 'optimal');
  assert.ok(Math.abs(r.x[0]! - 2) < 1e-9 && Math.abs(r.x[1]! - 6) < 1e-9);
  assert.ok(Math.abs(r.objective + 36) < 1e-9);
  assert.deepEqual([...r.duals].map((v) => Math.round(v * 1e9) / 1e9 + 0), [0, -1.5, -1]);
});

test('the dense simplex reports an unbounded LP', () => {
  const r = solveDenseLp({ A: Float64Array.from([1, -1]), b: Float64Array.from([1]), c: Float64Array.from([0, -1]), m: 1, n: 2 });
  assert.equal(r.status, 'unbounded');
});

test('the dense simplex rejects a negative right-hand side instead of returning a wrong answer', () => {
  assert.throws(() => solveDenseLp({ A: Float64Array.from([1]), b: Float64Array.from([-1]), c: Float64Array.from([1]), m: 1, n: 1 }), /b\[0\]/);
});

test('the dense simplex matches HiGHS on random feasible LPs, degenerate ones included', async () => {
  const rng = new Rng(7);
  for (let trial = 0; trial < 25; trial++) {
    const m = 2 + rng.int(8), n = 2 + rng.int(10);
    const A = new Float64Array(m * n), b = new Float64Array(m), c = new Float64Array(n);
    for (let k = 0; k < m * n; k++) A[k] = rng.next() < 0.3 ? 0 : rng.next() * 2 - 0.3;
    for (let r = 0; r < m; r++) b[r] = rng.next() < 0.3 ? 0 : rng.next() * 5; // zeros make degenerate vertices
    for (let j = 0; j < n; j++) c[j] = rng.next() * 2 - 1.5;
    // Box every variable so the LP is bounded.
    const Ab = new Float64Array((m + n) * n), bb = new Float64Array(m + n);
    Ab.set(A); bb.set(b);
    for (let j = 0; j < n; j++) { Ab[(m + j) * n + j] = 1; bb[m + j] = 3; }
    const mine = solveDenseLp({ A: Ab, b: bb, c, m: m + n, n });
    const mb = new ModelBuilder('min');
    const cols = [...Array(n).keys()].map((j) => mb.addVar(`x${j}`, 0, 3, c[j]!));
    for (let r = 0; r < m; r++) mb.addRow(`r${r}`, cols.map((col, j) => [col, A[r * n + j]!] as [number, number]).filter(([, v]) => v !== 0), -Infinity, b[r]!);
    const ref = await solveModel(mb.model);
    assert.equal(mine.status, 'optimal');
    assert.ok(Math.abs(mine.objective - ref.objective!) < 1e-6 * Math.max(1, Math.abs(ref.objective!)), `trial ${trial}: ${mine.objective} vs HiGHS ${ref.objective}`);
    for (let r = 0; r < m + n; r++) {
      let lhs = 0;
      for (let j = 0; j < n; j++) lhs += Ab[r * n + j]! * mine.x[j]!;
      assert.ok(lhs <= bb[r]! + 1e-9, `trial ${trial} row ${r}: ${lhs} > ${bb[r]}`);
    }
  }
});
