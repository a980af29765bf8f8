import { relative, resolve } from 'node:path';
import { BUILTIN_CATALOG, type Catalog } from '../model/catalog.ts';
import { vocabParams } from '../model/params.ts';
import type { ModelSpec } from '../model/types.ts';
import { ConfigError } from '../util/errors.ts';
import { efficiencyFor } from './efficiency.ts';
import { checkGroups, noLayerLatency, numberCell, readCsv, type GroupFit, type Obs, type RowGroupCheck } from './measured-check.ts';
import type { BatchShape, Deployment } from './types.ts';
import { bundledPath } from '../util/paths.ts';

/**
 * Checks the roofline's whole-step times against engine steps timed on a GPU by `bench/gpu/measure_steps.py`
 * (bundled: data/profiles/measured/, an H100 SXM and an H200). Each row is one iteration of B sequences:
 *
 * - `prefill`: B prompts of L = tokens_per_seq tokens, attention causal within each prompt;
 * - `decode`: B sequences each attending to a context of C = tokens_per_seq tokens (the new one included);
 * - `mixed`: a prompt chunk of P = chunk_tokens tokens (a new sequence) batched with B decoding sequences at
 *   context C, as chunked prefill runs it (B or P may be 0: the pure steps of the same run);
 * - `prefix`: B sequences (the script times 1) each computing a prompt chunk of P = chunk_tokens tokens whose first
 *   C = tokens_per_seq tokens are already in the KV cache (C may be 0): the chunk's queries attend to the C cached
 *   keys and causally within the chunk, B · P · (C + (P + 1)/2) attended pairs in the roofline.
 *
 * The row's model is the catalog model cut to the `layers` measured (a slice of a model too big for one GPU:
 * embeddings and LM head whole, params scaled per layer), on the row's hardware at TP 1. The engine's CPU-side
 * costs (scheduling, sampling) are not in the measurements, so the roofline's step, prefill and per-sequence
 * overheads are zero here too; what is compared is the GPU work. The fit per device is compute, memory and
 * `perLayerOverheadS` (kernel launches and tails; 40 µs in the GPU defaults, fitted on these measurements).
 *
 * Rows of the engine-like variants are fitted on (`fused-eager` prefill; `compiled-graph` decode, replayed as a
 * CUDA graph as vLLM V1 does); other variants (eager decode, transformers' own Llama), mixed and prefix steps are only
 * compared, each as its own key: whether the roofline fitted on pure steps predicts mixed steps and chunks after a
 * cached prefix (its attention linear in C) is the question they answer.
 */

export interface StepCheckResult {
  sources: string[];
  keys: RowGroupCheck[];
  fits: GroupFit[];
}

/** The measured-step files bundled in data/profiles/measured/ (`calibrate --steps` without files reads them all). */
export const BUNDLED_STEPS: readonly string[] = [
  'h100-steps', 'h100-mixed-steps', 'h100-long-steps', 'h100-small-steps', 'h100-small-mixed-steps',
  'h200-steps', 'h200-mixed-steps', 'h200-long-steps', 'h200-prefix-steps', 'h200-small-steps', 'h200-small-mixed-steps', 'h200-moe-steps',
].map((f) => bundledPath(`data/profiles/measured/${f}.csv`));

const COLUMNS = ['hardware', 'model', 'layers', 'kind', 'batch', 'tokens_per_seq', 'impl', 'median_ms'];
const FITTED_IMPL: Readonly<Record<string, string>> = { prefill: 'fused-eager', decode: 'compiled-graph' };

/** The first `layers` layers of `m`, with its embeddings and head. */
export function modelSlice(m: ModelSpec, layers: number): ModelSpec {
  if (layers === m.layers) return m;
  const slice = (p: number): number => vocabParams(m) + ((p - vocabParams(m)) / m.layers) * layers;
  return { ...m, name: `${m.name}[${layers} layers]`, layers, params: slice(m.params), activeParams: slice(m.activeParams) };
}

/**
 * `prompts` prompt chunks of `promptTokens` tokens each, after `cached` tokens already in the KV cache (0: a whole
 * prompt), and `decodes` sequences at `context`.
 */
function shapeOf(prompts: number, promptTokens: number, decodes: number, context: number, cached = 0): BatchShape {
  return {
    prefillTokens: prompts * promptTokens,
    prefillSeqs: prompts,
    prefillAttendTokens: prompts * promptTokens * (cached + (promptTokens + 1) / 2),
    decodeSeqs: decodes,
    decodeContextTokens: decodes * context,
  };
}

