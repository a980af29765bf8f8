import type { Command } from 'commander';
import { statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../../util/errors.ts';
import { nonEmptyFlag, notAPipe, outDirFlag, requireFile, say } from '../util.ts';
import { BUILTIN_CATALOG, getModel, loadCatalogFile } from '../../model/catalog.ts';
import { loadProfileTable } from '../../perf/profile-table.ts';
import { calibrate, type CalibrationResult, type ErrorStats } from '../../perf/calibrate.ts';
import { checkVidurProfiles, type VidurCheckResult } from '../../perf/vidur-check.ts';
import { BUNDLED_STEPS, checkMeasuredSteps, type StepCheckResult } from '../../perf/step-check.ts';
import type { RowGroupCheck } from '../../perf/measured-check.ts';
import { bundledPath } from '../../util/paths.ts';
import { checkSimAgainstLive, type LatencyAgreement, type SimLiveCheck } from '../../metrics/sim-vs-live.ts';
import { formatLatency } from '../../report/format.ts';

const BUNDLED_PROFILE = bundledPath('data/profiles/splitwise_perf_model.csv');
const BUNDLED_VIDUR = bundledPath('data/profiles/vidur');

function collectMap(value: string, prev: Record<string, string> = {}): Record<string, string> {
  const m = /^([^=\s]+)=([^=\s]+)$/.exec(value);
  if (!m) throw new UserError(`--map: expected PROFILE_MODEL=CATALOG_MODEL, got '${value}'`);
  return { ...prev, [m[1]!]: m[2]! };
}

const pct = (s: ErrorStats): string => (s.n === 0 ? '-' : `${s.mape.toFixed(1)}%`);

/** Lines of a table: the first column left-aligned, the others right-aligned. */
function fixedWidth(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), ...rows.map(line)];
}

/** The result as a fixed-width table (one line per key), for stdout. */
export function formatCalibration(r: CalibrationResult): string {
  const head = ['key', 'prefill test MAPE', '(n)', 'decode test MAPE', '(n)', 'prefill train', 'decode train'];
  const rows = r.keys.map((k) => [
    k.key,
    pct(k.prefill.test),
    String(k.prefill.test.n),
    pct(k.decode.test),
    String(k.decode.test.n),
    pct(k.prefill.train),
    pct(k.decode.train),
  ]);
  const out = [...fixedWidth(head, rows), ''];
  out.push('fitted factors (per profile hardware):');
  for (const h of r.hardware) {
    const e = h.efficiency;
    out.push(
      `  ${h.profileHardware} (datasheet ${h.catalogHardware}): compute ${e.compute.toFixed(3)}, memory ${e.memory.toFixed(3)}, ` +
        `comm ${e.comm.toFixed(3)}, step ${(e.stepOverheadS * 1e3).toFixed(2)} ms, prefill +${(e.prefillOverheadS * 1e3).toFixed(2)} ms, ` +
        `per seq ${(e.perSeqOverheadS * 1e3).toFixed(3)} ms, all-reduce hop ${(e.allReduceHopLatencyS * 1e6).toFixed(2)} µs` +
        (e.commKneeTokens !== undefined ? `, past ${e.commKneeTokens.toFixed(0)} tokens comm ${e.largeStepComm?.toFixed(3)}` : '') +
        (h.notFitted.length > 0 ? ` (${h.notFitted.join(' and ')} not fitted: every row is at TP 1; the defaults kept)` : ''),
    );
  }
  for (const x of r.excluded) {
    out.push(`excluded ${x.key} ${x.phase} ${x.point}: measured ${(x.measuredS * 1e3).toFixed(0)} ms < datasheet bound ${(x.lowerBoundS * 1e3).toFixed(0)} ms`);
  }
  for (const s of r.skipped) out.push(`skipped ${s.key}: ${s.reason}`);
  return out.join('\n');
}

const ms = (x: number): string => (x < 0.1 ? x.toFixed(4) : x.toFixed(3));

/** One line per row group: held-out error under each set of factors, and the smallest and largest rows. */
function rowGroupTable(keys: readonly RowGroupCheck[], name: (k: RowGroupCheck) => string, unit: (k: RowGroupCheck) => string): string[] {
  const head = ['row group', 'test MAPE default', 'calibrated', 'fitted', '(n)', 'smallest: measured / default ms', 'largest: measured / default ms'];
  const rows = keys.map((k) => {
    const [lo, , hi] = k.samples;
    return [
      name(k),
      pct(k.test.default),
      k.test.calibrated ? pct(k.test.calibrated) : '-',
      pct(k.test.fitted),
      String(k.test.fitted.n),
      `${lo!.label}${unit(k)}: ${ms(lo!.measuredMs)} / ${ms(lo!.defaultMs)}`,
      `${hi!.label}${unit(k)}: ${ms(hi!.measuredMs)} / ${ms(hi!.defaultMs)}`,
    ];
  });
  return fixedWidth(head, rows);
}

