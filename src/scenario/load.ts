import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ZodError, type z } from 'zod';
import { PRESERVE_MU_KEYS } from '../policy/preserve/capacity-probe.ts';
import { routers, type RouterName } from '../policy/routing/registry.ts';
import { scalers, type ScalerName } from '../policy/scaling/registry.ts';
import { tierQueueOptions } from '../policy/scheduling/tier-queue.ts';
import { BUILTIN_CATALOG, loadCatalogFile } from '../model/catalog.ts';
import { applyOverrides, issueError, readConfigFile, validateConfig, valueAt, type ConfigDoc } from '../util/config-file.ts';
import { ConfigError, UserError } from '../util/errors.ts';
import { TRACE_FORMATS, type TraceFormat } from '../workload/types.ts';
import { checkScenarioNames } from './names.ts';
import { resolvedScaling, scenarioSchema, selectedOptions, type Scenario } from './schema.ts';
import { PROJECT_ROOT } from '../util/paths.ts';

/** The project folder (where scenarios/ and data/ live), wherever the CLI is started from. */
export const DEFAULT_SCENARIO = resolve(PROJECT_ROOT, 'scenarios/default.yaml');

export interface ScenarioInput {
  /** Scenario file; the bundled default when omitted. */
  file?: string;
  /** `PATH=VALUE` overrides, applied in order before validation. */
  sets?: readonly string[];
  trace?: { path: string; format?: string };
  seed?: number;
}

export interface LoadedScenario {
  scenario: Scenario;
  /** Folder that relative paths in the scenario are resolved against. */
  baseDir: string;
  source: string;
}

/** A path of the raw scenario set by a flag (or a comparison variant), and how to name it in errors. */
export interface FlagOverride {
  path: PropertyKey[];
  flag: string;
}

/** Reads a scenario file as a mapping, with line positions kept for errors. */
export function readScenarioDoc(file: string | undefined, fallback = DEFAULT_SCENARIO): { doc: ConfigDoc; source: string } {
  const source = file ? resolve(file) : fallback;
  if (!existsSync(source)) throw new UserError(`${source}: no such scenario file`);
  const doc = readConfigFile(source);
  if (doc.raw === null || typeof doc.raw !== 'object' || Array.isArray(doc.raw)) {
    throw new UserError(`${source}: expected a YAML mapping at the top level`);
  }
  return { doc, source };
}

/** Applies `--trace`, `--seed` and `--set` to a raw scenario in place; returns which flag set which path. */
export function applyScenarioFlags(raw: Record<string, unknown>, input: ScenarioInput): FlagOverride[] {
  const overridden: FlagOverride[] = [];
  if (input.trace) {
    const format = input.trace.format;
    if (format !== undefined && !(TRACE_FORMATS as readonly string[]).includes(format)) {
      throw new UserError(`--trace-format: expected one of ${TRACE_FORMATS.join(', ')}, got '${format}'`);
    }
    const prev = (raw.workload ?? {}) as Record<string, unknown>;
    raw.workload = {
      trace: { path: resolve(input.trace.path), ...(format ? { format: format as TraceFormat } : {}) },
      ...(prev.transforms ? { transforms: prev.transforms } : {}),
    };
    overridden.push({ path: ['workload'], flag: '--trace' });
  }
  if (input.seed !== undefined) {
    raw.seed = input.seed;
    overridden.push({ path: ['seed'], flag: '--seed' });
  }
  const sets = input.sets ?? [];
  applyOverrides(raw, sets).forEach((path, i) => {
    // A --set that would undo --trace or --seed: the run would use one of the two and ignore the other.
    if (input.trace && path[0] === 'workload' && path[1] !== 'transforms') {
      throw new UserError(`--set ${sets[i]}: --trace replaces the workload's source; give one of the two (--set workload.transforms.… still applies with --trace)`);
    }
    if (input.seed !== undefined && path.length === 1 && path[0] === 'seed') throw new UserError(`--set ${sets[i]}: --seed sets it too; give one of the two`);
    overridden.push({ path, flag: `--set ${sets[i]}` });
  });
  return overridden;
}

