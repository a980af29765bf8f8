import { closeSync, constants, openSync, readdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { FLEET_CATALOG_FILE, fleetYaml, planToFleet, variantsYaml } from '../../optimize/joint-allocation/fleet-export.ts';
import { dirname, join, resolve } from 'node:path';
import { prepareOutDir } from '../../util/folders.ts';
import type { Command } from 'commander';
import { UserError } from '../../util/errors.ts';
import { buildCoefficients, configsOf } from '../../optimize/joint-allocation/coefficients.ts';
import { generateProblem } from '../../optimize/joint-allocation/generate.ts';
import { buildMilp, checkMilpSize, MilpTooLargeError, type Encoding } from '../../optimize/joint-allocation/milp.ts';
import { DEFAULT_LP_WORK } from '../../optimize/joint-allocation/agh.ts';
import { MILP_SOLVERS, SOLVERS, solveCoefficients, WARM_STARTS, type Plan, type SolverName, type WarmStart } from '../../optimize/joint-allocation/plan.ts';
import { LIMITS, loadProblem, MAX_DIM, MAX_TRIPLES, type Problem } from '../../optimize/joint-allocation/problem.ts';
import { describeHeadroom, parseHeadroom, withHeadroom } from '../../optimize/joint-allocation/headroom.ts';
import { ablationStudy, budgetSweep, capSweep, MAX_GRW_SIGMA, MAX_GRW_TRIALS, MAX_STAGE2_SCENARIOS, MAX_STRESS, MAX_STUDY_SEEDS, MIN_STRESS, optimalityStudy, robustnessStudy, runtimeStudy, runtimeTable, SENSITIVITY_GRIDS, sensitivityStudy, table2Suite, TABLE2_SCENARIOS, type SuiteRow, type SuiteSetting } from '../../optimize/joint-allocation/studies.ts';
import { toLpString } from '../../optimize/highs.ts';
import { checkSimCheckSpan, MAX_SIM_CHECK_REQUESTS, MAX_SIM_CHECK_S, runSimCheck, SIM_CHECK_DEFAULT_S, SIM_CHECK_FILES, type SimCheck } from '../../optimize/joint-allocation/sim-check.ts';
import { parseDecimal } from '../../util/decimal.ts';
import { counterProgress, nonEmptyFlag, say, type Say } from '../util.ts';

interface PlanFlags {
  problem?: string;
  generate?: string;
  seed: string;
  solver: string;
  timeLimit?: string;
  out?: string;
  writeLp?: string;
  encoding: string;
  boundTimeLimit?: string;
  seeds?: string;
  scenarios?: string;
  trials?: string;
  sizes?: string;
  suite?: boolean;
  headroom?: string;
  trace?: string;
  day?: string;
  stresses?: string;
  sigmas?: string;
  budgets?: string;
  caps?: string;
  simCheck?: string | true;
  warmStart?: string;
  aghLpWork?: string;
  quiet?: boolean;
}

/** Flags that only the robustness study reads (named in the error when given elsewhere). */
const ROBUSTNESS_FLAGS = { scenarios: '--scenarios', trials: '--trials', suite: '--suite', trace: '--trace', day: '--day', stresses: '--stresses', sigmas: '--sigmas', budgets: '--budgets', caps: '--caps' } as const;

function onlyForRobustness(f: PlanFlags, where: string): void {
  for (const [k, flag] of Object.entries(ROBUSTNESS_FLAGS)) {
    if (f[k as keyof typeof ROBUSTNESS_FLAGS] !== undefined) throw new UserError(`${flag}: only for plan study robustness, not ${where}`);
  }
}

/** Flags only one plan reads (a study would ignore them), and flags only the studies read. */
const ONE_PLAN_FLAGS = { problem: '--problem', generate: '--generate', solver: '--solver', encoding: '--encoding', boundTimeLimit: '--bound-time-limit', writeLp: '--write-lp', simCheck: '--sim-check', aghLpWork: '--agh-lp-work' } as const;
const STUDY_FLAGS = { seeds: '--seeds', sizes: '--sizes' } as const;

/** Rejects a flag given on the command line (not a default) that `where` would silently ignore. */
function rejectGiven(cmd: Command, flags: Record<string, string>, why: string, where: string): void {
  for (const [k, flag] of Object.entries(flags)) {
    if (cmd.getOptionValueSource(k) === 'cli') throw new UserError(`${flag}: ${why}, not ${where}`);
  }
}

/**
 * The most seconds --time-limit and --bound-time-limit take: one week. HiGHS's time_limit is a double whose
 * default, infinity, means "no limit", so a huge value (1e300) silently ran with none; beyond a week a limit is
 * not one anyone means.
 */
const MAX_TIME_LIMIT_S = 604_800;
const TIME_LIMIT_WHY = 'seconds per HiGHS solve: at most one week';

/** The most values a list flag (--sigmas, --stresses, --budgets, --caps) or --sizes takes: each is a study stage of its own. */
const MAX_LIST = 100;

interface NumOpts {
  int?: boolean;
  min?: number;
  max?: number;
  /** What the number is, in the message's parentheses (e.g. the reason for the maximum). */
  why?: string;
}

/** A bound as the message writes it: 1e12 rather than 1000000000000. */
function bound(n: number): string {
  const e = Math.log10(Math.abs(n));
  return Math.abs(n) >= 1e6 && Number.isInteger(e) ? `${n < 0 ? '-' : ''}1e${e}` : String(n);
}

function num(flag: string, v: string, opts: NumOpts = {}): number {
  const n = parseDecimal(v);
  const { int, min, max } = opts;
  if (!Number.isFinite(n) || (int && !Number.isInteger(n)) || (min !== undefined && n < min) || (max !== undefined && n > max)) {
    const range = [min !== undefined ? `≥ ${bound(min)}` : '', max !== undefined ? `≤ ${bound(max)}` : ''].filter((x) => x).join(' and ');
    throw new UserError(`--${flag}: expected ${int ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}${opts.why ? ` (${opts.why})` : ''}, got ${JSON.stringify(v)}`);
  }
  return n;
}

/** "1,1.2,1.5" → at most MAX_LIST numbers in the range of `opts`; UserError naming the flag. */
function numList(flag: string, v: string, opts: NumOpts): number[] {
  const parts = v.split(',').map((s) => s.trim());
  if (parts.some((s) => s === '')) throw new UserError(`--${flag}: expected comma-separated numbers ≥ ${bound(opts.min ?? -Infinity)}${opts.max !== undefined ? ` and ≤ ${bound(opts.max)}` : ''}, got ${JSON.stringify(v)}`);
  if (parts.length > MAX_LIST) throw new UserError(`--${flag}: expected at most ${MAX_LIST} values, got ${parts.length}`);
  return parts.map((s) => num(flag, s, opts));
}

/** --seed: an integer seed, as a scenario's (|seed| ≤ 2^53 − 1, beyond which integers are no longer exact). */
const parseSeed = (v: string) => num('seed', v, { int: true, min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

function parseSize(flag: string, v: string): [number, number, number] {
  const parts = v.split(',').map((s) => s.trim());
  if (parts.length !== 3) throw new UserError(`--${flag}: expected I,J,K (three positive integers), got ${JSON.stringify(v)}`);
  const [I, J, K] = parts.map((s) => num(flag, s, { int: true, min: 1 })) as [number, number, number];
  if (Math.max(I, J, K) > MAX_DIM || I * J * K > MAX_TRIPLES) {
    throw new UserError(`--${flag}: expected each of I,J,K ≤ ${MAX_DIM} and I·J·K ≤ ${MAX_TRIPLES}, got ${JSON.stringify(v)}`);
  }
  return [I, J, K];
}

function writeOut(dir: string, name: string, data: unknown): void {
  writeFileSync(join(dir, name), JSON.stringify(data, null, 2) + '\n');
}

function fmt(v: number | null, d = 2): string {
  return v === null || !Number.isFinite(v) ? '-' : v.toFixed(d);
}

/** The exact model's size check up front (before any solve), as one line naming the flag and what to do instead. */
function checkExactSize(flag: string, c: Parameters<typeof checkMilpSize>[0], encoding: Encoding, instead: string): void {
  try {
    checkMilpSize(c, encoding);
  } catch (e) {
    if (e instanceof MilpTooLargeError) throw new UserError(`${flag}: ${e.message}; ${instead}`);
    throw e;
  }
}

/** --agh-lp-work's bound: 1e12 work units, hours of AGH. */
const MAX_AGH_LP_WORK = 1e12;

function parseWarmStart(v: string): WarmStart {
  if (!WARM_STARTS.includes(v as WarmStart)) throw new UserError(`--warm-start: expected one of ${WARM_STARTS.join(', ')}, got ${JSON.stringify(v)}`);
  return v as WarmStart;
}

/** The plan's objective for the summary line; a plan-less result (no incumbent, infeasible) says so instead of "$-". */
export function describeObjective(plan: Pick<Plan, 'objective' | 'status'>): string {
  if (plan.objective !== null) return `$${fmt(plan.objective)}`;
  return `none (no feasible plan found${plan.status === 'time-limit' ? ' within the time limit' : ''})`;
}

function printPlan(plan: Plan, o: Say): void {
  o.out(`solver ${plan.solver}  status ${plan.status}  objective ${describeObjective(plan)}  solve ${plan.solveSeconds.toFixed(3)} s` +
    (plan.bound !== null ? `  bound $${fmt(plan.bound)}  gap ${fmt(plan.gap === null ? null : plan.gap * 100, 3)} %` : '') + '\n');
  if (plan.infeasibility) o.out(plan.infeasibility + '\n');
  if (plan.costBreakdown) {
    const b = plan.costBreakdown;
    o.out(`cost: rental $${fmt(b.gpuRental)}  model-storage $${fmt(b.modelStorage)}  data-storage $${fmt(b.dataStorage)}  delay $${fmt(b.delayPenalty)}  unmet $${fmt(b.unmetPenalty)}\n`);
  }
  if (Object.keys(plan.gpusByTier).length) o.out(`GPUs: ${Object.entries(plan.gpusByTier).map(([k, v]) => `${k} ×${v}`).join(', ')}\n`);
  for (const d of plan.deployments) o.out(`  deploy ${d.model} on ${d.tier} TP${d.tp} PP${d.pp} (${d.gpus} GPU${d.gpus === 1 ? '' : 's'}) for ${d.types.join(', ') || '(no type)'}\n`);
  if (plan.perType.length) o.out('per type: delay/Δ and error/ε as (8i)/(8j) weigh them (by served share); per served query: their mean over served queries\n');
  for (const t of plan.perType) {
    const perServed = t.delayPerServedS === null ? '-' : `${fmt(t.delayPerServedS)} s, ${fmt(t.errorPerServed, 4)}`;
    o.out(`  ${t.type.padEnd(20)} served ${(t.served * 100).toFixed(1).padStart(5)} %  delay ${fmt(t.delayS)}/${t.delaySloS} s  error ${fmt(t.error, 4)}/${t.errorSlo}` +
      `  per served query ${perServed}${t.servedOverSlo.length ? `  over SLO: ${t.servedOverSlo.join(', ')}` : ''}\n`);
  }
  if (!plan.feasible && plan.violations.length) o.out(`violations: ${plan.violations.slice(0, 5).map((v) => `${v.family} ${v.where}`).join('; ')}\n`);
  if (plan.headroom) {
    const h = plan.headroom;
    o.out(`headroom: ${describeHeadroom(h)}; the plan's own (inflated) objective $${fmt(h.inflatedObjective)}` +
      (h.inflatedBound !== null ? `, inflated bound $${fmt(h.inflatedBound)}` : '') + '\n');
    const capped = Object.entries(h.sloFactorByType).filter(([, f]) => f < 1 + h.slo);
    if (capped.length) o.out(`  delay/error inflation capped where no candidate meets the SLO beyond: ${capped.map(([t, f]) => `${t} +${((f - 1) * 100).toFixed(1)} %`).join(', ')}\n`);
  }
  for (const n of plan.notes) o.out(`note: ${n}\n`);
}

const STUDIES = ['runtime', 'optimality', 'robustness', 'sensitivity'] as const;

/** The study name and the flags it would ignore, checked before any output folder is made. */
function checkStudyFlags(which: string | undefined, cmd: Command): void {
  if (!(STUDIES as readonly (string | undefined)[]).includes(which)) {
    throw new UserError(`plan study: expected one of ${STUDIES.join(', ')}, got ${JSON.stringify(which ?? '')}`);
  }
  rejectGiven(cmd, ONE_PLAN_FLAGS, 'only for plan (one plan)', `plan study ${which}`);
  if (which !== 'optimality') rejectGiven(cmd, { seeds: '--seeds', warmStart: '--warm-start' }, 'only for plan study optimality', `plan study ${which}`);
  if (which === 'sensitivity') rejectGiven(cmd, { timeLimit: '--time-limit' }, 'only where a MILP is solved', 'plan study sensitivity (AGH only)');
}

/** A study's flags, parsed and checked before any output folder is made or any work starts. */
interface StudyArgs {
  tl: number | undefined;
  seed: number;
  sizes: [number, number, number][] | undefined;
  headroom: ReturnType<typeof parseHeadroom> | undefined;
  seeds: number | undefined;
  scenarios: number | undefined;
  trials: number | undefined;
  budgets: number[] | undefined;
  caps: number[] | undefined;
  stresses: number[] | undefined;
  sigmas: number[] | undefined;
  warmStart: WarmStart;
}

function parseStudyFlags(which: string | undefined, f: PlanFlags): StudyArgs {
  nonEmptyFlag('--out', f.out, 'folder to write study-<name>.json into');
  const tl = f.timeLimit !== undefined ? num('time-limit', f.timeLimit, { min: 0.1, max: MAX_TIME_LIMIT_S, why: TIME_LIMIT_WHY }) : undefined;
  const seed = parseSeed(f.seed);
  if (f.sizes !== undefined && f.sizes.split(';').length > MAX_LIST) throw new UserError(`--sizes: expected at most ${MAX_LIST} sizes, got ${f.sizes.split(';').length}`);
  const sizes = f.sizes !== undefined ? f.sizes.split(';').map((s) => parseSize('sizes', s)) : undefined;
  const headroom = f.headroom !== undefined ? parseHeadroom('headroom', f.headroom) : undefined;
  if (headroom && which !== 'robustness') throw new UserError('--headroom: only for plan (one plan) and plan study robustness (the AGH-H / GH-H / DM-H rows)');
  if (which !== 'robustness') onlyForRobustness(f, `plan study ${which ?? ''}`.trim());
  const seeds = f.seeds !== undefined ? num('seeds', f.seeds, { int: true, min: 1, max: MAX_STUDY_SEEDS, why: 'seeds per size, each a MILP solve' }) : undefined;
  const scenarios = f.scenarios !== undefined ? num('scenarios', f.scenarios, { int: true, min: 1, max: MAX_STAGE2_SCENARIOS, why: 'Stage-2 scenarios per stress; the paper draws 500' }) : undefined;
  const trials = f.trials !== undefined ? num('trials', f.trials, { int: true, min: 1, max: MAX_GRW_TRIALS, why: 'GRW trials per σ; the paper runs 30' }) : undefined;
  const budgets = f.budgets !== undefined ? numList('budgets', f.budgets, { min: 0, max: LIMITS.budgetUsd, why: 'δ in $, at most the problem files\' budgetUsd limit' }) : undefined;
  const caps = f.caps !== undefined ? numList('caps', f.caps, { min: 0 }) : undefined;
  if (caps?.some((v) => v > 1)) throw new UserError(`--caps: each cap is a share of a type's demand in [0, 1] (1 = soft), got ${JSON.stringify(f.caps)}`);
  const stresses = f.stresses !== undefined ? numList('stresses', f.stresses, { min: MIN_STRESS, max: MAX_STRESS, why: 'delay/error multipliers' }) : undefined;
  const sigmas = f.sigmas !== undefined ? numList('sigmas', f.sigmas, { min: 0, max: MAX_GRW_SIGMA, why: 'GRW volatilities σ per 5-min window; the paper\'s are 0.01–0.05' }) : undefined;
  nonEmptyFlag('--trace', f.trace, 'trace file or "none"');
  // The studies' MILPs (compact; the runtime study also the paper encoding) at each --sizes, before any work.
  if (sizes && (which === 'runtime' || which === 'optimality' || which === 'robustness')) {
    const p = generateProblem(1, 1, 1, seed);
    for (const [I, J, K] of which === 'robustness' ? sizes.slice(0, 1) : sizes) {
      for (const enc of which === 'runtime' ? (['compact', 'paper'] as const) : (['compact'] as const)) {
        checkExactSize(`--sizes ${I},${J},${K}`, { I, J, K, configs: configsOf(p), p }, enc, 'use smaller --sizes');
      }
    }
  }
  // The optimality study's reference MILP is cold unless asked (the start only speeds the proof: a gap is counted
  // only where the MILP proved its optimum).
  const warmStart = parseWarmStart(f.warmStart ?? 'none');
  return { tl, seed, sizes, headroom, seeds, scenarios, trials, budgets, caps, stresses, sigmas, warmStart };
}

async function runStudy(which: string | undefined, f: PlanFlags, a: StudyArgs, o: Say): Promise<void> {
  const progress = (m: string) => o.err(m + '\n');
  const { tl, seed, sizes, headroom, seeds, scenarios, trials, budgets, caps, stresses, sigmas, warmStart } = a;
  let result: unknown;
  switch (which) {
    case 'runtime': {
      const rows = await runtimeStudy({ seed, progress, ...(tl !== undefined ? { milpTimeLimitS: tl } : {}), ...(sizes ? { sizes } : {}) });
      o.out(runtimeTable(rows));
      result = rows;
      break;
    }
    case 'optimality': {
      const r = await optimalityStudy({ progress, warmStart, ...(tl !== undefined ? { milpTimeLimitS: tl } : {}), ...(sizes ? { sizes } : {}), ...(seeds !== undefined ? { seeds } : {}) });
      o.out('Gap to the proven MILP optimum over the seeds where the MILP finished (optimal).\n| (I,J,K) | MILP optimal | method | min / median / mean / p90 / max | within 1 % |\n|---|---|---|---|---|\n');
      for (const s of r.bySize) {
        const pc = (v: number) => (v * 100).toFixed(2) + ' %';
        for (const [name, d] of [['AGH', s.agh], ['AGH exact', s.aghExact], ['GH', s.gh]] as const) {
          o.out(`| (${s.size.join(',')}) | ${s.optimal} | ${name} | ${pc(d.min)} / ${pc(d.median)} / ${pc(d.mean)} / ${pc(d.p90)} / ${pc(d.max)} | ${(d.within1pct * 100).toFixed(0)} % |\n`);
        }
      }
      for (const s of r.bySize) o.out(`AGH time (${s.size.join(',')}): mean ${s.aghMeanS.toFixed(3)} s, max ${s.aghMaxS.toFixed(3)} s\n`);
      const abSeeds = seeds ?? 20;
      const ab = ablationStudy({ seeds: abSeeds });
      const abExact = ablationStudy({ seeds: abSeeds, exact: true });
      for (const [title, rows] of [['AGH', ab], ['AGH exact (Algorithm 2 as listed)', abExact]] as const) {
        o.out(`\nAblation (Table III) on (6,6,10), ${title}\n| variant | feasible | mean cost $ | median cost / full | mean served % |\n|---|---|---|---|---|\n`);
        for (const a of rows) o.out(`| ${a.variant} | ${a.feasible}/${a.seeds} | ${fmt(a.meanCostUsd)} | ${a.medianCostRatio.toFixed(3)} | ${a.meanServedPct.toFixed(1)} |\n`);
      }
      result = { ...r, ablation: ab, ablationExact: abExact };
      break;
    }
    case 'robustness': {
      const r = await robustnessStudy({
        seed, progress, ...(tl !== undefined ? { milpTimeLimitS: tl } : {}), ...(sizes ? { size: sizes[0]! } : {}),
        ...(scenarios !== undefined ? { scenarios } : {}),
        ...(trials !== undefined ? { trials } : {}),
        ...(headroom ? { headroom } : {}),
        ...(f.trace !== undefined ? { tracePath: f.trace === 'none' ? null : resolve(f.trace) } : {}),
        ...(f.day !== undefined ? { traceDay: f.day } : {}),
        ...(stresses ? { stresses } : {}),
        ...(sigmas ? { sigmas } : {}),
      });
      o.out(`headroom of AGH-H / GH-H / DM-H: ${describeHeadroom(r.headroom)}\n`);
      o.out('nominal (Stage 1): ' + r.nominal.map((n) => `${n.method} $${fmt(n.objective)} (${n.gpus} GPU${n.gpus === 1 ? '' : 's'}${n.feasible ? '' : ', infeasible'})`).join('; ') + '\n');
      for (const s of r.scenarios) {
        o.out(`\nStage 2, ${s.count} scenarios, stress ×${s.stress}\n| method | Stage-1 $ | expected cost $ | violation % | served % |\n|---|---|---|---|---|\n`);
        for (const x of s.rows) o.out(`| ${x.method} | ${fmt(x.stage1Usd)} | ${fmt(x.expectedCostUsd)} | ${fmt(x.violationPct, 1)} | ${fmt(x.servedPct, 1)} |\n`);
      }
      o.out('\nGRW volatility (static plans, mean cost per window on the 24-h scale)\n| σ | ' + (r.grw[0]?.rows.map((x) => x.method).join(' | ') ?? '') + ' |\n');
      for (const g of r.grw) o.out(`| ${g.sigma} | ${g.rows.map((x) => `$${fmt(x.meanCostUsd)} (${fmt(x.violationPct, 1)} %)`).join(' | ')} |\n`);
      if (r.diurnal) {
        const d = r.diurnal;
        const what = d.span.kind === 'day' ? `${d.span.day}${d.span.busiest ? ', the busiest day' : ''}` : 'whole span';
        o.out(`\nTrace replay of ${d.source} (${what}, ${d.requests} requests; ${d.bins} windows, peak/trough ${d.peakToTrough.toFixed(1)}×)\n| method | mean cost/window $ | total $ | violation % |\n|---|---|---|---|\n`);
        for (const x of r.diurnal.rows) o.out(`| ${x.method} | ${fmt(x.meanCostPerWindowUsd)} | ${fmt(x.totalUsd)} | ${fmt(x.violationPct, 1)} |\n`);
      }
      const suites: { key: 'table2' | 'budgetSweep'; title: string; settings: readonly SuiteSetting[] }[] = [];
      if (f.suite) suites.push({ key: 'table2', title: 'Table II suite (δ, φ_v)', settings: TABLE2_SCENARIOS });
      if (budgets) suites.push({ key: 'budgetSweep', title: 'Budget sweep (Fig. 2; δ at the (6,6,10) scale, φ_v = 1)', settings: budgetSweep(budgets) });
      const suiteRows: Partial<Record<'table2' | 'budgetSweep', SuiteRow[]>> = {};
      for (const sw of suites) {
        const rows = await table2Suite({
          seed, progress, settings: sw.settings, ...(tl !== undefined ? { milpTimeLimitS: tl } : {}), ...(sizes ? { size: sizes[0]! } : {}),
          ...(scenarios !== undefined ? { scenarios } : {}),
          ...(headroom ? { headroom } : {}),
        });
        o.out(`\n${sw.title}, Stage 2 at stress ×1\n| scenario | method | Stage-1 $ | expected cost $ | violation % |\n|---|---|---|---|---|\n`);
        for (const x of rows) o.out(`| ${x.scenario} | ${x.method} | ${fmt(x.stage1Usd)} | ${fmt(x.expectedCostUsd)} | ${fmt(x.violationPct, 1)} |\n`);
        suiteRows[sw.key] = rows;
      }
      let capRows: Awaited<ReturnType<typeof capSweep>> | null = null;
      if (caps) {
        capRows = await capSweep({
          seed, progress, caps, ...(stresses ? { stresses } : {}), ...(tl !== undefined ? { milpTimeLimitS: tl } : {}), ...(sizes ? { size: sizes[0]! } : {}),
          ...(scenarios !== undefined ? { scenarios } : {}),
        });
        o.out('\nUnmet-cap sweep (Fig. 4): ζ on every type at Stage 1; violation = unserved share above ζ (1 % for soft)\n| ζ | stress | method | meets ζ at Stage 1 | Stage-1 $ | expected cost $ | violation % | served % |\n|---|---|---|---|---|---|---|---|\n');
        for (const x of capRows.rows) o.out(`| ${x.cap} | ×${x.stress} | ${x.method} | ${x.meetsCapAtStage1 ? 'yes' : 'no'} | ${fmt(x.stage1Usd)} | ${fmt(x.expectedCostUsd)} | ${fmt(x.violationPct, 1)} | ${fmt(x.servedPct, 1)} |\n`);
        for (const x of capRows.infeasible) o.out(`| ${x.cap} | — | ${x.method} | infeasible | | | | |\n`);
      }
      result = { ...r, table2: suiteRows.table2 ?? null, ...(suiteRows.budgetSweep ? { budgetSweep: suiteRows.budgetSweep } : {}), ...(capRows ? { capSweep: capRows } : {}) };
      break;
    }
    case 'sensitivity': {
      const pts = sensitivityStudy({ seed, progress, ...(sizes ? { size: sizes[0]! } : {}) });
      o.out('AGH re-planned per grid point (Fig. 5d–f). Cell: objective $ / GPUs (pairs) / TFLOPS per GPU / % GPUs on quantised tiers / % served\n');
      for (const [grid, g] of Object.entries(SENSITIVITY_GRIDS)) {
        o.out(`\n${grid}\n| ${g.a.name} \\ ${g.b.name} | ${g.b.values.join(' | ')} |\n|---|${g.b.values.map(() => '---|').join('')}\n`);
        for (const a of g.a.values) {
          const cells = pts.filter((p) => p.grid === grid && p.a === a).map((p) => `${fmt(p.objective)} / ${p.gpus} (${p.pairs}) / ${p.tflopsPerGpu.toFixed(0)} / ${(100 * p.quantizedGpuShare).toFixed(0)} / ${p.servedPct.toFixed(1)}`);
          o.out(`| ${a} | ${cells.join(' | ')} |\n`);
        }
      }
      result = pts;
      break;
    }
    default:
      throw new UserError(`plan study: expected one of runtime, optimality, robustness, sensitivity, got ${JSON.stringify(which ?? '')}`);
  }
  if (f.out !== undefined) writeOut(f.out, `study-${which}.json`, result);
}

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('Joint model / GPU-tier / parallelism / routing allocation (seed 002): MILP on HiGHS, GH, AGH, baselines')
    .argument('[mode]', '"study" to run a study')
    .argument('[which]', 'study: runtime | optimality | robustness | sensitivity')
    .option('--problem <file>', 'problem file (YAML or JSON)')
    .option('--generate <I,J,K>', 'generate a random instance of this size')
    .option('--seed <n>', 'seed for --generate, AGH orderings and studies', '1')
    .option('--solver <name>', `one of ${SOLVERS.join(', ')}`, 'agh')
    .option('--time-limit <s>', `MILP time limit in seconds (plan: default 600 as in the paper; studies: per solve, default 30, robustness 60; not for sensitivity): HiGHS\'s time per solve, presolve included; building the model is not counted, nor the re-solves that confirm and diagnose an infeasible result, and HiGHS can overrun it on large models; at most ${MAX_TIME_LIMIT_S} (one week)`)
    .option('--bound-time-limit <s>', `heuristics: MILP seconds spent for a bound to report the gap (0 = skip; skipped with a note when the MILP is too large); when it proves the problem infeasible, the diagnosis of --solver milp is printed too (its re-solves not counted); at most ${MAX_TIME_LIMIT_S} (one week)`, '10')
    .option('--warm-start <from>', `--solver milp: start HiGHS from this plan (${WARM_STARTS.join(' or ')}; default agh: AGH's plan, found in under a second and counted in the solve time, so a plan stopped at the time limit is never worse than AGH's; none: a cold solve, as the studies' exact solver); plan study optimality: the reference MILP's start (default none)`)
    .option('--agh-lp-work <n>', `AGH (--solver agh, and the MILP's start): the simplex work budget of its LP routing and deployment search (default ${DEFAULT_LP_WORK.toExponential(0)}, ≈ 0.9 s at (20,20,20), 1.2 s at (10,10,10); more finds cheaper plans on larger instances, in proportion more time; 0 = no LP routing; at most ${MAX_AGH_LP_WORK.toExponential(0)})`)
    .option('--encoding <enc>', 'MILP encoding: paper (McCormick, default) or compact (exact, smaller)', 'paper')
    .option('--out <dir>', 'write plan.json, problem.json and fleet.yaml (+ catalog.yaml for quantised tiers) here (studies: study-<name>.json)')
    .option('--write-lp <file>', 'write the MILP in CPLEX LP format')
    .option('--quiet', 'print nothing but errors (the files are still written)')
    .option('--seeds <n>', `optimality study: seeds per size, and of its ablation (default 20, at most ${MAX_STUDY_SEEDS})`)
    .option('--scenarios <n>', `robustness study: Stage-2 scenarios per stress (default 500, at most ${MAX_STAGE2_SCENARIOS.toLocaleString('en-US')})`)
    .option('--trials <n>', `robustness study: GRW trials per σ (default 3, at most ${MAX_GRW_TRIALS})`)
    .option('--sizes <list>', `studies: sizes as "I,J,K;I,J,K", at most ${MAX_LIST} (robustness, sensitivity: the first only; default (6,6,10); optimality (4,4,5);(6,6,10); runtime six sizes up to (20,20,20))`)
    .option('--suite', 'robustness study: also run the Table II scenarios S1–S5 (δ, φ_v)')
    .option('--caps <list>', 'robustness study: also run the unmet-cap sweep (Fig. 4) over these ζ, e.g. 0.01,0.02,0.05,1 (1 = soft); AGH, GH, DM at the --stresses')
    .option('--budgets <list>', 'robustness study: also run a budget sweep (Fig. 2) over these δ, $ at the (6,6,10) scale, each in [0, 1e12], e.g. 50,72,100,150')
    .option('--stresses <list>', `robustness study: delay/error stress multipliers of the Stage-2 scenarios, each in [${MIN_STRESS}, ${MAX_STRESS}] (default 1,1.5; Fig. 5: 1,1.2,1.5)`)
    .option('--sigmas <list>', `robustness study: GRW volatilities σ, each in [0, ${MAX_GRW_SIGMA}] (default 0.01,0.03,0.05)`)
    .option('--trace <file>', 'robustness study: trace for the diurnal replay (default the bundled Azure 2023 code sample; "none" skips it)')
    .option('--day <YYYY-MM-DD|busiest>', 'robustness study: the UTC day of the trace to replay (default: the busiest day of a multi-day trace, else the whole span)')
    .option('--headroom <d,s>', 'plan against demand × (1+d) and delay/error × (1+s), then report on the nominal coefficients (default off; robustness study: headroom of the AGH-H / GH-H / DM-H rows, default 0.2,0.25)')
    .option('--sim-check [seconds]', `simulate the plan (its fleet and the problem's query types, default ${SIM_CHECK_DEFAULT_S} s of arrivals; at most ${MAX_SIM_CHECK_S} s (one week) and ${MAX_SIM_CHECK_REQUESTS.toLocaleString('en-US')} requests at the problem's full demand) and compare each type's simulated E2E with the plan's delay per served query and Δ_i; writes sim-check/ under --out (else out/plan-sim-check)`)
    .addHelpText('after', '\nExit status: 0 whenever the solve ran, whatever the plan\'s status (infeasible and time-limit included: read\n' +
      '"status" in the first line or plan.json); 2 for bad input (a flag, a problem file, an instance too large).')
    .action(async (mode: string | undefined, which: string | undefined, f: PlanFlags, cmd: Command) => {
      if (mode !== undefined && mode !== 'study') {
        // `plan runtime` left out `study`; `plan stduy runtime` misspelled it.
        const hint = (STUDIES as readonly string[]).includes(mode) || which === undefined ? `plan study ${mode}` : `plan study ${which}`;
        throw new UserError(`plan: unexpected argument ${JSON.stringify(mode)} (did you mean "${hint}"?)`);
      }
      if (mode === 'study') {
        checkStudyFlags(which, cmd);
        const args = parseStudyFlags(which, f);
        if (f.out !== undefined) prepareOutDir('--out', f.out);
        return runStudy(which, f, args, say(f.quiet ?? false));
      }
      onlyForRobustness(f, 'plan (one plan)');
      rejectGiven(cmd, STUDY_FLAGS, 'only for plan study', 'plan (one plan)');
      // Every flag before any folder is made or any work starts.
      if (!SOLVERS.includes(f.solver as SolverName)) throw new UserError(`--solver: expected one of ${SOLVERS.join(', ')}, got ${JSON.stringify(f.solver)}`);
      const warmStart = parseWarmStart(f.warmStart ?? 'agh');
      const aghLpWork = f.aghLpWork !== undefined ? num('agh-lp-work', f.aghLpWork, { min: 0, max: MAX_AGH_LP_WORK, why: 'simplex work units; the default runs AGH in under a second' }) : undefined;
      if (aghLpWork !== undefined && f.solver !== 'agh' && f.solver !== 'milp') throw new UserError(`--agh-lp-work: only for --solver agh or milp (its start), not --solver ${f.solver}`);
      if (f.warmStart !== undefined && f.solver !== 'milp') throw new UserError(`--warm-start: only for --solver milp, not --solver ${f.solver}`);
      if (f.encoding !== 'paper' && f.encoding !== 'compact') throw new UserError(`--encoding: expected paper or compact, got ${JSON.stringify(f.encoding)}`);
      nonEmptyFlag('--problem', f.problem, 'problem file (YAML or JSON)');
      if ((f.problem === undefined) === (f.generate === undefined)) throw new UserError('plan: give exactly one of --problem FILE or --generate I,J,K');
      nonEmptyFlag('--out', f.out, 'folder to write plan.json, problem.json and fleet.yaml into');
      nonEmptyFlag('--write-lp', f.writeLp, 'file to write the MILP into (CPLEX LP format)');
      const seed = parseSeed(f.seed);
      const headroom = f.headroom !== undefined ? parseHeadroom('headroom', f.headroom) : undefined;
      const simCheckS = f.simCheck === undefined ? undefined : f.simCheck === true ? SIM_CHECK_DEFAULT_S
        : num('sim-check', f.simCheck, { min: 1, max: MAX_SIM_CHECK_S, why: `seconds of arrivals: at most one week, and ${MAX_SIM_CHECK_REQUESTS.toLocaleString('en-US')} requests` });
      const tl = f.timeLimit !== undefined ? num('time-limit', f.timeLimit, { min: 0.1, max: MAX_TIME_LIMIT_S, why: TIME_LIMIT_WHY }) : undefined;
      const btl = num('bound-time-limit', f.boundTimeLimit ?? '10', { min: 0, max: MAX_TIME_LIMIT_S, why: TIME_LIMIT_WHY });
      // Flags this solver would ignore (a run that looked limited, or encoded, and was not).
      if (tl !== undefined && !MILP_SOLVERS.includes(f.solver as SolverName)) throw new UserError(`--time-limit: only for the solvers that run a MILP (${MILP_SOLVERS.join(', ')}), not --solver ${f.solver} (its bound's MILP takes --bound-time-limit)`);
      if (f.solver === 'milp') rejectGiven(cmd, { boundTimeLimit: '--bound-time-limit' }, 'only for the heuristics and baselines (the MILP reports its own bound; its time is --time-limit)', '--solver milp');
      if (f.solver !== 'milp' && f.writeLp === undefined) rejectGiven(cmd, { encoding: '--encoding' }, 'only for --solver milp and --write-lp (the bound of the other solvers uses the compact encoding)', `--solver ${f.solver}`);
      const generate = f.generate !== undefined ? parseSize('generate', f.generate) : undefined;
      const problem: Problem = generate ? generateProblem(...generate, seed) : loadProblem(resolve(f.problem!));
      // The check's request count (at the problem's full demand) before the solve, not after it.
      if (simCheckS !== undefined) checkSimCheckSpan(problem, simCheckS);
      if (f.out !== undefined) prepareOutDir('--out', f.out);
      if (f.writeLp !== undefined) {
        prepareOutDir('--write-lp (its folder)', dirname(resolve(f.writeLp)));
        const st = statSync(resolve(f.writeLp), { throwIfNoEntry: false });
        if (st?.isDirectory()) throw new UserError(`--write-lp ${f.writeLp}: expected a file to write, got a folder`);
        // A FIFO nobody reads blocked the write (and the run) for ever; one with a reader (>(gzip > m.lp.gz)) is fine.
        if (st?.isFIFO()) {
          let fd: number;
          try {
            fd = openSync(resolve(f.writeLp), constants.O_WRONLY | constants.O_NONBLOCK);
          } catch {
            throw new UserError(`--write-lp ${f.writeLp}: a pipe that nothing reads; expected a file to write (or a pipe with a reader)`);
          }
          closeSync(fd);
        }
      }
      if (simCheckS !== undefined && f.out === undefined) prepareOutDir('--sim-check (its folder)', join('out', 'plan-sim-check'));
      const c = buildCoefficients(problem);
      const encoding = f.encoding as Encoding;
      // The exact model's size before any work: milp builds it in --encoding, lpr and hf in the compact one.
      if (f.solver === 'milp' || f.solver === 'lpr' || f.solver === 'hf') {
        checkExactSize(`--solver ${f.solver}`, c, f.solver === 'milp' ? encoding : 'compact', 'use --solver agh or gh (heuristics)');
      }
      if (f.writeLp !== undefined) {
        checkExactSize('--write-lp', c, encoding, 'leave out --write-lp');
        // With --headroom the LP file is the inflated model the MILP solves.
        const lp = toLpString(buildMilp(headroom ? withHeadroom(c, headroom) : c, { encoding }).model);
        try {
          writeFileSync(f.writeLp, lp);
        } catch (e) {
          throw new UserError(`--write-lp ${f.writeLp}: cannot write there: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      // What the solve is doing, on a terminal only: AGH takes minutes from about (100,100,100), a MILP up to --time-limit.
      const o = say(f.quiet ?? false);
      const status = counterProgress(f.quiet ?? false, `planning (--solver ${f.solver}) | {what}`, { what: 'starting' });
      let plan: Plan;
      try {
        plan = await solveCoefficients(c, {
          solver: f.solver as SolverName, seed, encoding, boundTimeLimitS: btl, ...(tl !== undefined ? { timeLimitS: tl } : {}),
          ...(headroom ? { headroom } : {}), warmStart, ...(aghLpWork !== undefined ? { aghLpWork } : {}),
          progress: (what) => status.set({ what }),
        });
      } finally {
        status.stop();
      }
      printPlan(plan, o);
      if (f.out !== undefined) {
        removeConditionalOutputs(f.out);
        writeOut(f.out, 'plan.json', plan);
        // The plan as a simulator fleet, to check its SLO claims by simulation; quantised tiers' weight-only model
        // variants in catalog.yaml beside it (fleet.yaml names it).
        const exported = planToFleet(plan, problem);
        writeFileSync(join(f.out, 'fleet.yaml'), fleetYaml(exported));
        const variants = variantsYaml(exported);
        if (variants !== null) writeFileSync(join(f.out, FLEET_CATALOG_FILE), variants);
        // The problem as planned (a generated one, or the file with its defaults filled in): never a stale one beside a new plan.
        writeOut(f.out, 'problem.json', problem);
        o.out(`wrote ${f.out}/plan.json, fleet.yaml${variants !== null ? `, ${FLEET_CATALOG_FILE}` : ''}, problem.json\n`);
        if (exported.unmapped.length > 0) {
          o.out(`note: fleet.yaml names what the simulator's catalog lacks: ${exported.unmapped.join(', ')} (models match by name, hardware by each tier's hardware field; add them with a scenario catalog: file)\n`);
        }
      }
      if (simCheckS !== undefined) {
        const dir = join(f.out ?? 'out', f.out !== undefined ? 'sim-check' : 'plan-sim-check');
        const check = runSimCheck(problem, plan, dir, { durationS: simCheckS, seed });
        printSimCheck(check, dir, o);
        if (f.out !== undefined) writeOut(f.out, 'sim-check.json', check);
      }
    });
}

/**
 * What `plan --out` writes on some runs only (`--sim-check`; catalog.yaml, for a plan with quantised tiers): removed
 * before a new plan.json is written, so none from an earlier run stays beside it (a run without --sim-check, or one
 * whose check fails; a plan without quantised tiers). Only the files plan writes: sim-check/ itself goes only when
 * that leaves it empty.
 */
function removeConditionalOutputs(out: string): void {
  const isFile = (p: string) => statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
  for (const name of ['sim-check.json', FLEET_CATALOG_FILE]) if (isFile(join(out, name))) rmSync(join(out, name));
  const dir = join(out, 'sim-check');
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return;
  for (const name of SIM_CHECK_FILES) if (isFile(join(dir, name))) rmSync(join(dir, name));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}

function printSimCheck(check: SimCheck, dir: string, o: Say): void {
  const s = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const lines = [`sim-check: ${check.requests} requests over ${check.durationS} s simulated (${dir}/scenario.yaml); plan delay: its mean per served query`];
  lines.push('  type                 plan delay s   Δ s   sim mean E2E s   sim p95 E2E s   over Δ');
  for (const t of check.types) {
    lines.push(`  ${t.type.padEnd(20)} ${t.planDelayS.toFixed(2).padStart(12)} ${t.delaySloS.toFixed(2).padStart(6)} ${s(t.meanE2eS).padStart(16)} ${s(t.p95E2eS).padStart(15)} ${(t.overSlo * 100).toFixed(1).padStart(7)} %`);
  }
  o.out(lines.join('\n') + '\n');
}
