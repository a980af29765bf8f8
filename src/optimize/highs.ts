import * as highsModule from 'highs';
import type { Highs } from 'highs';
import { UserError } from '../util/errors.ts';

// The package ships ESM (`build/highs.mjs`, default export = loader) but its .d.ts is read as CommonJS under
// NodeNext, so TypeScript sees the loader on `.default`; accept either shape.
type Loader = (opts?: object) => Promise<Highs>;
const mod = highsModule as unknown as { default?: Loader | { default?: Loader } };
const loadHighs: Loader = typeof mod.default === 'function' ? mod.default : (mod.default as { default: Loader }).default;

/**
 * A small, generic wrapper around HiGHS (WebAssembly): build a typed linear model with named columns and rows,
 * solve it with a time limit, get back status / objective / proven bound / gap / column values. The same model
 * can be written as CPLEX LP text (`toLpString`) so any other solver can check it. Used by the joint-allocation
 * planner and meant to be reused by other ILPs.
 */

export type VarKind = 'continuous' | 'integer' | 'binary';

export interface LinearModel {
  readonly sense: 'min' | 'max';
  readonly names: string[];
  readonly lb: number[];
  readonly ub: number[];
  readonly cost: number[];
  readonly kind: VarKind[];
  readonly rowNames: string[];
  readonly rowLb: number[];
  readonly rowUb: number[];
  /** CSR rows: `rowStart[r]..rowStart[r+1]` index into `colIdx` / `coef`. */
  readonly rowStart: number[];
  readonly colIdx: number[];
  readonly coef: number[];
  offset: number;
}

/** Incremental builder; variables and rows are addressed by the index `addVar` returns. */
export class ModelBuilder {
  readonly model: LinearModel;
  private readonly byName = new Map<string, number>();
  constructor(sense: 'min' | 'max' = 'min') {
    this.model = {
      sense, names: [], lb: [], ub: [], cost: [], kind: [], rowNames: [], rowLb: [], rowUb: [],
      rowStart: [0], colIdx: [], coef: [], offset: 0,
    };
  }

  addVar(name: string, lb: number, ub: number, cost = 0, kind: VarKind = 'continuous'): number {
    if (this.byName.has(name)) throw new Error(`duplicate variable ${name}`);
    const m = this.model;
    const id = m.names.length;
    m.names.push(name); m.lb.push(lb); m.ub.push(ub); m.cost.push(cost); m.kind.push(kind);
    this.byName.set(name, id);
    return id;
  }

  /** Adds `lb ≤ Σ coef·var ≤ ub`; duplicate columns in one row are summed. Returns the row index. */
  addRow(name: string, terms: ReadonlyArray<readonly [number, number]>, lb: number, ub: number): number {
    const m = this.model;
    const merged = new Map<number, number>();
    for (const [v, c] of terms) if (c !== 0) merged.set(v, (merged.get(v) ?? 0) + c);
    for (const [v, c] of [...merged].sort((a, b) => a[0] - b[0])) {
      if (c === 0) continue;
      m.colIdx.push(v); m.coef.push(c);
    }
    m.rowStart.push(m.colIdx.length);
    m.rowNames.push(name); m.rowLb.push(lb); m.rowUb.push(ub);
    return m.rowNames.length - 1;
  }

  get numRows(): number { return this.model.rowNames.length; }
}

export type SolveStatus = 'optimal' | 'time-limit' | 'infeasible' | 'unbounded' | 'error';

export interface SolveResult {
  status: SolveStatus;
  /** True when `values` hold a primal solution (optimal, or the incumbent at a time limit). */
  hasSolution: boolean;
  objective: number | null;
  /** Proven dual bound (MIP: best bound; LP: the optimum); null when none was proven. */
  bound: number | null;
  /** Relative gap |obj − bound| / max(|obj|, 1e-9) as HiGHS reports it; null without both. */
  gap: number | null;
  values: Float64Array;
  solveSeconds: number;
  rawStatus: string;
}

export interface SolveOptions {
  timeLimitS?: number;
  mipRelGap?: number;
  /** Ignore integrality (LP relaxation). */
  relax?: boolean;
  verbose?: boolean;
  presolve?: 'on' | 'off' | 'choose';
  /** A MIP start (one value per column): HiGHS checks it and, when feasible, starts from it as its incumbent. */
  start?: Float64Array;
}

let instance: Promise<Highs> | null = null;

/** The shared WASM instance. It is dropped and reloaded after any solver exception (a failed native call can
 * leave the WASM heap in a bad state). */
export function highsInstance(): Promise<Highs> {
  instance ??= loadHighs();
  return instance;
}

export function resetHighs(): void {
  instance = null;
}

const MODEL_STATUS: Record<number, SolveStatus> = {
  7: 'optimal', 8: 'infeasible', 9: 'infeasible', 10: 'unbounded', 13: 'time-limit', 14: 'time-limit',
  16: 'time-limit', 17: 'time-limit',
};