/**
 * Validates a raw scenario read from `doc`. A failing path is blamed on the most specific flag that set it (or
 * that created its parent: `--set perf.calibrated=true` without a kind), otherwise on the file line.
 */
export function validateScenario(doc: ConfigDoc, raw: Record<string, unknown>, overridden: readonly FlagOverride[]): Scenario {
  // A flag's path has array indices as strings ('1'), the validator's as numbers (1).
  const same = (a: PropertyKey | undefined, b: PropertyKey | undefined) => String(a) === String(b);
  const sourceFor = (p: readonly PropertyKey[]) => {
    let best: FlagOverride | undefined;
    let bestCovers = false;
    const parent = p.slice(0, -1);
    for (const o of overridden) {
      const covers = o.path.length <= p.length && o.path.every((k, i) => same(k, p[i]));
      const sibling = parent.length > 0 && o.path.length > parent.length && parent.every((k, i) => same(k, o.path[i])) && !doc.has(parent);
      // The flag created the key at fault (`--set routing.options.migration.enabled=true` where the file has no `migration`).
      const created = o.path.length > p.length && p.every((k, i) => same(k, o.path[i])) && !doc.has(p);
      if (!(covers || sibling || created)) continue;
      // A flag that set the failing path (or a block holding it) beats a sibling that only created its parent block:
      // `--set transforms.compress=0 --set transforms.limit=10` blames compress.
      if (!best || (covers && !bestCovers) || (covers === bestCovers && o.path.length >= best.path.length)) {
        best = o;
        bestCovers = covers;
      }
    }
    return best?.flag;
  };
  // A fleet without a workload (plan's fleet.yaml) is the common case of this: say how to supply one.
  if (raw.workload === undefined) {
    throw new ConfigError({ source: doc.source, path: 'workload', expected: 'a workload: block (trace or synthetic) in the file, or --trace FILE (the field is missing)' });
  }
  const sc = validateConfig({ ...doc, raw }, scenarioSchema, sourceFor);
  checkPolicyOptions(sc, { ...doc, raw }, sourceFor);
  const catalog = sc.catalog ? loadCatalogFile(resolve(dirname(doc.source), sc.catalog)) : BUILTIN_CATALOG;
  checkScenarioNames(sc, catalog, (path) => {
    const flag = sourceFor(path);
    return flag ? { source: flag } : { source: doc.source, line: doc.lineOf(path) };
  });
  return sc;
}

/**
 * Policy options, checked against the policies' schemas at load (the simulator parses them again when it builds
 * the policies) so that a bad one is reported at its file line or flag:
 * - the selected router's and scaler's options (`perPolicy.<name>` deep-merged with `options`), a problem named at
 *   the block it came from (`options.<key>` where `options` sets it, else `perPolicy.<name>.<key>`);
 * - every other `perPolicy` entry on its own: unknown keys and bad values of the keys it sets (the fields it leaves
 *   out, and rules across fields, are only checked once `options` is merged in, when the policy is selected);
 * - no `scaling.perPolicy` entry under a name `scaling.aliases` maps elsewhere (it would never be read).
 */
