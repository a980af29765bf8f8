import { agh } from './agh.ts';
import { buildCoefficients } from './coefficients.ts';
import { emptyAllocation, evaluate } from './evaluate.ts';
import { generateProblem } from './generate.ts';
import { DEFAULT_GH_FLAGS, greedy, type GhFlags } from './gh.ts';
import { solveMilp } from './milp.ts';
import type { WarmStart } from './plan.ts';
import { UserError } from '../../util/errors.ts';

/**
 * The paper's studies (digest §4.6, §5): runtime vs size (Table VI), AGH-vs-MILP optimality and the
 * mechanism ablation (Table III). Robustness studies live in robustness.ts. Timing uses performance.now() (wall clock), measured here in the library because timing is the
 * study's output; nothing else reads the clock.
 */

export type Progress = (msg: string) => void;
const quiet: Progress = () => {};

const now = () => performance.now();

// ---------------------------------------------------------------- runtime

export interface RuntimeRow {
  size: [number, number, number];
  ghS: number;
  aghS: number;
  milpS: number;
  milpStatus: string;
  milpVars: number;
  milpRows: number;
  ghObj: number;
  aghObj: number;
  milpObj: number | null;
  milpBound: number | null;
  /** The paper's McCormick encoding, same time limit (null when skipped). */
  paperS: number | null;
  paperStatus: string | null;
  paperRows: number | null;
  paperObj: number | null;
  /** [ours] The compact MILP started from AGH's plan (`plan --solver milp`'s default), same limit; AGH's time not included. */
  warmS: number;
  warmStatus: string;
  warmObj: number | null;
  warmBound: number | null;
}

export const DEFAULT_RUNTIME_SIZES: [number, number, number][] = [[4, 4, 5], [5, 5, 5], [6, 6, 10], [10, 10, 10], [15, 15, 10], [20, 20, 20]];

export async function runtimeStudy(opts: { sizes?: [number, number, number][]; seed?: number; milpTimeLimitS?: number; repeats?: number; paperEncoding?: boolean; progress?: Progress } = {}): Promise<RuntimeRow[]> {
  const sizes = opts.sizes ?? DEFAULT_RUNTIME_SIZES;
  const seed = opts.seed ?? 1;
  const tl = opts.milpTimeLimitS ?? 30;
  const reps = opts.repeats ?? 3;
  const log = opts.progress ?? quiet;
  const rows: RuntimeRow[] = [];
  for (const [I, J, K] of sizes) {
    const c = buildCoefficients(generateProblem(I, J, K, seed));
    // Best of `reps` for the heuristics (sub-second timings are noisy on a shared machine).
    let ghS = Infinity, aghS = Infinity, ghObj = 0, aghObj = 0;
    let aghPlan = emptyAllocation(c);
    for (let r = 0; r < reps; r++) {
      let t0 = now();
      const g = greedy(c);
      ghS = Math.min(ghS, (now() - t0) / 1000);
      ghObj = evaluate(c, g.toAllocation()).objective;
      t0 = now();
      const a = agh(c, { seed });
      aghS = Math.min(aghS, (now() - t0) / 1000);
      aghPlan = a.state.toAllocation();
      aghObj = evaluate(c, aghPlan).objective;
    }
    log(`runtime ${I},${J},${K}: GH ${ghS.toFixed(3)} s, AGH ${aghS.toFixed(3)} s; MILP (limit ${tl} s)...`);
    const m = await solveMilp(c, { encoding: 'compact', timeLimitS: tl, diagnose: false });
    const pm = opts.paperEncoding === false ? null : await solveMilp(c, { encoding: 'paper', timeLimitS: tl, diagnose: false });
    const wm = await solveMilp(c, { encoding: 'compact', timeLimitS: tl, diagnose: false, start: aghPlan });
    rows.push({
      size: [I, J, K], ghS, aghS, milpS: m.solveSeconds, milpStatus: m.status, milpVars: m.vars, milpRows: m.rows,
      ghObj, aghObj, milpObj: m.allocation ? evaluate(c, m.allocation).objective : null, milpBound: m.bound,
      paperS: pm?.solveSeconds ?? null, paperStatus: pm?.status ?? null, paperRows: pm?.rows ?? null,
      paperObj: pm?.allocation ? evaluate(c, pm.allocation).objective : null,
      warmS: wm.solveSeconds, warmStatus: wm.status, warmObj: wm.allocation ? evaluate(c, wm.allocation).objective : null, warmBound: wm.bound,
    });
  }
  return rows;
}

