import { Option, type Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_FOLDS, score, type Metrics } from '../../forecast/backtest.ts';
import { holdoutPastHorizon, holdoutWindow, MODEL_CHOICES, runForecast, type ModelChoice, type RunResult } from '../../forecast/pipeline.ts';
import { buildSeries, parseGranularity as parseGranularityText, parseKeyFields as parseKeyFieldsText, SERIES_METRICS, type SeriesMetric } from '../../forecast/series.ts';
import { IMPUTATIONS, parseSeriesCsv, readSeriesText, type Imputation } from '../../forecast/series-csv.ts';
import { fitWorkloadTypes, typeLabeller } from '../../forecast/workload-types.ts';
import { ConfigError, UserError } from '../../util/errors.ts';
import { detectFormat, openTrace } from '../../workload/index.ts';
import { TRACE_FORMATS, type TraceFormat, type TraceRequest } from '../../workload/types.ts';
import { nonEmptyFlag, outDirFlag, parseIntFlag } from '../util.ts';
import { csvCell } from '../../util/csv.ts';

interface Flags {
  trace?: string;
  traceFormat?: TraceFormat;
  key?: string;
  granularity?: string;
  metric: SeriesMetric;
  series?: string;
  impute: Imputation;
  model: ModelChoice;
  horizon?: string;
  holdout: string;
  period?: string;
  log?: boolean;
  seed: string;
  types: string;
  folds: string;
  out: string;
  quiet?: boolean;
}

interface Named {
  key: string;
  t0: number;
  stepS: number;
  values: number[];
  /** True where --impute filled the point in (--series only). */
  imputed?: boolean[];
}

/** What was done to the input before fitting: printed, and recorded in metrics.json. */
interface InputNote {
  text: string;
  json: Record<string, number | Record<string, number>>;
}

/** Flags read for one input kind only: given with the other they would be silently ignored. */
const TRACE_ONLY = { granularity: '--granularity', metric: '--metric', key: '--key', traceFormat: '--trace-format' } as const;
const SERIES_ONLY = { impute: '--impute' } as const;

