import type { Catalog } from '../model/catalog.ts';
import { kvBlocksFor } from '../perf/memory.ts';
import { ConfigError } from '../util/errors.ts';
import { formatPath } from '../util/config-file.ts';
import { preserveScalerOptions, windowIntervalProblem } from '../policy/scaling/preserve.ts';
import { poolName, resolvedScaling, selectedOptions, type Scenario } from './schema.ts';

/** Tensor parallelism shards the attention heads (vLLM refuses a degree that does not divide them). */
export const tpExpected = (model: string, heads: number) => `a divisor of ${model}'s ${heads} attention heads`;

/** Where a scenario path was written: a file line, or the flag that set it. */
export type Locate = (path: readonly PropertyKey[]) => { source?: string; line?: number };

/**
 * Names a scenario refers to exist and deployments make sense: every pool's and `fleet.spot.initial` entry's model
 * and hardware are in the catalog (the scenario's own `catalog:` file included); its tp divides the model's heads
 * and fits one node (`devicesPerNode`: tensor parallelism is timed over the node's NVLink), its pp is at most the
 * model's layers; pool names are unique and `scaling.actions` name pools; a pool's `engine` merged over the
 * top-level one keeps the chunked-prefill rule; `network.latencyS`, spot entries and `spot.weightsRegions` name
 * serving regions of pools (and catalog models); the `static` scaler's `count` is within every pool's `minCount` and
 * `maxCount` (like a pool's own `count`; the governor would clamp it silently); the `preserve` scaler's window is a
 * whole number of `scaling.intervalS`. `locate` (at load) names the file
 * line or flag; without it the error names the field only.
 */
