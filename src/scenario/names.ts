import type { Catalog } from '../model/catalog.ts';
import { ConfigError } from '../util/errors.ts';
import { formatPath } from '../util/config-file.ts';
import type { Scenario } from './schema.ts';

/** Tensor parallelism shards the attention heads (vLLM refuses a degree that does not divide them). */
export const tpExpected = (model: string, heads: number) => `a divisor of ${model}'s ${heads} attention heads`;

/** Where a scenario path was written: a file line, or the flag that set it. */
export type Locate = (path: readonly PropertyKey[]) => { source?: string; line?: number };

/**
 * Names a scenario refers to exist: every pool's and `fleet.spot.initial` entry's model and hardware are in the
 * catalog (the scenario's own `catalog:` file included), and `network.latencyS` names serving regions of pools.
 * `locate` (at load) names the file line or flag; without it the error names the field only.
 */
export function checkScenarioNames(sc: Scenario, catalog: Catalog, locate: Locate = () => ({})): void {
  const fail = (path: PropertyKey[], expected: string, got: unknown): never => {
    throw new ConfigError({ ...locate(path), path: formatPath(path), expected, got });
  };
  const entries: [PropertyKey[], { model: string; hardware: string }][] = [
    ...sc.fleet.pools.map((p, i): [PropertyKey[], typeof p] => [['fleet', 'pools', i], p]),
    ...(sc.fleet.spot?.initial ?? []).map((e, i): [PropertyKey[], typeof e] => [['fleet', 'spot', 'initial', i], e]),
  ];
  for (const [at, e] of entries) {
    for (const [field, table] of [['model', catalog.models], ['hardware', catalog.hardware]] as const) {
      if (!Object.hasOwn(table, e[field])) fail([...at, field], `a ${field} of the catalog: ${Object.keys(table).sort().join(', ')}`, e[field]);
    }
  }
  sc.fleet.pools.forEach((p, i) => {
    const heads = catalog.models[p.model]!.heads;
    if (heads % p.tp !== 0) fail(['fleet', 'pools', i, 'tp'], tpExpected(p.model, heads), p.tp);
  });
  const regions = new Set(sc.fleet.pools.map((p) => p.region));
  const named = [...regions].filter((r) => r !== '').sort();
  const expected = `a serving region of some pool (${named.length > 0 ? named.join(', ') : 'no pool sets `region`'})`;
  for (const [from, row] of Object.entries(sc.network?.latencyS ?? {})) {
    for (const to of Object.keys(row)) {
      if (!regions.has(to)) fail(['network', 'latencyS', from, to], expected, to);
    }
  }
}
