import { readTextFile } from '../util/read-file.ts';
import { dirname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { issueError, parseConfigText } from '../util/config-file.ts';
import { ConfigError } from '../util/errors.ts';
import { HARDWARE } from './hardware.ts';
import { parseHfConfig } from './hf-config.ts';
import { MODELS } from './models.ts';
import { vocabParams } from './params.ts';
import type { HardwareSpec, ModelSpec } from './types.ts';

/** The devices and models a run may name: the built-ins plus whatever a user's catalog file adds or overrides. */
export interface Catalog {
  readonly hardware: Readonly<Record<string, HardwareSpec>>;
  readonly models: Readonly<Record<string, ModelSpec>>;
}

export const BUILTIN_CATALOG: Catalog = { hardware: HARDWARE, models: MODELS };

/**
 * Upper bounds on catalog numbers: far past any device or model there is (B200: 192e9 bytes, 2.25e15 FLOP/s, 8e12
 * bytes/s, ~$10/h; the largest open models: ~2e12 parameters, ~130 layers, 1e7-token contexts), yet small enough
 * that every product the simulator forms (a cost, weight and KV-cache bytes, step times) stays finite: a 1e308
 * price printed `$Infinity` and wrote `"costUsd": null`.
 */
export const CATALOG_LIMITS = {
  memoryBytes: 1e15,
  bf16Flops: 1e18,
  bytesPerS: 1e15,
  priceUsdPerHour: 1e6,
  devicesPerNode: 1024,
  layers: 10_000,
  width: 1_000_000, // hiddenSize, headDim
  heads: 100_000, // heads, kvHeads
  intermediateSize: 10_000_000,
  vocabSize: 100_000_000,
  params: 1e15,
  contextLength: 1e9,
  bytesPerParam: 64,
  /** Floors of the device rates: below them a step takes hours and the run fails later, blaming another field. */
  minBf16Flops: 1e9,
  minBytesPerS: 1e6,
} as const;

const positive = (max: number) => z.number().positive().max(max);
const positiveInt = (max: number) => z.number().int().positive().max(max);

export const hardwareSpecSchema = z.strictObject({
  name: z.string().min(1),
  kind: z.enum(['gpu', 'cpu']),
  memoryBytes: positive(CATALOG_LIMITS.memoryBytes),
  bf16Flops: z.number().min(CATALOG_LIMITS.minBf16Flops).max(CATALOG_LIMITS.bf16Flops),
  memBandwidthBytesPerS: z.number().min(CATALOG_LIMITS.minBytesPerS).max(CATALOG_LIMITS.bytesPerS),
  interconnectBytesPerS: z.number().min(CATALOG_LIMITS.minBytesPerS).max(CATALOG_LIMITS.bytesPerS),
  priceUsdPerHour: z.number().min(0).max(CATALOG_LIMITS.priceUsdPerHour),
  devicesPerNode: positiveInt(CATALOG_LIMITS.devicesPerNode),
  source: z.string().optional(),
});

const modelBase = z.strictObject({
  name: z.string().min(1),
  layers: positiveInt(CATALOG_LIMITS.layers),
  hiddenSize: positiveInt(CATALOG_LIMITS.width),
  heads: positiveInt(CATALOG_LIMITS.heads),
  kvHeads: positiveInt(CATALOG_LIMITS.heads),
  headDim: positiveInt(CATALOG_LIMITS.width),
  // Optional: no code reads it (the roofline works from params and activeParams); the built-ins keep it for reference.
  intermediateSize: positiveInt(CATALOG_LIMITS.intermediateSize).optional(),
  vocabSize: positiveInt(CATALOG_LIMITS.vocabSize),
  tiedEmbeddings: z.boolean().optional(),
  params: positive(CATALOG_LIMITS.params),
  activeParams: positive(CATALOG_LIMITS.params),
  contextLength: positiveInt(CATALOG_LIMITS.contextLength),
  bytesPerParam: positive(CATALOG_LIMITS.bytesPerParam),
  weightBytesPerParam: positive(CATALOG_LIMITS.bytesPerParam).optional(),
  source: z.string().optional(),
});
export const modelSpecSchema = modelBase
  .refine((m) => m.kvHeads <= m.heads && m.heads % m.kvHeads === 0, { message: 'a divisor of heads (each KV head serves a whole group of query heads)', path: ['kvHeads'] })
  .refine((m) => m.activeParams <= m.params, { message: 'activeParams ≤ params', path: ['activeParams'] })
  .refine((m) => m.activeParams > vocabParams(m), {
    message: 'more than the embedding and LM-head parameters (vocabSize × hiddenSize, twice unless tiedEmbeddings: true), which it includes',
    path: ['activeParams'],
  });

// A file entry: every field optional (an override of a known id only names what changes); the merged entry is
// then checked against the full schema. `name` comes from the key.
const hardwareEntry = hardwareSpecSchema.omit({ name: true }).partial().strict();
// `hfConfig`: a Hugging Face config.json (relative to the catalog file) whose derived fields are the entry's base.
const modelEntry = modelBase.omit({ name: true }).partial().extend({ hfConfig: z.string().min(1).optional() }).strict();
const catalogId = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, { error: 'an id of lower-case letters, digits, ".", "_" and "-", starting with a letter or digit' });
const catalogFileSchema = z.strictObject({
  hardware: z.record(catalogId, hardwareEntry).optional(),
  models: z.record(catalogId, modelEntry).optional(),
});

