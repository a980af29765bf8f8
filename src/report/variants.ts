import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { applyScenarioFlags, DEFAULT_SCENARIO, readScenarioDoc, validateScenario, type ScenarioInput } from '../scenario/load.ts';
import type { Scenario } from '../scenario/schema.ts';
import { applyOverrides, overrideValue, validateConfig } from '../util/config-file.ts';
import { ConfigError, UserError } from '../util/errors.ts';
import { PROJECT_ROOT } from '../util/paths.ts';

/** The scenario `compare` runs when given none: three routers on the Azure conversation trace. */
export const DEFAULT_COMPARE_SCENARIO = resolve(PROJECT_ROOT, 'scenarios/compare-routers.yaml');

/** A named set of `PATH=VALUE` overrides applied on top of the base scenario. */
export interface VariantSpec {
  name: string;
  overrides: string[];
  /** A variant of the file's `variants:` list: its index and the line of each override, for errors. */
  inFile?: { index: number; lines: (number | undefined)[] };
}

/** A variant ready to run: its overrides and the validated scenario they give. */
export interface PreparedVariant extends VariantSpec {
  scenario: Scenario;
}

export interface ComparisonSetup {
  /** The scenario file read. */
  source: string;
  baseDir: string;
  /** The base scenario (flags applied, no variant overrides). */
  base: Scenario;
  variants: PreparedVariant[];
  /** What the command should say before it runs (a bare `--variant NAME` the scenario's list lacks). */
  notes: string[];
  /** `compare --target`: the SLO attainment whose cheapest variant the results name. */
  target?: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.+-]*$/;

/**
 * Parses `--variant NAME:PATH=VALUE[,PATH=VALUE…]`. Each VALUE is read as `--set` reads it (a YAML scalar or
 * flow collection), and a comma ends an override only where the text before it reads as a whole value: commas
 * inside quotes (`"a,b"`, `'a,b'`, escaped quotes) and flow collections stay in their value
 * (`big:fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false}` is one override). `NAME` alone, or
 * `NAME:`, has no overrides: `loadComparison` takes the scenario's variant of that name, else the base scenario.
 */
export function parseVariantFlag(flag: string): VariantSpec {
  const colon = flag.indexOf(':');
  const name = (colon < 0 ? flag : flag.slice(0, colon)).trim();
  if (!NAME.test(name)) {
    throw new UserError(`--variant ${flag}: expected NAME:PATH=VALUE[,PATH=VALUE…] with NAME of letters, digits, '_', '.', '+', '-' (e.g. jsq:routing.policy=jsq)`);
  }
  const rest = colon < 0 ? '' : flag.slice(colon + 1);
  if (rest.trim() === '') return { name, overrides: [] };
  const overrides = splitOverrides(rest, `--variant ${flag}: variant '${name}'`);
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0 || o.slice(0, eq).split('.').some((k) => k.trim() === '')) {
      throw new UserError(`--variant ${flag}: variant '${name}': expected PATH=VALUE, got '${o}' (e.g. routing.policy=jsq)`);
    }
  }
  return { name, overrides };
}

/**
 * Splits at the first comma after which the piece so far reads as `--set` would read it (`reads`: an override's
 * value, or a bare value); else errs.
 */
function splitOverrides(rest: string, where: string, reads: (piece: string) => boolean = readsAsOverride, what = 'PATH=VALUE with VALUE'): string[] {
  const out: string[] = [];
  let start = 0;
  for (;;) {
    let cut = rest.indexOf(',', start);
    while (cut >= 0 && !reads(rest.slice(start, cut))) cut = rest.indexOf(',', cut + 1);
    const piece = rest.slice(start, cut < 0 ? undefined : cut).trim();
    if (cut < 0 && !reads(piece)) {
      throw new UserError(`${where}: ${piece}: expected ${what} a YAML scalar or flow collection (an unbalanced quote, bracket or brace?); put a value with commas in quotes, [ ] or { }`);
    }
    out.push(piece);
    if (cut < 0) return out;
    start = cut + 1;
  }
}

/** Whether `PATH=VALUE`'s value parses as `--set` parses it (applyOverrides); text without '=' is left to the caller. */
function readsAsOverride(text: string): boolean {
  const eq = text.indexOf('=');
  return eq <= 0 || readsAsValue(text.slice(eq + 1));
}

function readsAsValue(text: string): boolean {
  try {
    overrideValue(text);
    return true;
  } catch {
    return false;
  }
}

