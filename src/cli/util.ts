import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { UserError } from '../util/errors.ts';
import { applyOverrides } from '../util/config-file.ts';
import { prepareOutDir } from '../util/folders.ts';
import type { WorkloadSpec } from '../workload/schema.ts';
import { parseDecimal } from '../util/decimal.ts';

/** The absolute path of an input file given by `flag`, checked to be there and a file (a one-line error naming it otherwise). */
export function requireFile(flag: string, file: string): string {
  const abs = resolve(nonEmptyFlag(flag, file, 'file'));
  let st;
  try {
    st = statSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`${flag} ${abs}: ${code === 'ENOENT' ? 'file not found' : `cannot read (${code ?? (e as Error).message})`}`);
  }
  if (!st.isFile()) throw new UserError(`${flag} ${abs}: expected a file, got ${st.isDirectory() ? 'a folder' : 'a pipe or device'}`);
  return abs;
}

/**
 * An input file flag whose loader reports a missing file or a folder itself: refuses only a pipe, socket or
 * device (a FIFO with no writer blocked the read for ever, /dev/zero never ended). Returns the path as given.
 */
export function notAPipe(flag: string, file: string): string {
  const abs = resolve(nonEmptyFlag(flag, file, 'file'));
  const st = statSync(abs, { throwIfNoEntry: false });
  if (st !== undefined && !st.isFile() && !st.isDirectory()) throw new UserError(`${flag} ${abs}: expected a file, got a pipe or device`);
  return file;
}

/**
 * A flag's value that must not be empty or blank: commander hands `--out ""` over as '', which a truthiness test
 * would read as "not given" (the bundled scenario, the scenario's own trace) and `resolve('')` as the current
 * folder. `what` names what was expected (`scenario file`, `output folder`, `address`: the message reads
 * "--FLAG: expected a non-empty WHAT, got ''"); an absent flag (undefined) stays undefined.
 */
export function nonEmptyFlag(flag: string, v: string, what?: string): string;
export function nonEmptyFlag(flag: string, v: string | undefined, what?: string): string | undefined;
export function nonEmptyFlag(flag: string, v: string | undefined, what = 'value'): string | undefined {
  if (v !== undefined && v.trim() === '') throw new UserError(`${flag}: expected a non-empty ${what}, got '${v}'`);
  return v;
}

/** An output folder flag (`--out DIR`): non-empty, resolved, created or checked writable up front (prepareOutDir). */
export function outDirFlag(flag: string, v: string): string {
  return prepareOutDir(flag, resolve(nonEmptyFlag(flag, v, 'output folder')));
}

/**
 * An integer flag; past ±(2^53 − 1) a double no longer holds the integer typed, so those are refused as such.
 * `min` and `max` are the flag's own range, named in that refusal (`--kv-blocks 99999999999999999999`: "an
 * integer from 1 to 9007199254740991", not from −9007199254740991); a value inside ±(2^53 − 1) but outside them is
 * left to the caller, whose message says why.
 */
export function parseIntFlag(flag: string, v: string, min = -Number.MAX_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^-?\d+$/.test(v.trim())) throw new UserError(`${flag}: expected an integer, got '${v}'`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) {
    const lo = Math.max(min, -Number.MAX_SAFE_INTEGER);
    const hi = Math.min(max, Number.MAX_SAFE_INTEGER);
    throw new UserError(`${flag}: expected an integer from ${lo} to ${hi}${hi === Number.MAX_SAFE_INTEGER ? ' (2^53 − 1)' : ''}, got '${v.trim()}'`);
  }
  return n;
}

/**
 * The range of the live plane's `--time-scale` (emulate, replay): modelled seconds per wall second. Below
 * MIN_TIME_SCALE the emulator's steps and replay's send waits stretch past any run anyone waits for (1e-300 made a
 * 10-ms decode step 10^298 s long: the request never answered); above MAX_TIME_SCALE one millisecond of wall-clock
 * jitter is more than a modelled second (1e300 turned every client-side time into noise × 1e300).
 */
export const MIN_TIME_SCALE = 1e-3;
export const MAX_TIME_SCALE = 1e3;

/** `--time-scale X`: a decimal number > 0 in [MIN_TIME_SCALE, MAX_TIME_SCALE], else a one-line UserError naming the flag. */
export function parseTimeScaleFlag(flag: string, v: string): number {
  const n = parseDecimal(v);
  if (!(n > 0)) throw new UserError(`${flag}: expected a number > 0, got '${v}'`);
  if (!(n >= MIN_TIME_SCALE && n <= MAX_TIME_SCALE)) {
    throw new UserError(`${flag}: expected a number ≥ ${MIN_TIME_SCALE} and ≤ ${MAX_TIME_SCALE} (modelled seconds per wall second; beyond these a run waits for days or measures only jitter), got '${v}'`);
  }
  return n;
}