/** Solves the model; never throws for an optimisation outcome (infeasible, time limit), only for bugs. */
export async function solveModel(model: LinearModel, opts: SolveOptions = {}): Promise<SolveResult> {
  const highs = await highsInstance();
  const n = model.names.length;
  const isMip = !opts.relax && model.kind.some((k) => k !== 'continuous');
  const inf = highs.infinity;
  const clampInf = (v: number) => (v === Infinity ? inf : v === -Infinity ? -inf : v);
  const lb = model.lb.map(clampInf);
  const ub = model.ub.map((v, i) => (model.kind[i] === 'binary' ? Math.min(v, 1) : clampInf(v)));
  const t0 = performance.now();
  let hm: ReturnType<Highs['createModel']> | null = null;
  try {
    hm = highs.createModel({
      numCols: n,
      numRows: model.rowNames.length,
      sense: model.sense === 'min' ? highs.constants.objectiveSense.minimize : highs.constants.objectiveSense.maximize,
      offset: model.offset,
      colCost: Float64Array.from(model.cost),
      colLower: Float64Array.from(lb),
      colUpper: Float64Array.from(ub),
      rowLower: Float64Array.from(model.rowLb.map(clampInf)),
      rowUpper: Float64Array.from(model.rowUb.map(clampInf)),
      matrix: {
        format: 'csr', numRows: model.rowNames.length, numCols: n,
        starts: Int32Array.from(model.rowStart), indices: Int32Array.from(model.colIdx),
        values: Float64Array.from(model.coef),
      },
      ...(isMip ? { integrality: Int32Array.from(model.kind.map((k) => (k === 'continuous' ? 0 : 1))) } : {}),
    });
    const o: Record<string, number | string | boolean> = { output_flag: !!opts.verbose };
    if (opts.timeLimitS !== undefined) o.time_limit = opts.timeLimitS;
    if (opts.mipRelGap !== undefined) o.mip_rel_gap = opts.mipRelGap;
    if (opts.presolve !== undefined) o.presolve = opts.presolve;
    hm.options.set(o);
    if (opts.start && isMip) hm.setSolution({ colValue: opts.start });
    hm.run();
    const code = hm.getModelStatus();
    const status = MODEL_STATUS[code] ?? 'error';
    const primal = Number(hm.info.get('primal_solution_status'));
    const hasSolution = status === 'optimal' || (status === 'time-limit' && primal === 2);
    const values = hasSolution ? Float64Array.from(hm.getSolution().colValue) : new Float64Array(n);
    const objective = hasSolution ? hm.getObjectiveValue() : null;
    let bound: number | null = null;
    let gap: number | null = null;
    if (isMip) {
      const b = Number(hm.info.get('mip_dual_bound'));
      if (Number.isFinite(b) && Math.abs(b) < 1e19) bound = b;
      const g = Number(hm.info.get('mip_gap'));
      if (hasSolution && Number.isFinite(g) && g < 1e19) gap = Math.max(0, g);
    } else if (status === 'optimal') {
      bound = objective;
      gap = 0;
    }
    const solveSeconds = (performance.now() - t0) / 1000;
    return { status, hasSolution, objective, bound, gap, values, solveSeconds, rawStatus: String(code) };
  } catch (e) {
    resetHighs();
    throw highsFailure(model, e, hm === null ? 'load' : 'solve');
  } finally {
    try {
      hm?.dispose();
    } catch {
      // an aborted instance cannot free; it has been dropped (resetHighs) and the first error is the one to report
    }
    // WASM linear memory only grows: after a large model, drop the instance so the next solve starts from a
    // fresh heap (measured: RSS 455 → 559 MB across two (20,20,20) paper-encoding solves otherwise).
    if (model.rowNames.length > 100_000) resetHighs();
  }
}

/** Model entries HiGHS rejects at load: |matrix value| ≥ 1e15 (`large_matrix_value`); costs ≥ 1e20 are infinite. */
const HIGHS_MAX_MATRIX = 1e15;
const HIGHS_INF = 1e20;

/**
 * A HiGHS exception as one line (a UserError: exit 2, no minified module source or stack). HiGHS refuses a
 * model whose magnitudes are out of its range (`passModel` status -1) and aborts when its WebAssembly heap
 * (2 GB) runs out; both come from the input (magnitudes, size), so the message names the model's size and its
 * largest entries. Anything else, and a model with NaN entries (a bug in its builder), keeps the original error.
 */
