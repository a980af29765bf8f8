import { stringify } from 'yaml';
import { BUILTIN_CATALOG, type Catalog } from '../../model/catalog.ts';
import type { ModelSpec } from '../../model/types.ts';
import { UserError } from '../../util/errors.ts';
import type { Plan } from './plan.ts';
import type { Tier } from './problem.ts';

/** The catalog file `plan --out` writes beside fleet.yaml when the plan deploys quantised tiers (`fleetYaml`). */
export const FLEET_CATALOG_FILE = 'catalog.yaml';

/** A catalog model entry as a catalog file holds it (the id is the key). */
export type CatalogModelEntry = Omit<ModelSpec, 'name'>;

/** The simulator model one deployed (model, tier) pair runs. */
export interface SimulatorModel {
  /** Catalog id: the model's (`catalogModelId`), or its weight-only variant `<id>-w<16ν>` on a quantised tier. */
  id: string;
  /** The variant's catalog entry; null for ν ≥ 1 or a model the catalog lacks (then `id` is for the user to add). */
  variant: CatalogModelEntry | null;
}

/**
 * The simulator model a problem model runs on a tier of weight scale ν (the tier's `latencyScale`): the catalog
 * model, or for ν < 1 a weight-only variant `<id>-w<16ν>` (`-w8` for ν = 0.5, `-w4` for 0.25) whose body weights take
 * ν of the BF16 bytes (`weightBytesPerParam` = bytesPerParam × ν): weight memory and weight reads shrink, KV and
 * FLOPs do not (the tier's higher P_k is not modelled). The one place both `fleet.yaml` and `--sim-check` take it from.
 */
export function simulatorModel(model: string, nu: number, catalog: Catalog = BUILTIN_CATALOG): SimulatorModel {
  const baseId = catalogModelId(model, catalog);
  if (!(nu < 1)) return { id: baseId, variant: null };
  const id = `${baseId}-w${+(16 * nu).toFixed(2)}`;
  if (!Object.hasOwn(catalog.models, baseId)) return { id, variant: null };
  const { name: _name, ...spec } = catalog.models[baseId]!; // a catalog file names each entry by its key
  return { id, variant: { ...spec, weightBytesPerParam: spec.bytesPerParam * nu, source: `${baseId} with weights × ${nu}` } };
}

/** The weight scale ν of a plan's tier; a tier the problem lacks is an error (the plan is not of this problem). */
export function tierWeightScale(tiers: ReadonlyArray<Pick<Tier, 'name' | 'latencyScale'>>, tier: string): number {
  const t = tiers.find((x) => x.name === tier);
  if (!t) throw new UserError(`the plan deploys on tier ${JSON.stringify(tier)}, which the problem does not list (a plan of another problem?)`);
  return t.latencyScale;
}

export interface FleetPool { name: string; model: string; hardware: string; tp: number; pp: number; count: number }

export interface FleetExport {
  fleet: { pools: FleetPool[] };
  /** Catalog content (`{ models }`) of the quantised tiers' weight-only variants; empty when none. */
  variants: { models: Record<string, CatalogModelEntry> };
  /** Pool models and hardware the catalog lacks (variants of a model it lacks included), sorted. */
  unmapped: string[];
}

/**
 * A plan as the `fleet:` section of a simulator scenario, so its SLO claims can be checked by simulation
 * (`llmfleet simulate --scenario …` with this fleet and a workload of the plan's query types). One pool per
 * simulator model (`simulatorModel`: the catalog model, or its weight-only variant on a quantised tier), hardware
 * and TP/PP, named `<model>@<hardware>-tp<t>[-pp<p>]` (`llama3.1-70b-w4@rtx4090-tp4`); count = the number of
 * deployed pairs it holds (each pair is one TP×PP group in 𝒫_DM, digest §2.3), so an FP16 and an INT4 pair of one
 * model, GPU and shape are two pools, and two tiers of one GPU and precision share one.
 * Problem model names map to catalog ids by dropping the hyphen after "llama" (`llama-3.1-8b` → `llama3.1-8b`;
 * `llama-34b` → `codellama-34b`); names with no catalog entry are kept and listed in `unmapped` (add them with a
 * scenario `catalog:` file). `problem` gives each tier's ν (`latencyScale`).
 */