function lookup<T>(kind: string, table: Readonly<Record<string, T>>, name: string): T {
  const hit = Object.hasOwn(table, name) ? table[name] : undefined;
  if (hit === undefined) {
    const valid = Object.keys(table).sort().join(', ');
    const err = new ConfigError({ path: kind, expected: `one of ${valid}`, got: name });
    err.message = `unknown ${kind} '${name}'; valid: ${valid}`;
    throw err;
  }
  return hit;
}

/** A device by id, e.g. `getHardware('h100-80gb')`; unknown ids throw a ConfigError listing the valid ones. */
export function getHardware(name: string, catalog: Catalog = BUILTIN_CATALOG): HardwareSpec {
  return lookup('hardware', catalog.hardware, name);
}

/** A model by id, e.g. `getModel('llama2-70b')`; unknown ids throw a ConfigError listing the valid ones. */
export function getModel(name: string, catalog: Catalog = BUILTIN_CATALOG): ModelSpec {
  return lookup('model', catalog.models, name);
}

/** Reads a catalog YAML (`hardware:` and/or `models:` maps keyed by id) on top of `base` (built-ins by default). */
export function loadCatalogFile(path: string, base: Catalog = BUILTIN_CATALOG): Catalog {
  let text: string;
  try {
    // Not readFileSync: a FIFO named as a scenario's catalog blocked the run for ever, /dev/zero never ended.
    text = readTextFile(path);
  } catch (e) {
    throw new ConfigError({ source: path, expected: 'a readable catalog YAML file', got: (e as Error).message });
  }
  return parseCatalogYaml(text, path, base);
}

/**
 * Same as loadCatalogFile on text already read; `source` names it in errors, and a relative `hfConfig` path is read
 * from its folder. Example file:
 * ```yaml
 * hardware:
 *   h100-80gb: { priceUsdPerHour: 2.5 }        # override one field of a built-in
 *   b200: { kind: gpu, memoryBytes: 192e9, bf16Flops: 2.25e15, memBandwidthBytesPerS: 8e12,
 *           interconnectBytesPerS: 900e9, priceUsdPerHour: 9, devicesPerNode: 8 }
 * models:
 *   qwen2.5-7b: { hfConfig: ./qwen2.5-7b/config.json, contextLength: 32768 }   # derived from the HF config
 * ```
 */
export function parseCatalogYaml(text: string, source: string, base: Catalog = BUILTIN_CATALOG): Catalog {
  const doc = parseConfigText(text, source);
  const parsed = catalogFileSchema.safeParse(doc.raw);
  if (!parsed.success) throw issueError(parsed.error, doc.raw, doc);
  const hardware: Record<string, HardwareSpec> = { ...base.hardware };
  const models: Record<string, ModelSpec> = { ...base.models };
  const merge = <T>(
    section: 'hardware' | 'models',
    entries: Record<string, object> | undefined,
    into: Record<string, T>,
    schema: z.ZodType<T>,
    baseOf: (id: string, entry: object) => { base: object; from?: string } | undefined = () => undefined,
  ): void => {
    for (const [id, entry] of Object.entries(entries ?? {})) {
      const derived = baseOf(id, entry);
      const merged = { ...(derived ? derived.base : Object.hasOwn(into, id) ? into[id] : {}), ...entry, name: id };
      const r = schema.safeParse(merged);
      if (!r.success) {
        const field = String(r.error.issues[0]!.path[0]);
        const missing = r.error.issues.some((i) => i.path.length === 1 && !Object.hasOwn(merged, String(i.path[0])));
        const hint = derived && !Object.hasOwn(entry, field) && Object.hasOwn(merged, field)
          ? ` (derived from ${derived.from}; set ${field} in the entry to override it)`
          : missing && !Object.hasOwn(into, id) ? ` (a new ${section} entry needs every field)` : '';
        throw issueError(r.error, merged, { ...doc, prefix: [section, id], hint });
      }
      into[id] = r.data;
    }
  };
  // An entry with `hfConfig`: the fields derived from the config replace any built-in of the id; the entry's own
  // fields override them. A dense model's params and activeParams are one number: setting one sets both.
  const fromHfConfig = (id: string, entry: object): { base: object; from: string } | undefined => {
    const e = entry as z.infer<typeof modelEntry>;
    if (e.hfConfig === undefined) return undefined;
    const path = isAbsolute(e.hfConfig) ? e.hfConfig : join(dirname(source), e.hfConfig);
    const line = doc.lineOf(['models', id, 'hfConfig']);
    let text: string;
    try {
      text = readTextFile(path);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ConfigError({ source, ...(line !== undefined ? { line } : {}), path: `models.${id}.hfConfig`, expected: `a readable Hugging Face config.json (${path}: ${why})` });
    }
    const given = { ...(e.contextLength !== undefined ? { contextLength: e.contextLength } : {}), ...(e.bytesPerParam !== undefined ? { bytesPerParam: e.bytesPerParam } : {}) };
    const derived = parseHfConfig(text, path, given);
    const base: Record<string, unknown> = { ...derived };
    if (derived.params === derived.activeParams) {
      if (e.params !== undefined && e.activeParams === undefined) base.activeParams = e.params;
      if (e.activeParams !== undefined && e.params === undefined) base.params = e.activeParams;
    }
    return { base, from: path };
  };
  merge('hardware', parsed.data.hardware, hardware, hardwareSpecSchema as z.ZodType<HardwareSpec>);
  const modelEntries = parsed.data.models && Object.fromEntries(Object.entries(parsed.data.models).map(([id, { hfConfig: _, ...rest }]) => [id, rest]));
  merge('models', modelEntries, models, modelSpecSchema as z.ZodType<ModelSpec>, (id) => fromHfConfig(id, parsed.data.models![id]!));
  return { hardware, models };
}