export function registerForecast(program: Command): void {
  program
    .command('forecast')
    .description('Forecast a workload series (from a trace or a timestamp_s,value CSV) and score it on a holdout')
    .option('--trace <file>', 'request trace to turn into rate series')
    .addOption(new Option('--trace-format <format>', 'format of --trace (default: detected from the header)').choices([...TRACE_FORMATS]))
    .option('--key <fields>', 'split the trace into one series per value of these fields: model,region,tier,app,type', '')
    .option('--types <k>', 'number of k-means workload types for --key type', '4')
    .option('--granularity <step>', 'bucket size for --trace (required with --trace): 1m, 10m, 1h or seconds')
    .addOption(new Option('--metric <name>', 'series to build from --trace').choices([...SERIES_METRICS]).default('requestsPerS'))
    .option('--series <file>', 'plain CSV series "timestamp_s,value" at a regular step')
    .addOption(new Option('--impute <how>', 'missing steps in --series: error, or fill them').choices([...IMPUTATIONS]).default('error'))
    .addOption(new Option('--model <name>', 'forecaster; auto picks by rolling-origin backtest on the training part (every model but lstm)').choices([...MODEL_CHOICES]).default('auto'))
    .option('--horizon <n>', 'steps to forecast (required)')
    .option('--holdout <n>', 'keep the last n points out of fitting and score the forecast on them (at most --horizon)', '0')
    .option('--period <n>', 'seasonal period in points (default: one day, or tried by auto: one day and one week)')
    .option('--log', 'fit on log1p(values)')
    .option('--seed <n>', 'seed for the LSTM and k-means', '1')
    .option('--folds <n>', `rolling-origin folds for auto (at most ${MAX_FOLDS})`, String(DEFAULT_FOLDS))
    .option('--out <dir>', 'output folder', 'out/forecast')
    .option('--quiet', 'print nothing but errors')
    .action((o: Flags, cmd: Command) => {
      if (cmd.getOptionValueSource('types') === 'cli' && !(o.trace !== undefined && parseKeyFields(o.key ?? '').includes('type'))) {
        throw new UserError('--types: only read with --trace and --key type (k-means workload types), e.g. --key type --types 4');
      }
      nonEmptyFlag('--trace', o.trace, 'trace file');
      nonEmptyFlag('--series', o.series, 'series file');
      const out = outDirFlag('--out', o.out);
      if ((o.trace === undefined) === (o.series === undefined)) throw new UserError('forecast: give exactly one of --trace FILE or --series FILE');
      if (o.series !== undefined) rejectGiven(cmd, TRACE_ONLY, 'only read with --trace (a --series file is already one series)');
      else rejectGiven(cmd, SERIES_ONLY, 'only read with --series (trace buckets are never missing: an empty one is 0)');
      if (o.horizon === undefined) throw new UserError('forecast: --horizon N is required');
      const horizon = parseIntFlag('--horizon', o.horizon, 1, 1_000_000);
      const holdout = parseIntFlag('--holdout', o.holdout, 0);
      const period = o.period === undefined ? undefined : parseIntFlag('--period', o.period, 1);
      const seed = parseIntFlag('--seed', o.seed);
      const folds = parseIntFlag('--folds', o.folds, 1, MAX_FOLDS);
      if (horizon < 1 || horizon > 1_000_000) throw new UserError(`--horizon: expected an integer from 1 to 1000000, got ${horizon}`);
      if (holdout < 0) throw new UserError(`--holdout: expected an integer ≥ 0, got ${holdout}`);
      if (holdout > horizon) throw new UserError(holdoutPastHorizon('--', holdout, horizon));
      if (period !== undefined && period < 1) throw new UserError(`--period: expected an integer ≥ 1, got ${period}`);
      if (folds < 1 || folds > MAX_FOLDS) throw new UserError(`--folds: expected an integer from 1 to ${MAX_FOLDS} (each fold refits every candidate model), got ${folds}`);

      const { inputs, note } = o.series !== undefined ? seriesInput(resolve(o.series), o.impute) : traceInputs(o);
      const results: { input: Named; res: RunResult }[] = [];
      for (const input of inputs) {
        if (holdout >= input.values.length) {
          const which = inputs.length > 1 ? ` of ${input.key}` : '';
          throw new UserError(`--holdout ${holdout}: leaves nothing to fit: the series${which} has ${input.values.length} point${input.values.length === 1 ? '' : 's'}`);
        }
        const res = runForecast(input.values, { model: o.model, horizon, holdout, stepS: input.stepS, period, logTransform: o.log, seed, folds, imputed: input.imputed });
        results.push({ input, res });
      }

      writeFileSync(join(out, 'forecast.csv'), forecastCsv(results));
      writeFileSync(join(out, 'metrics.json'), JSON.stringify({ ...metricsJson(results, o.model), ...note.json }, null, 2) + '\n');
      if (!o.quiet) printSummary(results, note, out);
    });
}

/** Rejects a flag given on the command line (not a default) that this input kind would silently ignore. */
function rejectGiven(cmd: Command, flags: Record<string, string>, why: string): void {
  for (const [k, flag] of Object.entries(flags)) {
    if (cmd.getOptionValueSource(k) === 'cli') throw new UserError(`${flag}: ${why}`);
  }
}

function seriesInput(path: string, impute: Imputation): { inputs: Named[]; note: InputNote } {
  // The text is read once and kept for timestampCollapse: a pipe (`--series <(cmd)`) reads empty the second time.
  const csv = readSeriesText(path);
  let s;
  try {
    s = parseSeriesCsv(csv, path, impute);
  } catch (e) {
    throw (e instanceof ConfigError && timestampCollapse(e, csv, path)) || e;
  }
  const n = s.imputed.filter(Boolean).length;
  const text = n > 0 ? `filled ${n} missing ${s.stepS} s steps of ${s.values.length} points by --impute ${impute}` : '';
  return { inputs: [{ key: 'series', t0: s.timestampsS[0]!, stepS: s.stepS, values: s.values, imputed: s.imputed }], note: { text, json: { imputedPoints: n } } };
}