function highsFailure(model: LinearModel, e: unknown, stage: 'load' | 'solve'): unknown {
  const aborted = e instanceof WebAssembly.RuntimeError;
  if (!(e instanceof Error) || !(e.name === 'HighsError' || aborted)) return e;
  const nan = (xs: number[]) => xs.some(Number.isNaN);
  if (nan(model.coef) || nan(model.cost) || nan(model.lb) || nan(model.ub) || nan(model.rowLb) || nan(model.rowUb)) return e;
  let maxCoef = 0, maxRow = -1, maxCost = 0, maxCol = -1;
  for (let r = 0; r < model.rowNames.length; r++) {
    for (let p = model.rowStart[r]!; p < model.rowStart[r + 1]!; p++) {
      if (Math.abs(model.coef[p]!) > maxCoef) { maxCoef = Math.abs(model.coef[p]!); maxRow = r; }
    }
  }
  model.cost.forEach((c, i) => { if (Math.abs(c) > maxCost) { maxCost = Math.abs(c); maxCol = i; } });
  const g = (v: number) => v.toExponential(1).replace('.0e', 'e');
  const size = `${model.names.length} variables, ${model.rowNames.length} rows, ${model.coef.length} nonzeros`;
  const ranges = `largest |coefficient| ${g(maxCoef)}${maxRow >= 0 ? ` in row ${model.rowNames[maxRow]}` : ''}, largest |cost| ${g(maxCost)}${maxCol >= 0 ? ` on ${model.names[maxCol]}` : ''}`;
  const hint = maxCoef >= HIGHS_MAX_MATRIX || maxCost >= HIGHS_INF
    ? `HiGHS accepts coefficients below ${g(HIGHS_MAX_MATRIX)} and costs below ${g(HIGHS_INF)}: check the input's magnitudes (rates, sizes, prices)`
    : aborted ? 'the model is likely too large for HiGHS-WASM (2 GB heap): try a smaller instance'
      : 'check the input\'s magnitudes (rates, sizes, prices)';
  return new UserError(`HiGHS could not ${stage} the model: ${aborted ? 'out of memory or aborted' : e.message} (${size}; ${ranges}); ${hint}`);
}

/** Formats a number for LP text: finite, no exponent surprises HiGHS/CPLEX cannot read. */
function num(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '1e+30' : '-1e+30';
  return String(+v.toPrecision(15));
}

/** CPLEX LP text of the model (Minimize/Maximize, Subject To, Bounds, Generals, Binaries, End). */
export function toLpString(model: LinearModel): string {
  const out: string[] = [];
  const term = (c: number, name: string) => `${c < 0 ? '-' : '+'} ${num(Math.abs(c))} ${name}`;
  const wrap = (parts: string[]) => {
    const lines: string[] = [];
    for (let i = 0; i < parts.length; i += 8) lines.push('   ' + parts.slice(i, i + 8).join(' '));
    return lines.join('\n');
  };
  out.push(model.sense === 'min' ? 'Minimize' : 'Maximize');
  const objParts = model.cost.flatMap((c, i) => (c !== 0 ? [term(c, model.names[i]!)] : []));
  if (model.offset !== 0) objParts.push(`${model.offset < 0 ? '-' : '+'} ${num(Math.abs(model.offset))}`);
  out.push(' obj: ' + (objParts.length ? '\n' + wrap(objParts) : '0 ' + (model.names[0] ?? '')));
  out.push('Subject To');
  for (let r = 0; r < model.rowNames.length; r++) {
    const parts: string[] = [];
    for (let p = model.rowStart[r]!; p < model.rowStart[r + 1]!; p++) parts.push(term(model.coef[p]!, model.names[model.colIdx[p]!]!));
    if (parts.length === 0) continue;
    const lo = model.rowLb[r]!;
    const hi = model.rowUb[r]!;
    const body = wrap(parts);
    const nm = model.rowNames[r]!;
    if (lo === hi) out.push(` ${nm}:\n${body}\n   = ${num(hi)}`);
    else {
      if (Number.isFinite(hi)) out.push(` ${nm}${Number.isFinite(lo) ? '_ub' : ''}:\n${body}\n   <= ${num(hi)}`);
      if (Number.isFinite(lo)) out.push(` ${nm}${Number.isFinite(hi) ? '_lb' : ''}:\n${body}\n   >= ${num(lo)}`);
    }
  }
  out.push('Bounds');
  for (let i = 0; i < model.names.length; i++) {
    if (model.kind[i] === 'binary') continue;
    const lo = model.lb[i]!;
    const hi = model.ub[i]!;
    const nm = model.names[i]!;
    if (lo === -Infinity && hi === Infinity) out.push(` ${nm} free`);
    else if (lo === 0 && hi === Infinity) continue;
    else out.push(` ${Number.isFinite(lo) ? num(lo) : '-inf'} <= ${nm} <= ${Number.isFinite(hi) ? num(hi) : '+inf'}`);
  }
  const gens = model.names.filter((_, i) => model.kind[i] === 'integer');
  const bins = model.names.filter((_, i) => model.kind[i] === 'binary');
  if (gens.length) out.push('Generals', wrap(gens));
  if (bins.length) out.push('Binaries', wrap(bins));
  out.push('End', '');
  return out.join('\n');
}

/** Solves LP text directly (used to check that `toLpString` round-trips). */
export async function solveLpString(lp: string, opts: SolveOptions = {}): Promise<{ status: string; objective: number; columns: Record<string, number> }> {
  const highs = await highsInstance();
  try {
    const o: Record<string, number | string | boolean> = { output_flag: !!opts.verbose };
    if (opts.timeLimitS !== undefined) o.time_limit = opts.timeLimitS;
    const r = highs.solve(lp, o as never);
    const columns: Record<string, number> = {};
    for (const [k, c] of Object.entries(r.Columns)) columns[k] = (c as { Primal?: number }).Primal ?? NaN;
    return { status: r.Status, objective: r.ObjectiveValue, columns };
  } catch (e) {
    resetHighs();
    throw e;
  }
}