/** The Vidur check as a fixed-width table (one line per row group), for stdout. */
export function formatVidurCheck(r: VidurCheckResult): string {
  const out = [
    ...rowGroupTable(r.keys, (k) => `${k.kind} ${k.key}`, (k) => (k.kind === 'layer' ? ' tok' : ' B')),
    '',
    'fitted here (on alternate rows; the error above is on the others):',
  ];
  for (const f of r.fits) {
    const e = f.fitted;
    out.push(
      f.kind === 'layer'
        ? `  layers on ${f.group} (datasheet ${f.hardware}): compute ${e.compute!.toFixed(3)}, memory ${e.memory!.toFixed(3)}, + ${(e.perLayerOverheadS! * 1e6).toFixed(1)} µs per layer`
        : `  all-reduce on ${f.group} (datasheet ${f.hardware}): comm ${e.comm!.toFixed(3)}, hop ${(e.allReduceHopLatencyS! * 1e6).toFixed(2)} µs`,
    );
  }
  for (const s of r.skipped) out.push(`skipped ${s.file}: ${s.reason}`);
  return out.join('\n');
}

/** The measured-step check as a fixed-width table, for stdout. */
export function formatStepCheck(r: StepCheckResult): string {
  const out = [
    ...rowGroupTable(r.keys, (k) => k.key, (k) => (k.kind === 'prefill' ? ' B×prompt' : k.kind === 'decode' ? ' B×context' : k.kind === 'prefix' ? ' chunk@cached' : ' chunk+B×context')),
    '',
    'GPU work only: the engine overheads (step, prefill, per sequence) are zero on both sides.',
    'fitted here (prefill and graph-replayed decode, alternate rows; the error above is on the others):',
  ];
  for (const f of r.fits) {
    const e = f.fitted;
    out.push(`  ${f.group}: compute ${e.compute!.toFixed(3)}, memory ${e.memory!.toFixed(3)}, + ${(e.perLayerOverheadS! * 1e6).toFixed(1)} µs per layer`);
  }
  return out.join('\n');
}

/** The sim-vs-live check for stdout. */
export function formatSimLiveCheck(r: SimLiveCheck): string {
  const q = r.requests;
  const rows = (['ttft', 'e2e'] as const).map((k) => {
    const a: LatencyAgreement = r[k];
    if (a.n === 0) return [k.toUpperCase(), '0', '–', '–', '–', '–', '–', '–', '–'];
    const signed = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
    return [k.toUpperCase(), String(a.n), formatLatency(a.live.p50), formatLatency(a.sim.p50), formatLatency(a.live.p99), formatLatency(a.sim.p99), `${(a.mape * 100).toFixed(1)}%`, signed(a.bias), a.pearson === null ? '–' : a.pearson.toFixed(3)];
  });
  return [
    `${q.matched} requests in both (${q.simOnly} only simulated, ${q.liveOnly} only replayed); ${q.bothCompleted} completed in both` +
      (q.liveLengthDiffers > 0 ? `; ${q.liveLengthDiffers} of those got another output length live, left out of E2E` : ''),
    ...fixedWidth(['metric', 'n', 'live p50', 'sim p50', 'live p99', 'sim p99', 'MAPE', 'bias', 'Pearson r'], rows),
    'MAPE: mean |sim − live| / live per request; bias: (Σ sim − Σ live) / Σ live (+ = the simulator is slower)',
  ].join('\n');
}

/** A requests.csv given as the file or as the run's output folder. */
function requestsCsv(flag: string, path: string): string {
  const abs = resolve(nonEmptyFlag(flag, path, 'folder or requests.csv'));
  return statSync(abs, { throwIfNoEntry: false })?.isDirectory() ? requireFile(flag, join(abs, 'requests.csv')) : requireFile(flag, abs);
}