/** The runtime study as a Markdown table (`plan study runtime` and `bench/plan.ts`). */
export function runtimeTable(rows: RuntimeRow[]): string {
  const f = (v: number | null, d = 2) => (v === null ? '-' : v.toFixed(d));
  const lines = [
    '| (I,J,K) | GH s | AGH s | MILP compact s | status | vars | rows | MILP paper s | status | rows | MILP from AGH s | status | GH $ | AGH $ | MILP $ | bound $ | MILP from AGH $ | its bound $ |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(`| (${r.size.join(',')}) | ${r.ghS.toFixed(4)} | ${r.aghS.toFixed(3)} | ${r.milpS.toFixed(2)} | ${r.milpStatus} | ${r.milpVars} | ${r.milpRows} | ` +
      `${f(r.paperS)} | ${r.paperStatus ?? '-'} | ${r.paperRows ?? '-'} | ${r.warmS.toFixed(2)} | ${r.warmStatus} | ` +
      `${f(r.ghObj)} | ${f(r.aghObj)} | ${f(r.milpObj)} | ${f(r.milpBound)} | ${f(r.warmObj)} | ${f(r.warmBound)} |`);
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------- optimality

/** The most seeds per size of the optimality study and its ablation (`--seeds`; as `compare --seeds`): each seed is a MILP solve. */
export const MAX_STUDY_SEEDS = 1000;

function checkSeeds(seeds: number): number {
  if (!(Number.isInteger(seeds) && seeds >= 1 && seeds <= MAX_STUDY_SEEDS)) throw new UserError(`--seeds: expected an integer ≥ 1 and ≤ ${MAX_STUDY_SEEDS}, got ${seeds}`);
  return seeds;
}

export interface OptimalityRow {
  size: [number, number, number];
  seed: number;
  milpStatus: string;
  milpObj: number | null;
  milpBound: number | null;
  aghObj: number;
  /** Algorithm 2 exactly as listed (no [A] extensions). */
  aghExactObj: number;
  ghObj: number;
  /** (AGH − bound) / bound when the MILP proved optimality or gave a bound. */
  aghGap: number | null;
  aghExactGap: number | null;
  ghGap: number | null;
  aghFeasible: boolean;
  /** AGH wall-clock seconds on this instance. */
  aghS: number;
}

export interface Distribution {
  n: number;
  min: number;
  median: number;
  mean: number;
  p90: number;
  max: number;
  within1pct: number;
}

export function distribution(xs: number[]): Distribution {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number) => s[Math.min(s.length - 1, Math.floor(f * (s.length - 1) + 0.5))]!;
  return {
    n: s.length, min: s[0] ?? NaN, median: q(0.5), mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length), p90: q(0.9), max: s[s.length - 1] ?? NaN,
    within1pct: s.filter((v) => v <= 0.01 + 1e-12).length / Math.max(1, s.length),
  };
}