function traceInputs(o: Flags): { inputs: Named[]; note: InputNote } {
  if (o.granularity === undefined) throw new UserError('forecast: --trace needs --granularity (e.g. 1m, 10m, 1h)');
  const stepS = parseGranularity(o.granularity);
  const keys = parseKeyFields(o.key ?? '');
  const path = resolve(o.trace!);
  const source = openTrace(path, o.traceFormat ?? detectFormat(path));
  let typeOf: ((r: TraceRequest) => string) | undefined;
  if (keys.includes('type')) {
    // OServe's types: k-means on (input, output) lengths of the whole trace, true lengths (offline history).
    const k = parseIntFlag('--types', o.types, 1, MAX_TYPES);
    if (k < 1 || k > MAX_TYPES) throw new UserError(`--types: expected an integer from 1 to ${MAX_TYPES} (k-means workload types), got ${o.types.trim()}`);
    const requests = [...source];
    if (requests.length < k) throw new UserError(`--types ${k}: expected at most as many workload types as ${path} has requests (${requests.length})`);
    typeOf = typeLabeller(fitWorkloadTypes(requests, { k, seed: parseIntFlag('--seed', o.seed) }));
  }
  const all = buildSeries(source, { stepS, keys, typeOf });
  if (all.length === 0) throw new UserError(`${path}: the trace has no requests`);
  // The trace ends inside its last bucket, which would read as a sudden drop in load: leave that bucket out.
  const buckets = all[0]!.requestsPerS.length;
  if (buckets < 3) {
    throw new UserError(`${path}: spans ${buckets} bucket(s) of ${/^[\d.]+$/.test(o.granularity!.trim()) ? `${stepS} s` : o.granularity!.trim()}; a forecast needs at least 2 whole ones after the partial last bucket (use a finer --granularity)`);
  }
  const dropped = Math.round(all.reduce((sum, s) => sum + s.requestsPerS[buckets - 1]! * stepS, 0));
  const lastS = all[0]!.startS + (buckets - 1) * stepS;
  // Rows the reader skips (e.g. Azure rows with 0 generated tokens) are in no series: say so, as simulate does.
  const skipped = { ...source.stats.skipped };
  const skippedText = Object.entries(skipped).map(([why, n]) => `\nskipped trace rows (${why}): ${n}, not counted`).join('');
  const note = {
    text: `left out the last, partial ${o.granularity} bucket (from ${lastS} s; ${dropped} requests)${skippedText}`,
    json: { droppedLastBucketS: lastS, droppedRequests: dropped, ...(skippedText ? { skippedInTrace: skipped } : {}) },
  };
  return { inputs: all.map((s) => ({ key: s.key, t0: s.startS, stepS, values: s[o.metric].slice(0, -1) })), note };
}

/** The library's parsers name the value (`granularity: …`, `key: …`); on the command line it is the flag. */
function asFlag<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof UserError && e.message.startsWith(`${name}: `)) throw new UserError(`--${e.message}`);
    throw e;
  }
}
const parseGranularity = (text: string) => asFlag('granularity', () => parseGranularityText(text));
const parseKeyFields = (text: string) => asFlag('key', () => parseKeyFieldsText(text));

/** The most rolling-origin folds `--folds` takes: each refits every candidate model (2^53 − 1 used to loop for ever). */
const MAX_FOLDS = 1000;

/** The most k-means workload types `--types` asks for: each one is a series of its own to fit and forecast. */
const MAX_TYPES = 1000;

/**
 * A series row "not after" the row before it where both times were written differently but read as the same
 * double: past 2^53 (about 9e15) consecutive doubles are more than 1 apart (at 1e300, about 1e284), so rows a step
 * apart collapse onto one number. That is a precision problem, not an unsorted file: say so (undefined when the
 * error is something else, e.g. a real duplicate).
 */
function timestampCollapse(e: ConfigError, text: string, path: string): ConfigError | undefined {
  const { line, path: field, got } = e.issue;
  if (field !== 'timestamp_s' || line === undefined || typeof got !== 'number') return undefined;
  const lines = text.split(/\r?\n/);
  const cell = (l: string) => l.split(',')[0]!.trim();
  const cur = cell(lines[line - 1] ?? '');
  let prev: string | undefined;
  for (let i = line - 2; i >= 0 && prev === undefined; i--) {
    const l = (lines[i] ?? '').trim();
    if (l !== '' && !l.startsWith('#')) prev = cell(l);
  }
  if (prev === undefined || Number(prev) !== got || Number(cur) !== got || decimalKey(prev) === decimalKey(cur)) return undefined;
  const gap = ulp(got);
  return new ConfigError({
    source: path,
    line,
    path: 'timestamp_s',
    expected: `a time that stays distinct from the row before as a number (both read as ${got}: doubles at that magnitude are ${gap.toPrecision(3)} s apart); write times relative to the series start (|t| below 2^53 ≈ 9.0e15 s keeps whole seconds exact)`,
    got: cur,
  });
}

/** The gap between a double and the next one up. */
function ulp(x: number): number {
  const a = Math.abs(x);
  return a === 0 ? Number.MIN_VALUE : 2 ** (Math.floor(Math.log2(a)) - 52);
}