export function planToFleet(plan: Pick<Plan, 'deployments'>, problem: { tiers: ReadonlyArray<Pick<Tier, 'name' | 'latencyScale'>> }, catalog: Catalog = BUILTIN_CATALOG): FleetExport {
  const unmapped = new Set<string>();
  const models: Record<string, CatalogModelEntry> = {};
  const pools = new Map<string, FleetPool>();
  for (const d of plan.deployments) {
    const sim = simulatorModel(d.model, tierWeightScale(problem.tiers, d.tier), catalog);
    if (sim.variant) models[sim.id] = sim.variant;
    else if (!Object.hasOwn(catalog.models, sim.id)) unmapped.add(sim.id);
    if (!Object.hasOwn(catalog.hardware, d.hardware)) unmapped.add(d.hardware);
    const name = `${sim.id}@${d.hardware}-tp${d.tp}${d.pp > 1 ? `-pp${d.pp}` : ''}`;
    const pool = pools.get(name);
    if (pool) pool.count += 1;
    else pools.set(name, { name, model: sim.id, hardware: d.hardware, tp: d.tp, pp: d.pp, count: 1 });
  }
  const sorted = [...pools.values()].sort((a, b) => a.model.localeCompare(b.model) || a.hardware.localeCompare(b.hardware) || a.tp - b.tp || a.pp - b.pp);
  return { fleet: { pools: sorted }, variants: { models }, unmapped: [...unmapped].sort() };
}

/** Problem model names whose catalog id is not the squeezed name (the generator's 34B is Code Llama's size). */
const CATALOG_ALIASES: Readonly<Record<string, string>> = { 'llama-34b': 'codellama-34b' };

export function catalogModelId(name: string, catalog: Catalog = BUILTIN_CATALOG): string {
  if (Object.hasOwn(catalog.models, name)) return name;
  const alias = CATALOG_ALIASES[name];
  if (alias !== undefined && Object.hasOwn(catalog.models, alias)) return alias;
  const squeezed = name.replace(/^llama-(\d)/, 'llama$1');
  return Object.hasOwn(catalog.models, squeezed) ? squeezed : name;
}

/** Whether an export has weight-only variants, i.e. needs `FLEET_CATALOG_FILE` beside its fleet.yaml. */
export function hasVariants(e: FleetExport): boolean {
  return Object.keys(e.variants.models).length > 0;
}

/**
 * The text of fleet.yaml: a scenario fragment to paste into (or merge with) a scenario. Without quantised tiers it
 * is the `fleet:` section alone. With them it is `catalog: catalog.yaml` and `fleet:` — the pools name weight-only
 * variants defined in `catalog.yaml` (`variantsYaml`, written beside it by `plan --out`), and a scenario needs both
 * keys — with a header comment saying so: `catalog:` is relative to the scenario file, so a scenario elsewhere
 * adjusts the path, and one with its own catalog file merges the variants into it. A header line also names
 * anything the catalog lacks (`unmapped`).
 */
export function fleetYaml(e: FleetExport): string {
  const head: string[] = [];
  if (hasVariants(e)) {
    head.push(
      `# Quantised tiers run weight-only variants (${Object.keys(e.variants.models).sort().join(', ')}) defined in ${FLEET_CATALOG_FILE}`,
      `# beside this file: a scenario with this fleet needs \`catalog: ${FLEET_CATALOG_FILE}\` (relative to the scenario file;`,
      '# merge the variants into your own catalog file if the scenario has one).',
    );
  }
  if (e.unmapped.length > 0) head.push(`# Not in the built-in catalog (add them with a scenario catalog: file): ${e.unmapped.join(', ')}`);
  head.push('# No workload: simulate it with `llmfleet simulate --scenario fleet.yaml --trace FILE`, or use `plan --sim-check`.');
  const doc = hasVariants(e) ? { catalog: FLEET_CATALOG_FILE, fleet: e.fleet } : { fleet: e.fleet };
  return head.map((l) => l + '\n').join('') + stringify(doc);
}

/** The text of catalog.yaml for an export's variants (`{ models: … }`), or null when it has none. */
export function variantsYaml(e: FleetExport): string | null {
  return hasVariants(e) ? stringify(e.variants) : null;
}
