import { stringify } from 'yaml';
import { BUILTIN_CATALOG, type Catalog } from '../../model/catalog.ts';
import { planToFleetPools, type Plan } from './plan.ts';

/**
 * A plan as the `fleet:` section of a simulator scenario, so its SLO claims can be checked by simulation
 * (`llmfleet simulate --scenario … ` with this fleet and a workload of the plan's query types).
 * Problem model names map to catalog ids by dropping the hyphen after "llama" (`llama-3.1-8b` → `llama3.1-8b`;
 * `llama-34b` → `codellama-34b`);
 * names with no catalog entry are kept and listed in `unmapped` (add them with a scenario `catalog:` file).
 * Quantised tiers (int8/int4) deploy the BF16 catalog model here; `sim-check.ts` runs them as weight-only variants.
 */
export function planToFleet(plan: Pick<Plan, 'deployments'>, catalog: Catalog = BUILTIN_CATALOG): {
  fleet: { pools: Array<{ name: string; model: string; hardware: string; tp: number; pp: number; count: number }> };
  unmapped: string[];
} {
  const unmapped = new Set<string>();
  const pools = planToFleetPools(plan).map((p) => {
    const model = catalogModelId(p.model, catalog);
    if (!Object.hasOwn(catalog.models, model)) unmapped.add(p.model);
    if (!Object.hasOwn(catalog.hardware, p.hardware)) unmapped.add(p.hardware);
    return { name: `${model}@${p.hardware}-tp${p.tp}${p.pp > 1 ? `-pp${p.pp}` : ''}`, model, hardware: p.hardware, tp: p.tp, pp: p.pp, count: p.count };
  });
  return { fleet: { pools }, unmapped: [...unmapped].sort() };
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

/** The YAML text of the fleet section, with a header comment naming anything the catalog lacks. */
export function fleetYaml(plan: Pick<Plan, 'deployments'>): string {
  const { fleet, unmapped } = planToFleet(plan);
  const head = unmapped.length > 0 ? `# Not in the built-in catalog (add them with a scenario catalog: file): ${unmapped.join(', ')}\n` : '';
  return head + stringify({ fleet });
}