/** What a command prints: stdout and stderr, or nothing with `--quiet` (errors still reach stderr through main.ts). */
export interface Say {
  out: (text: string) => void;
  err: (text: string) => void;
}

export function say(quiet: boolean): Say {
  if (quiet) return { out: () => {}, err: () => {} };
  return { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t) };
}

/** A progress line on stderr when it is a terminal (never in pipes or CI logs). */
export function progressReporter(quiet: boolean): { update: (simTimeS: number, arrived: number) => void; stop: () => void } {
  if (quiet || !process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: 'simulating | {arrived} requests | simulated {simTime} | {duration_formatted}', stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(1, 0, { arrived: 0, simTime: '0 s' });
  return {
    update: (t, n) => bar.update(0, { arrived: n.toLocaleString('en-US'), simTime: formatDuration(t) }),
    stop: () => bar.stop(),
  };
}

/** A one-line live counter on stderr (a TTY only) for work without a known end, e.g. `replaying | {sent} sent | {done} done`. */
export function counterProgress<K extends string>(quiet: boolean, format: string, fields: Record<K, number | string>): { set: (f: Partial<Record<K, number | string>>) => void; stop: () => void } {
  if (quiet || !process.stderr.isTTY) return { set: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar({ format: `${format} | {duration_formatted}`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
  const now = { ...fields };
  bar.start(1, 0, now);
  return {
    set: (f) => bar.update(0, Object.assign(now, f)),
    stop: () => bar.stop(),
  };
}

/** `--target`: an attainment in (0, 1], as a fraction (0.99) or a percentage (99%). */
export function parseTargetFlag(v: string): number {
  const t = v.trim();
  const x = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
  if (t === '' || t === '%' || !(x > 0 && x <= 1)) throw new UserError(`--target: expected an SLO attainment in (0, 1] as 0.99 or 99%, got '${v}'`);
  return x;
}

export function formatDuration(s: number): string {
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** Commander's accumulator for a repeatable flag (`--set a=1 --set b=2`). */
export function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

/**
 * `--trace` replaces the scenario's workload source but keeps its `workload.transforms` (a window or a speed-up
 * usually belongs to the experiment). Says so on stderr, naming the kept ones: those no `--set
 * workload.transforms.KEY=…` gave (nothing when a `--set` replaced `workload.transforms` or `workload` whole).
 */
export function keptTransformsNote(o: { trace?: string; set: string[]; quiet?: boolean }, w: WorkloadSpec): void {
  if (o.quiet) return;
  const note = keptTransformsText(o, w);
  if (note !== undefined) process.stderr.write(note);
}

/** The note of `keptTransformsNote`, or undefined when there is none to give. */
export function keptTransformsText(o: { trace?: string; set: string[] }, w: WorkloadSpec): string | undefined {
  if (!o.trace) return undefined;
  const fromFlags = new Set<PropertyKey>();
  for (const s of o.set) {
    let path: PropertyKey[];
    try {
      // The path as `--set` reads it (quoted segments and all), applied to a scratch object.
      path = applyOverrides({}, [s])[0]!;
    } catch {
      continue; // a list index on an empty list: not a transforms key (the scenario itself loaded with it)
    }
    if (path[0] !== 'workload' || (path.length > 1 && path[1] !== 'transforms')) continue;
    if (path.length <= 2) return undefined;
    fromFlags.add(path[2]!);
  }
  const kept = Object.entries(w.transforms ?? {})
    .filter(([k, v]) => k !== 'rateScaleJitterS' && v !== undefined && !fromFlags.has(k))
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  if (kept.length === 0) return undefined;
  return `note: --trace keeps the scenario's workload.transforms (${kept.join(', ')}); --set 'workload.transforms={}' drops them\n`;
}

/** The scenario flags simulate, compare and replay share, as the scenario loaders take them. */
export function scenarioFlags(o: { scenario?: string; set: string[]; trace?: string; traceFormat?: string; seed?: string }) {
  nonEmptyFlag('--scenario', o.scenario, 'scenario file (leave the flag out for the bundled one)');
  nonEmptyFlag('--trace', o.trace, 'trace file');
  if (o.traceFormat !== undefined && !o.trace) throw new UserError('--trace-format: applies only with --trace FILE (the scenario names its own workload format)');
  return {
    file: o.scenario,
    sets: o.set,
    trace: o.trace ? { path: o.trace, format: o.traceFormat } : undefined,
    seed: o.seed === undefined ? undefined : parseIntFlag('--seed', o.seed),
  };
}