/** `warmStart: 'agh'` starts the reference MILP from AGH's plan (default cold); only proven optima count either way. */
export async function optimalityStudy(opts: { sizes?: [number, number, number][]; seeds?: number; milpTimeLimitS?: number; warmStart?: WarmStart; progress?: Progress } = {}): Promise<{ rows: OptimalityRow[]; bySize: { size: [number, number, number]; agh: Distribution; aghExact: Distribution; gh: Distribution; optimal: number; aghMeanS: number; aghMaxS: number }[] }> {
  const sizes = opts.sizes ?? [[4, 4, 5], [6, 6, 10]];
  const seeds = checkSeeds(opts.seeds ?? 20);
  const tl = opts.milpTimeLimitS ?? 30;
  const log = opts.progress ?? quiet;
  const rows: OptimalityRow[] = [];
  for (const size of sizes) {
    for (let seed = 1; seed <= seeds; seed++) {
      const c = buildCoefficients(generateProblem(size[0], size[1], size[2], seed));
      const t0 = now();
      const a = agh(c, { seed });
      const aghS = (now() - t0) / 1000;
      const aghObj = evaluate(c, a.state.toAllocation()).objective;
      const aghExactObj = evaluate(c, agh(c, { seed, exact: true }).state.toAllocation()).objective;
      const ghObj = evaluate(c, greedy(c).toAllocation()).objective;
      const m = await solveMilp(c, { encoding: 'compact', timeLimitS: tl, diagnose: false, ...(opts.warmStart === 'agh' ? { start: a.state.toAllocation() } : {}) });
      const lb = m.bound;
      rows.push({
        size, seed, milpStatus: m.status, milpObj: m.allocation ? evaluate(c, m.allocation).objective : null, milpBound: lb, aghObj, aghExactObj, ghObj,
        aghGap: lb !== null && lb > 0 ? (aghObj - lb) / lb : null, aghExactGap: lb !== null && lb > 0 ? (aghExactObj - lb) / lb : null, ghGap: lb !== null && lb > 0 ? (ghObj - lb) / lb : null, aghFeasible: a.feasible, aghS,
      });
      log(`optimality ${size.join(',')} seed ${seed}: MILP ${m.status} ${m.objective?.toFixed(2)}, AGH ${aghObj.toFixed(2)}`);
    }
  }
  const bySize = sizes.map((size) => {
    const rs = rows.filter((r) => r.size === size && r.milpStatus === 'optimal');
    const all = rows.filter((r) => r.size === size);
    return {
      size, agh: distribution(rs.map((r) => r.aghGap!)), aghExact: distribution(rs.map((r) => r.aghExactGap!)), gh: distribution(rs.map((r) => r.ghGap!)), optimal: rs.length,
      aghMeanS: all.reduce((a, r) => a + r.aghS, 0) / Math.max(1, all.length), aghMaxS: Math.max(0, ...all.map((r) => r.aghS)),
    };
  });
  return { rows, bySize };
}

// ---------------------------------------------------------------- ablation (Table III)

export interface AblationRow {
  variant: 'AGH' | 'w/o M1' | 'w/o M2' | 'w/o M3';
  feasible: number;
  seeds: number;
  meanCostUsd: number;
  medianCostRatio: number;
  meanServedPct: number;
}

/** AGH with each mechanism off on the base size over seeds; cost ratio vs full AGH on the same seed.
 * `exact: true` ablates Algorithm 2 as listed (no [A]/[ours] extensions), where the mechanisms are not masked
 * by the LP routing and deployment search. */
export function ablationStudy(opts: { size?: [number, number, number]; seeds?: number; exact?: boolean } = {}): AblationRow[] {
  const [I, J, K] = opts.size ?? [6, 6, 10];
  const n = checkSeeds(opts.seeds ?? 20);
  const variants: [AblationRow['variant'], Partial<GhFlags>][] = [['AGH', {}], ['w/o M1', { m1: false }], ['w/o M2', { m2: false }], ['w/o M3', { m3: false }]];
  const acc = variants.map(() => ({ feasible: 0, cost: 0, ratios: [] as number[], served: 0 }));
  for (let seed = 1; seed <= n; seed++) {
    const c = buildCoefficients(generateProblem(I, J, K, seed));
    let base = 0;
    variants.forEach(([, f], v) => {
      const r = agh(c, { seed, flags: { ...DEFAULT_GH_FLAGS, ...f }, ...(opts.exact ? { exact: true } : {}) });
      const ev = evaluate(c, r.state.toAllocation());
      if (v === 0) base = ev.objective;
      const a = acc[v]!;
      if (ev.feasible) a.feasible++;
      a.cost += ev.objective;
      a.ratios.push(ev.objective / base);
      a.served += ev.perType.reduce((x, t) => x + t.served, 0) / I;
    });
  }
  return variants.map(([variant], v) => {
    const a = acc[v]!;
    const r = [...a.ratios].sort((x, y) => x - y);
    return { variant, feasible: a.feasible, seeds: n, meanCostUsd: a.cost / n, medianCostRatio: r[Math.floor(r.length / 2)]!, meanServedPct: (100 * a.served) / n };
  });
}

export * from './robustness.ts';
export * from './sensitivity.ts';
