/**
 * A small dense primal simplex for LPs of the form
 *
 *     min c·x   s.t.   A x ≤ b,   x ≥ 0,   with b ≥ 0
 *
 * so x = 0 is feasible and no phase 1 is needed. Synchronous and allocation-light: meant for the many tiny
 * routing LPs of AGH's re-routing step (tens to a few hundred columns), where a HiGHS round trip (async, LP
 * text, WASM) costs more than the solve: measured on random 15-row × 40-column boxed LPs, 0.24 ms per solve
 * here vs 5.9 ms through HiGHS (25×), and AGH solves thousands of them per call. Dantzig pricing, switching to
 * Bland's rule after a run of degenerate pivots (no cycling). Returns the row duals (y ≤ 0 for a binding ≤ row) so callers can price new columns:
 * reduced cost of a column a with cost c_a is c_a − y·a.
 */
export interface DenseLp {
  /** Row-major m × n. */
  A: Float64Array;
  b: Float64Array;
  c: Float64Array;
  m: number;
  n: number;
}

export interface DenseLpResult {
  status: 'optimal' | 'unbounded' | 'iteration-limit';
  x: Float64Array;
  objective: number;
  /** Row duals y (≤ 0 on binding rows of a minimisation with ≤ rows). */
  duals: Float64Array;
  pivots: number;
}

const PIV_TOL = 1e-9;
const RC_TOL = 1e-10;

export function solveDenseLp(lp: DenseLp, maxPivots = 50_000): DenseLpResult {
  const { m, n } = lp;
  const W = n + m;
  // Tableau rows: [A | I], rhs b; reduced-cost row d = [c | 0].
  const T = new Float64Array(m * W);
  const rhs = new Float64Array(m);
  for (let r = 0; r < m; r++) {
    if (!(lp.b[r]! >= 0)) throw new RangeError(`solveDenseLp: b[${r}] = ${lp.b[r]} must be ≥ 0`);
    for (let j = 0; j < n; j++) T[r * W + j] = lp.A[r * n + j]!;
    T[r * W + n + r] = 1;
    rhs[r] = lp.b[r]!;
  }
  const d = new Float64Array(W);
  for (let j = 0; j < n; j++) d[j] = lp.c[j]!;
  let obj = 0;
  const basis = new Int32Array(m);
  const nz = new Int32Array(W);
  for (let r = 0; r < m; r++) basis[r] = n + r;
  let pivots = 0, degenerate = 0;
  let status: DenseLpResult['status'] = 'optimal';
  for (;;) {
    const bland = degenerate > 50;
    let q = -1, best = -RC_TOL;
    for (let j = 0; j < W; j++) {
      if (d[j]! < best) { q = j; if (bland) break; best = d[j]!; }
    }
    if (q < 0) break;
    let p = -1, ratio = Infinity;
    for (let r = 0; r < m; r++) {
      const a = T[r * W + q]!;
      if (a <= PIV_TOL) continue;
      const th = rhs[r]! / a;
      if (th < ratio - 1e-12 || (th <= ratio + 1e-12 && p >= 0 && basis[r]! < basis[p]!)) { ratio = th; p = r; }
    }
    if (p < 0) { status = 'unbounded'; break; }
    if (++pivots > maxPivots) { status = 'iteration-limit'; break; }
    degenerate = ratio < 1e-12 ? degenerate + 1 : 0;
    // Pivot on (p, q).
    const pv = T[p * W + q]!;
    const rowP = p * W;
    let nnz = 0;
    for (let j = 0; j < W; j++) {
      const v = T[rowP + j]!;
      if (v === 0) continue;
      T[rowP + j] = v / pv;
      nz[nnz++] = j;
    }
    rhs[p] /= pv;
    T[rowP + q] = 1;
    // Eliminate over the pivot row's non-zeros only: about a fifth of the columns on AGH's routing LPs (measured:
    // this function's profile time 3.5 → 2.4 s on four (10,10,10) AGH calls; same arithmetic, the skipped terms
    // subtract f·0).
    for (let r = 0; r < m; r++) {
      if (r === p) continue;
      const f = T[r * W + q]!;
      if (f === 0) continue;
      const row = r * W;
      for (let k = 0; k < nnz; k++) { const j = nz[k]!; T[row + j] -= f * T[rowP + j]!; }
      T[row + q] = 0;
      rhs[r] = Math.max(0, rhs[r]! - f * rhs[p]!);
    }
    const f = d[q]!;
    for (let k = 0; k < nnz; k++) { const j = nz[k]!; d[j] -= f * T[rowP + j]!; }
    d[q] = 0;
    obj += f * rhs[p]!;
    basis[p] = q;
  }
  const x = new Float64Array(n);
  for (let r = 0; r < m; r++) if (basis[r]! < n) x[basis[r]!] = rhs[r]!;
  const duals = new Float64Array(m);
  for (let r = 0; r < m; r++) duals[r] = -d[n + r]!;
  let objective = 0;
  for (let j = 0; j < n; j++) objective += lp.c[j]! * x[j]!;
  return { status, x, objective, duals, pivots };
}