/** One `--sweep PATH=V1,V2,…`: an override per value, and a variant-name label per value (`count-4`). */
export interface Sweep {
  overrides: string[];
  labels: string[];
}

/**
 * Parses `--sweep PATH=V1,V2,…` (values split as `--variant` splits its overrides: a value with commas goes in
 * quotes, [ ] or { }). Each value becomes the override `PATH=V` and the label `LEAF-V`, LEAF being the path's last
 * key that is not an index (`fleet.pools.0.count=2,4` ⇒ `count-2`, `count-4`), V with characters a variant name
 * cannot hold replaced by '_' (a quoted scalar without its quotes).
 */
export function parseSweepFlag(flag: string): Sweep {
  const eq = flag.indexOf('=');
  const path = eq > 0 ? flag.slice(0, eq).trim() : '';
  const keys = path.split('.');
  if (path === '' || keys.some((k) => k.trim() === '') || flag.slice(eq + 1).trim() === '') {
    throw new UserError(`--sweep ${flag}: expected PATH=VALUE,VALUE[,…], e.g. fleet.pools.0.count=2,4,8`);
  }
  const values = splitOverrides(flag.slice(eq + 1), `--sweep ${flag}`, readsAsValue, 'VALUE,VALUE[,…] with each VALUE');
  if (new Set(values).size !== values.length) throw new UserError(`--sweep ${flag}: a value is given twice`);
  const leaf = [...keys].reverse().find((k) => !/^\d+$/.test(k)) ?? keys[keys.length - 1]!;
  return {
    overrides: values.map((v) => `${path}=${v}`),
    labels: values.map((v) => `${leaf}-${labelOf(v)}`.replace(/[^A-Za-z0-9_.+-]/g, '_')),
  };
}

/** A value as a name: a scalar as it reads (`"jsq"` ⇒ jsq), a collection as written. */
function labelOf(text: string): string {
  const v = overrideValue(text);
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : text.trim();
}

/** Every variant once per combination of the sweeps' values (the sweeps' overrides after the variant's own). */
function expandSweeps(specs: readonly VariantSpec[], sweeps: readonly Sweep[]): VariantSpec[] {
  let out: VariantSpec[] = specs.length > 0 ? [...specs] : [{ name: '', overrides: [] }];
  for (const sw of sweeps) {
    out = out.flatMap((spec) =>
      sw.overrides.map((o, i) => ({
        name: spec.name === '' ? sw.labels[i]! : `${spec.name}.${sw.labels[i]!}`,
        overrides: [...spec.overrides, o],
        ...(spec.inFile ? { inFile: { index: spec.inFile.index, lines: [...spec.inFile.lines, undefined] } } : {}),
      })),
    );
  }
  return out;
}

/** The scenario file's optional `variants:` list (read here: the scenario schema itself stays strict). */
const variantsSchema = z.object({
  variants: z
    .array(
      z
        .object({
          name: z.string().regex(NAME, "letters, digits, '_', '.', '+', '-'"),
          /** Dotted path → value, e.g. `{ routing.policy: jsq, fleet.pools.0.count: 3 }`. */
          set: z.record(z.string().min(1), z.unknown()).default({}),
        })
        .strict(),
    )
    .optional(),
});

export interface ComparisonInput extends ScenarioInput {
  /** `--variant` flags; when given they replace the scenario's `variants:` list. */
  variants?: readonly string[];
  /** `--sweep` flags: every variant (or the base scenario) once per combination of their values. */
  sweeps?: readonly string[];
  /** `--target`, kept in the setup for the results. */
  target?: number;
  /** Validate and return only this variant of the file's list (`simulate --variant NAME`). */
  only?: string;
}

/** One variant of a scenario's `variants:` list, exactly as `compare` runs it (`simulate --variant NAME`). */
export function loadVariant(input: ScenarioInput, name: string): { scenario: Scenario; baseDir: string } {
  if (input.file === undefined) throw new UserError(`--variant ${name}: give --scenario FILE, a scenario with a variants: list`);
  const setup = loadComparison({ ...input, variants: [], only: name });
  return { scenario: setup.variants[0]!.scenario, baseDir: setup.baseDir };
}

/**
 * Reads the scenario, takes its `variants:` list out, applies `--trace`/`--seed`/`--set` to the rest and
 * validates the base and every variant (expanded by the sweeps). Errors name the file and line, or the flag, and
 * the variant.
 */