function checkPolicyOptions(sc: Scenario, doc: ConfigDoc, sourceFor: (p: readonly PropertyKey[]) => string | undefined): void {
  const where = (path: readonly PropertyKey[]) => {
    const flag = sourceFor(path);
    const line = flag ? undefined : doc.lineOf(path);
    return flag ?? (line !== undefined ? `${doc.source}:${line}` : doc.source);
  };
  const fail = (error: z.ZodError, value: unknown, prefix: readonly PropertyKey[]): never => {
    throw issueError(error, value, { source: doc.source, lineOf: doc.lineOf, prefix, sourceFor });
  };
  // The selected policy: a problem is blamed on `options` where it sets the key at fault, else on the policy's
  // `perPolicy` entry where that does; a key neither sets (a missing field, a rule across fields) on `options`,
  // unless only the entry sets anything.
  const checkSelected = (section: 'routing' | 'scaling', schema: z.ZodType, policy: string, block: { options: Record<string, unknown>; perPolicy: Partial<Record<string, Record<string, unknown>>> }, options: Record<string, unknown>) => {
    const r = schema.safeParse(options);
    if (r.success) return;
    const iss = r.error.issues[0]!;
    const at = iss.code === 'unrecognized_keys' ? [...iss.path, iss.keys[0]!] : iss.path;
    const entry = block.perPolicy[policy] ?? {};
    const setsIt = (o: Record<string, unknown>) => valueAt(o, at) !== undefined;
    const inEntry = setsIt(block.options) ? false : setsIt(entry) || (Object.keys(block.options).length === 0 && Object.keys(entry).length > 0);
    const prefix = inEntry ? [section, 'perPolicy', policy] : [section, 'options'];
    fail(r.error, options, prefix);
  };
  // Another policy's entry: only what it sets itself (a field it leaves out may come from `options` once selected).
  const checkEntry = (section: 'routing' | 'scaling', schema: z.ZodType, policy: string, entry: Record<string, unknown>) => {
    const r = schema.safeParse(entry);
    if (r.success) return;
    const issues = r.error.issues.filter((iss) => iss.code === 'unrecognized_keys' || (iss.code !== 'custom' && valueAt(entry, iss.path) !== undefined));
    if (issues.length > 0) fail(new ZodError(issues), entry, [section, 'perPolicy', policy]);
  };

  checkSelected('routing', routers[sc.routing.policy].options, sc.routing.policy, sc.routing, selectedOptions(sc.routing));
  for (const [name, entry] of Object.entries(sc.routing.perPolicy)) {
    if (name !== sc.routing.policy && entry) checkEntry('routing', routers[name as RouterName].options, name, entry);
  }
  if (sc.scheduling) {
    const r = tierQueueOptions.safeParse(sc.scheduling.options);
    if (!r.success) fail(r.error, sc.scheduling.options, ['scheduling', 'options']);
  }

  for (const name of Object.keys(sc.scaling.perPolicy) as ScalerName[]) {
    const target = sc.scaling.aliases[name];
    if (target !== undefined && target !== name) {
      const path = ['scaling', 'perPolicy', name];
      throw new UserError(`${where(path)} scaling.perPolicy.${name}: scaling.policy '${name}' runs '${target}' in this scenario (scaling.aliases), so this entry is never read; put its options under scaling.perPolicy.${target}`);
    }
  }
  const scaling = resolvedScaling(sc);
  if (scaling.policy !== 'scheduled') {
    let options = selectedOptions(scaling);
    // PreServe's μ may be left out altogether (the simulator probes them); the other options are checked as usual.
    if (scaling.policy === 'preserve' && PRESERVE_MU_KEYS.every((k) => options[k] === undefined)) options = { ...options, muPrefill: 1, muDecode: 1, muTotal: 1 };
    checkSelected('scaling', scalers[scaling.policy].options, scaling.policy, scaling, options);
  }
  for (const [name, entry] of Object.entries(sc.scaling.perPolicy)) {
    if (name !== scaling.policy && entry) checkEntry('scaling', scalers[name as ScalerName].options, name, entry);
  }
}

/** Reads, overrides and validates a scenario; every problem is one ConfigError/UserError naming where it is. */
export function loadScenario(input: ScenarioInput): LoadedScenario {
  const { doc, source } = readScenarioDoc(input.file);
  const raw = doc.raw as Record<string, unknown>;
  if ('variants' in raw) {
    throw new UserError(`${source}:${doc.lineOf(['variants']) ?? 1} variants: this scenario lists variants for \`llmfleet compare --scenario ${input.file ?? source}\`; this command runs one scenario (\`llmfleet simulate --scenario ${input.file ?? source} --variant NAME\` runs one variant as compare does; or remove the list)`);
  }
  const scenario = validateScenario(doc, raw, applyScenarioFlags(raw, input));
  return { scenario, baseDir: dirname(source), source };
}