export function registerCalibrate(program: Command): void {
  program
    .command('calibrate')
    .description('Fit the roofline efficiency factors on part of a profile table and report held-out MAPE')
    .option('--profile <file>', 'SplitwiseSim-format profile CSV', BUNDLED_PROFILE)
    .option('--out <dir>', 'folder for calibration.json (vidur-check.json with --vidur, step-check.json with --steps, sim-live-check.json with --replay)', 'out/calibrate')
    .option('--map <key=model>', 'map a profile model key to a catalog model (repeatable)', collectMap)
    .option('--fit-per <what>', "one set of factors per 'hardware' or per 'key' (diagnostic)", 'hardware')
    .option('--no-large-step-comm', 'fit the plain roofline, without the large-step communication knee (ablation)')
    .option('--vidur [dir]', "instead: check the roofline's layer and all-reduce times against Vidur's measured profiles (default: the bundled data/profiles/vidur)")
    .option('--steps [files...]', 'instead: check the roofline against engine steps timed on a GPU by bench/gpu/measure_steps.py (default: the bundled H100 and H200 measurements)')
    .option('--sim <dir>', 'with --replay: a simulate run (its --out folder or requests.csv)')
    .option('--replay <dir>', 'instead: compare the simulate run --sim with a replay of the same workload (its --out folder or requests.csv), request by request: TTFT and E2E MAPE, bias, Pearson r')
    .option('--catalog <file>', 'catalog YAML adding or overriding devices and models (format: src/model/README.md), for the profile keys and --map targets, the --steps rows and the --vidur GPUs')
    .option('--quiet', 'print nothing but errors (the files are still written)')
    .action((opts: { profile: string; out: string; map?: Record<string, string>; fitPer: string; largeStepComm: boolean; vidur?: string | true; steps?: string[] | true; sim?: string; replay?: string; catalog?: string; quiet?: boolean }) => {
      const { out: print, err: note } = say(opts.quiet ?? false);
      const modes = [opts.vidur !== undefined && '--vidur', opts.steps !== undefined && '--steps', opts.replay !== undefined && '--replay'].filter((m) => m !== false);
      if (modes.length > 1) throw new UserError(`${modes.join(' and ')}: give one check at a time`);
      if ((opts.sim === undefined) !== (opts.replay === undefined)) throw new UserError(opts.sim === undefined ? '--replay needs --sim: the simulate run to compare it with' : '--sim goes with --replay: the replay to compare it with');
      if (opts.replay !== undefined) {
        const out = outDirFlag('--out', opts.out);
        const result = checkSimAgainstLive(requestsCsv('--sim', opts.sim!), requestsCsv('--replay', opts.replay));
        print(formatSimLiveCheck(result) + '\n');
        const file = join(out, 'sim-live-check.json');
        writeFileSync(file, JSON.stringify({ command: `llmfleet ${process.argv.slice(2).join(' ')}`, ...result }, null, 2) + '\n');
        print(`wrote ${file}\n`);
        return;
      }
      // A bad file is a ConfigError naming it (and the line and field of a bad entry): exit 2, one line.
      const catalog = opts.catalog === undefined ? BUILTIN_CATALOG : loadCatalogFile(resolve(nonEmptyFlag('--catalog', opts.catalog, 'catalog file')));
      if (opts.steps !== undefined) {
        const out = outDirFlag('--out', opts.out);
        const result = checkMeasuredSteps(opts.steps === true ? BUNDLED_STEPS : opts.steps.map((f) => requireFile('--steps', f)), catalog);
        print(formatStepCheck(result) + '\n');
        const file = join(out, 'step-check.json');
        writeFileSync(file, JSON.stringify({ command: `llmfleet ${process.argv.slice(2).join(' ')}`, ...result }, null, 2) + '\n');
        print(`wrote ${file}\n`);
        return;
      }
      if (opts.vidur !== undefined) {
        const out = outDirFlag('--out', opts.out);
        const t0 = performance.now();
        const result = checkVidurProfiles(opts.vidur === true ? BUNDLED_VIDUR : resolve(opts.vidur), catalog);
        note(`checked in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
        print(formatVidurCheck(result) + '\n');
        const file = join(out, 'vidur-check.json');
        writeFileSync(file, JSON.stringify({ command: `llmfleet ${process.argv.slice(2).join(' ')}`, ...result }, null, 2) + '\n');
        print(`wrote ${file}\n`);
        return;
      }
      const map = opts.map ?? {};
      if (opts.fitPer !== 'hardware' && opts.fitPer !== 'key') {
        throw new UserError(`--fit-per: expected 'hardware' or 'key', got '${opts.fitPer}'`);
      }
      const out = outDirFlag('--out', opts.out);
      const table = loadProfileTable(resolve(notAPipe('--profile', opts.profile)));
      const profileModels = new Set(table.rows.map((r) => r.model));
      for (const [key, id] of Object.entries(map)) {
        if (!profileModels.has(key)) throw new UserError(`--map ${key}=${id}: '${key}' is not a model of ${opts.profile} (its models: ${[...profileModels].sort().join(', ')})`);
        try {
          getModel(id, catalog);
        } catch (e) {
          throw new UserError(`--map ${key}=${id}: ${(e as Error).message}`);
        }
      }
      const t0 = performance.now();
      const result = calibrate(table, { modelMap: map, fitPer: opts.fitPer, largeStepComm: opts.largeStepComm, catalog });
      note(`calibrated in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      print(formatCalibration(result) + '\n');
      const file = join(out, 'calibration.json');
      const args = process.argv.slice(2).join(' ');
      writeFileSync(file, JSON.stringify({ command: `llmfleet ${args}`, ...result }, null, 2) + '\n');
      print(`wrote ${file}\n`);
    });
}