export function loadComparison(input: ComparisonInput): ComparisonSetup {
  const { doc, source } = readScenarioDoc(input.file, DEFAULT_COMPARE_SCENARIO);
  const { variants: rawVariants, ...rest } = doc.raw as Record<string, unknown>;
  const fromFile = validateConfig({ ...doc, raw: { variants: rawVariants } }, variantsSchema).variants ?? [];
  const fileSpecs = fromFile.map((v, index): VariantSpec => ({
    name: v.name,
    overrides: Object.entries(v.set).map(([k, val]) => `${k}=${overrideText(val)}`),
    inFile: { index, lines: Object.keys(v.set).map((k) => doc.lineOf(['variants', index, 'set', k])) },
  }));
  // `--variant NAME` with no overrides picks the scenario's variant of that name, as `simulate --variant` does (it
  // used to run the base scenario under that name); a name the list lacks is the base scenario unchanged.
  const notes: string[] = [];
  let specs: VariantSpec[] =
    input.variants && input.variants.length > 0
      ? input.variants.map(parseVariantFlag).map((v) => {
          if (v.overrides.length > 0) return v;
          const own = fileSpecs.find((f) => f.name === v.name);
          // Most often a typo (`--variant jsk`): it runs and looks like a result. Said, not refused: a label for the
          // base scenario is a use of its own.
          if (!own && fileSpecs.length > 0) notes.push(`--variant ${v.name}: not one of the scenario's variants (${fileSpecs.map((f) => f.name).join(', ')}): it runs the base scenario under that name`);
          return own ?? v;
        })
      : fileSpecs;
  if (input.only !== undefined) {
    const { only } = input;
    if (fromFile.length === 0) throw new UserError(`--variant ${only}: ${source} has no variants: list (simulate it without --variant)`);
    specs = specs.filter((s) => s.name === only);
    if (specs.length === 0) throw new UserError(`--variant ${only}: ${source} has no such variant; its variants: ${fromFile.map((v) => v.name).join(', ')}`);
  }
  if (input.sweeps && input.sweeps.length > 0) specs = expandSweeps(specs, input.sweeps.map(parseSweepFlag));
  if (specs.length === 0) {
    throw new UserError(`${source}: nothing to compare: give --variant NAME:PATH=VALUE (repeatable), --sweep PATH=VALUE,VALUE or a variants: list in the scenario`);
  }
  const seen = new Set<string>();
  specs.forEach((s, i) => {
    if (seen.has(s.name)) {
      const where = input.variants && input.variants.length > 0 ? '--variant' : `${source}:${doc.lineOf(['variants', i, 'name']) ?? 1} variants[${i}].name:`;
      throw new UserError(`${where} variant '${s.name}' is given twice; variant names must differ`);
    }
    seen.add(s.name);
  });

  const baseRaw: Record<string, unknown> = rest;
  const flagged = applyScenarioFlags(baseRaw, input);
  const base = validateScenario(doc, baseRaw, flagged);

  const variants = specs.map((spec): PreparedVariant => {
    const raw = structuredClone(baseRaw);
    const own = [...flagged];
    try {
      // A variant of the file is named by its line there, one from --variant by its name and override.
      const label = (i: number) =>
        // A sweep's override on a file variant has no line of its own: it is named like a flag's.
        spec.inFile && spec.inFile.lines[i] !== undefined ? `${source}:${spec.inFile.lines[i]} variants[${spec.inFile.index}] '${spec.name}' (${spec.overrides[i]})` : `variant '${spec.name}' (${spec.overrides[i]})`;
      applyOverrides(raw, spec.overrides).forEach((path, i) => own.push({ path, flag: label(i) }));
      const { inFile: _inFile, ...plain } = spec;
      return { ...plain, scenario: validateScenario(doc, raw, own) };
    } catch (e) {
      if (!(e instanceof UserError)) throw e;
      if (e instanceof ConfigError && e.message.includes(`'${spec.name}' (`)) throw e;
      throw new UserError(`variant '${spec.name}': ${e.message.replace(/^--set /, '')}`);
    }
  });
  return { source, baseDir: dirname(source), base, variants, notes, ...(input.target !== undefined ? { target: input.target } : {}) };
}

/** A value as `--set` text that reads back as the same value: `jsq` stays bare, the string '8' becomes `"8"`. */
function overrideText(v: unknown): string {
  if (typeof v === 'string') {
    try {
      if (overrideValue(v) === v && !v.includes(',')) return v;
    } catch {
      // not valid bare: quote it below
    }
  }
  return JSON.stringify(v);
}

export { DEFAULT_SCENARIO };