/** A decimal number's text in one canonical form (sign, digits without leading or trailing zeros, exponent): equal keys, equal values. */
function decimalKey(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return text;
  let digits = (m[2] ?? '') + (m[3] ?? '');
  let exp = Number(m[4] ?? 0) - (m[3] ?? '').length;
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exp++;
  }
  return `${m[1] === '-' ? '-' : ''}${digits}e${exp}`;
}

function forecastCsv(results: { input: Named; res: RunResult }[]): string {
  const rows = ['key,step,timestamp_s,point,p10,p50,p90,actual'];
  for (const { input, res } of results) {
    const f = res.forecast;
    for (let i = 0; i < f.point.length; i++) {
      const t = input.t0 + (res.trainPoints + i) * input.stepS;
      const a = i < res.actual.length && res.scored[i] ? fmt(res.actual[i]!) : ''; // an imputed point is no actual
      rows.push([csvCell(input.key), i + 1, fmtTime(t, input), fmt(f.point[i]!), fmt(f.p10[i]!), fmt(f.p50[i]!), fmt(f.p90[i]!), a].join(','));
    }
  }
  return rows.join('\n') + '\n';
}

function metricsJson(results: { input: Named; res: RunResult }[], asked: ModelChoice) {
  const entry = (r: RunResult, m: Metrics | null) => ({ ...(m ?? NO_METRICS), model: r.model, period: r.period, period2: r.period2, source: r.metricsSource, note: r.note, trainPoints: r.trainPoints });
  const models = [...new Set(results.map((r) => r.res.model))];
  // With several keys the top-level figures pool every key's holdout points (or are the single key's).
  const pooled =
    results.length === 1
      ? results[0]!.res.metrics
      : results.every((r) => r.res.metricsSource === 'holdout')
        ? score(results.map((r) => holdoutWindow(r.res)))
        : undefined;
  return {
    ...(pooled ?? NO_METRICS),
    note: results.length === 1 ? results[0]!.res.note : undefined,
    model: models.length === 1 ? models[0] : 'per-key',
    requested: asked,
    source: results[0]!.res.metricsSource,
    perKey: Object.fromEntries(results.map(({ input, res }) => [input.key, entry(res, res.metrics)])),
    autoTable:
      results.length === 1 && results[0]!.res.selection
        ? results[0]!.res.selection.table.map((t) => ({ ...t.candidate, rmse: t.metrics?.rmse ?? null, mape: t.metrics?.mape ?? null, skipped: t.skipped }))
        : undefined,
  };
}

const NO_METRICS = { mape: null, smape: null, rmse: null, rrmse: null, coverage80: null, peakError: null };

function printSummary(results: { input: Named; res: RunResult }[], note: InputNote, out: string): void {
  if (note.text) process.stdout.write(`${note.text}\n`);
  for (const { input, res } of results) {
    process.stdout.write(
      `${input.key}: ${res.model}${res.period > 1 ? ` (period ${res.period}${res.period2 ? ` and ${res.period2}` : ''})` : ''}, fitted on ${res.trainPoints} points, ${res.forecast.point.length}-step forecast\n` +
        `  ${metricsLine(res)}\n`,
    );
  }
  process.stdout.write(`wrote ${out}/forecast.csv, metrics.json\n`);
}

function metricsLine(res: RunResult): string {
  const m = res.metrics;
  if (m === null) return `no metrics: ${res.note}`;
  const pct = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)}%`);
  const where = res.metricsSource === 'holdout' ? `holdout of ${m.points}` : 'rolling-origin backtest';
  const line = `${where}: MAPE ${pct(m.mape)}  sMAPE ${pct(m.smape)}  RMSE ${m.rmse.toPrecision(4)}  80% coverage ${m.coverage80.toFixed(0)}%  peak error ${pct(m.peakError)}`;
  return res.note ? `${line} (${res.note})` : line;
}

/** A step's time to as many decimals as the series' start and step have: t0 + k·step without float noise
 * (1700000000.5 + 3 × 0.1 is 1700000000.8000002 in binary). */
function fmtTime(t: number, input: Named): string {
  const d = Math.max(decimals(input.t0), decimals(input.stepS));
  return d > 15 ? String(t) : t.toFixed(d).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

function decimals(x: number): number {
  const s = String(x);
  return s.includes('e') ? Infinity : (s.split('.')[1]?.length ?? 0);
}

/** 12 significant digits, written in the shortest form that reads back as that value; integers exactly. */
function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
}