export function checkScenarioNames(sc: Scenario, catalog: Catalog, locate: Locate = () => ({})): void {
  const fail = (path: PropertyKey[], expected: string, got: unknown): never => {
    throw new ConfigError({ ...locate(path), path: formatPath(path), expected, got });
  };
  const entries: [PropertyKey[], { model: string; hardware: string; region: string; tp: number; pp: number }][] = [
    ...sc.fleet.pools.map((p, i): [PropertyKey[], typeof p] => [['fleet', 'pools', i], p]),
    ...(sc.fleet.spot?.initial ?? []).map((e, i): [PropertyKey[], typeof e] => [['fleet', 'spot', 'initial', i], e]),
  ];
  for (const [at, e] of entries) {
    // Regions key the spot summary's objects: the same as pool names.
    if (e.region === '__proto__') fail([...at, 'region'], 'a region other than "__proto__"', e.region);
    for (const [field, table] of [['model', catalog.models], ['hardware', catalog.hardware]] as const) {
      if (!Object.hasOwn(table, e[field])) fail([...at, field], `a ${field} of the catalog: ${Object.keys(table).sort().join(', ')}`, e[field]);
    }
  }
  for (const [at, e] of entries) {
    const model = catalog.models[e.model]!;
    const node = catalog.hardware[e.hardware]!.devicesPerNode;
    if (model.heads % e.tp !== 0) fail([...at, 'tp'], tpExpected(e.model, model.heads), e.tp);
    if (e.tp > node) fail([...at, 'tp'], `at most ${node}, the ${e.hardware} devices of one node (tensor parallelism is timed over one node's links)`, e.tp);
    if (e.pp > model.layers) fail([...at, 'pp'], `at most ${model.layers}, ${e.model}'s layers`, e.pp);
  }
  const names = new Map<string, number>();
  sc.fleet.pools.forEach((p, i) => {
    const name = poolName(p, i);
    // Pool names key the summary's objects, where "__proto__" would set the prototype (a pool lost from the totals).
    if (name === '__proto__') fail(['fleet', 'pools', i, 'name'], 'a name other than "__proto__"', name);
    if (names.has(name)) fail(['fleet', 'pools', i, 'name'], `a name no other pool has (pool ${names.get(name)} is '${name}')`, name);
    names.set(name, i);
    // The schema checks each engine block alone; a pool asking for chunked prefill under the top-level scheduler
    // is only seen merged. (A pool choosing vllm-v0 under the default chunkedPrefill: true is fine: V0 ignores it.)
    const scheduler = p.engine?.scheduler ?? sc.engine.scheduler;
    if (p.engine?.chunkedPrefill === true && scheduler !== 'vllm') {
      fail(['fleet', 'pools', i, 'engine', 'chunkedPrefill'], `false or absent with scheduler ${scheduler} (neither vllm-v0 nor splitwise chunks prompts)`, true);
    }
    if (scheduler === 'splitwise' && (p.engine?.prefixCache ?? sc.engine.prefixCache)) {
      const own = p.engine?.prefixCache === true;
      fail(['fleet', 'pools', i, 'engine', own ? 'prefixCache' : 'scheduler'], own ? 'false or absent with scheduler splitwise (SplitwiseSim has no prefix cache)' : 'vllm or vllm-v0 with engine.prefixCache (SplitwiseSim has no prefix cache)', own ? true : 'splitwise');
    }
  });
  sc.fleet.pools.forEach((p, i) => checkMemory(sc, catalog, p, i, locate));
  sc.scaling.actions.forEach((a, i) => {
    if (!names.has(a.pool)) fail(['scaling', 'actions', i, 'pool'], `a pool name (${[...names.keys()].join(', ')})`, a.pool);
  });
  const scaling = resolvedScaling(sc);
  const count = scaling.policy === 'static' ? selectedOptions(scaling).count : undefined;
  if (typeof count === 'number') {
    const at = sc.scaling.options.count !== undefined ? ['scaling', 'options', 'count'] : ['scaling', 'perPolicy', 'static', 'count'];
    sc.fleet.pools.forEach((p, i) => {
      const of = `of pool ${poolName(p, i)} (static holds every pool at count)`;
      if (count > p.maxCount) fail(at, `≤ maxCount (${p.maxCount}) ${of}`, count);
      if (count < p.minCount) fail(at, `≥ minCount (${p.minCount}) ${of}`, count);
    });
  }
  if (scaling.policy === 'preserve') {
    const set = selectedOptions(scaling).windowS;
    const windowS = typeof set === 'number' ? set : preserveScalerOptions.shape.windowS.parse(undefined);
    const problem = windowIntervalProblem(windowS, sc.scaling.intervalS);
    if (problem !== undefined) {
      if (typeof set !== 'number') fail(['scaling', 'intervalS'], `a divisor of the preserve scaler's window (windowS ${windowS} s): windows close at scaler ticks`, sc.scaling.intervalS);
      fail(sc.scaling.options.windowS !== undefined ? ['scaling', 'options', 'windowS'] : ['scaling', 'perPolicy', 'preserve', 'windowS'], problem, windowS);
    }
  }
  const regions = new Set(sc.fleet.pools.map((p) => p.region));
  const named = [...regions].filter((r) => r !== '').sort();
  const expected = `a serving region of some pool (${named.length > 0 ? named.join(', ') : 'no pool sets `region`'})`;
  for (const [from, row] of Object.entries(sc.network?.latencyS ?? {})) {
    for (const to of Object.keys(row)) {
      if (!regions.has(to)) fail(['network', 'latencyS', from, to], expected, to);
    }
  }
  // A misspelt region in a preference order is skipped at routing time, silently reordering the rest.
  const order = selectedOptions(sc.routing).regionOrder;
  if (Array.isArray(order) && named.length > 0) {
    order.forEach((r, j) => {
      if (typeof r === 'string' && !regions.has(r)) fail(['routing', 'options', 'regionOrder', j], expected, r);
    });
  }
  const spot = sc.fleet.spot;
  spot?.initial.forEach((e, i) => {
    if (!regions.has(e.region)) fail(['fleet', 'spot', 'initial', i, 'region'], expected, e.region);
  });
  for (const [model, list] of Object.entries(spot?.weightsRegions ?? {})) {
    if (!Object.hasOwn(catalog.models, model)) fail(['fleet', 'spot', 'weightsRegions', model], `a model of the catalog: ${Object.keys(catalog.models).sort().join(', ')}`, model);
    list.forEach((r, j) => {
      if (!regions.has(r)) fail(['fleet', 'spot', 'weightsRegions', model, j], expected, r);
    });
  }
}

/**
 * The pool's weights fit its devices, with room for a KV block unless the KV size is fixed (also checked when the
 * simulator builds the pool; here the error names the flag or file line that set the deployment).
 */
function checkMemory(sc: Scenario, catalog: Catalog, p: Scenario['fleet']['pools'][number], i: number, locate: Locate): void {
  const e = { ...sc.engine, ...p.engine };
  const dep = { model: catalog.models[p.model]!, hardware: catalog.hardware[p.hardware]!, tp: p.tp, pp: p.pp };
  try {
    kvBlocksFor(dep, e);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Blame the first flag that set something the fit depends on, else the pool's line.
    const pool = ['fleet', 'pools', i];
    const engineKeys = ['gpuMemoryUtilization', 'activationReserveBytes', 'blockTokens', 'kvBlocks', 'kvCapacityTokens'];
    const candidates = [...['model', 'hardware', 'tp', 'pp'].map((k) => [...pool, k]), ...engineKeys.flatMap((k) => [[...pool, 'engine', k], ['engine', k]])];
    const at = candidates.map((c) => locate(c)).find((l) => l.source !== undefined && l.line === undefined) ?? locate(pool);
    const where = at.source ? `${at.source}${at.line !== undefined ? `:${at.line}` : ''} ` : '';
    const out = new ConfigError({ ...at, path: formatPath(pool), expected: 'a deployment that fits', got: p.hardware });
    out.message = `${where}fleet.pools[${i}] (${poolName(p, i)}): ${err.message}`;
    throw out;
  }
}