/** Checks one or more measured-step files together (one fit per device over all of them). */
export function checkMeasuredSteps(files: string | readonly string[], catalog: Catalog = BUILTIN_CATALOG): StepCheckResult {
  const list = typeof files === 'string' ? [files] : files;
  // Relative in step-check.json (the bundled files read the same on every machine); errors name the absolute path.
  const sources = list.map((f) => relative(process.cwd(), f) || f);
  const deps = new Map<string, Deployment>();
  const obs = list.flatMap((f) => observations(resolve(f), catalog, deps));
  if (obs.length === 0) throw new ConfigError({ source: list.map((f) => resolve(f)).join(', '), line: 2, expected: 'at least one measured step', got: 'none' });
  const { keys, fits } = checkGroups(obs, ['compute', 'memory', 'perLayerOverheadS'], (e) => e, (hw, calibrated) => efficiencyFor(hw, {}, { calibrated }), noLayerLatency);
  return { sources, keys, fits };
}

function observations(source: string, catalog: Catalog, deps: Map<string, Deployment>): Omit<Obs, 'split'>[] {
  return readCsv(source, source, COLUMNS).map((row) => {
    const at = (path: string, expected: string, got: string) => new ConfigError({ source, line: row.line, path, expected, got });
    const hwId = row.get('hardware');
    if (!Object.hasOwn(catalog.hardware, hwId)) throw at('hardware', `a catalog device (${Object.keys(catalog.hardware).join(', ')})`, hwId);
    const modelId = row.get('model');
    if (!Object.hasOwn(catalog.models, modelId)) throw at('model', `a catalog model (${Object.keys(catalog.models).join(', ')})`, modelId);
    const full = catalog.models[modelId]!;
    const layers = numberCell(row, source, 'layers', true);
    if (layers < 1 || layers > full.layers) throw at('layers', `1 to ${full.layers} (${modelId}'s layers)`, String(layers));
    const kind = row.get('kind');
    if (kind !== 'prefill' && kind !== 'decode' && kind !== 'mixed' && kind !== 'prefix') throw at('kind', "'prefill', 'decode', 'mixed' or 'prefix'", kind);
    const batch = numberCell(row, source, 'batch', true);
    const perSeq = numberCell(row, source, 'tokens_per_seq', true);
    // A prefix row's tokens_per_seq is the cached prefix, which may be empty.
    if (perSeq < 1 && kind !== 'prefix') throw at('tokens_per_seq', 'a positive integer', row.get('tokens_per_seq'));
    let chunk = 0;
    if (kind === 'mixed' || kind === 'prefix') {
      if (!row.has('chunk_tokens')) throw at('chunk_tokens', `a column chunk_tokens for '${kind}' rows`, 'none');
      chunk = numberCell(row, source, 'chunk_tokens', true);
    }
    if (kind === 'mixed') {
      if (batch + chunk === 0) throw at('batch', 'decoding sequences or a prompt chunk (both are 0)', '0');
    } else if (batch < 1) throw at('batch', 'a positive integer', row.get('batch'));
    if (kind === 'prefix' && chunk < 1) throw at('chunk_tokens', 'a positive integer (the prompt chunk after the cached prefix)', row.get('chunk_tokens'));
    const ms = numberCell(row, source, 'median_ms');
    if (ms <= 0) throw at('median_ms', 'a positive time', row.get('median_ms'));
    const impl = row.get('impl');
    const depKey = `${hwId}/${modelId}/${layers}`;
    let dep = deps.get(depKey);
    if (!dep) deps.set(depKey, (dep = { model: modelSlice(full, layers), hardware: catalog.hardware[hwId]!, tp: 1, pp: 1 }));
    const fitted = FITTED_IMPL[kind] === impl;
    return {
      key: `${hwId}/${modelId}${layers < full.layers ? `[${layers}L]` : ''}/${kind}${fitted ? '' : ` (${impl})`}`,
      kind,
      group: hwId,
      // Mixed rows sort by chunk, then decodes; prefix rows by chunk, then cached tokens, then sequences (neither is
      // ever fitted, so the order only picks the samples).
      x: kind === 'mixed' ? chunk * 1e6 + batch : kind === 'prefix' ? (chunk * 1e7 + perSeq) * 1e3 + batch : batch * perSeq,
      label: kind === 'mixed' ? `${chunk}+${batch}×${perSeq}` : kind === 'prefix' ? `${batch > 1 ? `${batch}×` : ''}${chunk}@${perSeq}` : `${batch}×${perSeq}`,
      measuredS: ms / 1e3,
      fit: fitted,
      dep,
      shape:
        kind === 'prefill'
          ? shapeOf(batch, perSeq, 0, 0)
          : kind === 'decode'
            ? shapeOf(0, 0, batch, perSeq)
            : kind === 'prefix'
              ? shapeOf(batch, chunk, 0, 0, perSeq)
              : shapeOf(chunk > 0 ? 1 : 0, chunk, batch, perSeq),
      scale: 1,
    };
  });
}
