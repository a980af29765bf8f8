import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { Deployment, PerfModel } from './types.ts';
import { efficiencyFor } from './efficiency.ts';
import { rooflinePerfModel } from './roofline.ts';
import { loadProfileTable, profilePerfModel } from './profile-table.ts';

// Bounds that keep a typo from becoming a run of 1e6-s steps (or a factor of 1e-300), which only failed much later
// on the timeline's row limit, naming a field the user never set.
const fraction = z.number().min(0.001).max(1);
const seconds = z.number().min(0).max(60);

export const efficiencySchema = z.strictObject({
  compute: fraction.optional(),
  memory: fraction.optional(),
  comm: fraction.optional(),
  stepOverheadS: seconds.optional(),
  prefillOverheadS: seconds.optional(),
  perSeqOverheadS: seconds.optional(),
  perLayerOverheadS: seconds.optional(),
  allReduceHopLatencyS: seconds.optional(),
});

/**
 * The scenario's `perf:` section. Roofline (default): per-hardware efficiency factors (the calibrated ones with
 * `calibrated: true`), each overridable here. Profile: a SplitwiseSim-format CSV (path relative to
 * the scenario file) and the table's key, which defaults to the deployment's model, hardware and tp.
 */
const perfKinds = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('roofline'),
    efficiency: efficiencySchema.optional(),
    /**
     * true: use the factors `llmfleet calibrate` fitted on the bundled SplitwiseSim profile where they exist
     * (a100-80gb, h100-80gb). They reproduce that profiled engine (70B/176B at TP 2–8, ≈15–21 ms fixed cost per
     * iteration), so they are opt-in; the default describes a modern CUDA-graph engine (efficiency.ts).
     */
    calibrated: z.boolean().default(false),
  }),
  z.strictObject({
    kind: z.literal('profile'),
    path: z.string().min(1),
    model: z.string().min(1).optional(),
    hardware: z.string().min(1).optional(),
    tp: z.number().int().positive().optional(),
  }),
]);

/**
 * One `perf:` section. `kind` may be left out: a section with a `path` is a profile, any other the roofline (so
 * `--set perf.efficiency.compute=0.5` works on a scenario that relies on the default).
 */
export const perfSectionSchema = z.preprocess(
  (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) && !('kind' in v) ? { kind: 'path' in v ? 'profile' : 'roofline', ...v } : v),
  perfKinds,
);
export const perfSpecSchema = perfSectionSchema.default({ kind: 'roofline', calibrated: false });

export type PerfSpec = z.output<typeof perfSpecSchema>;

/** The step-time model of one deployment; `baseDir` resolves a relative profile path (the scenario's folder). */
export function makePerfModel(spec: PerfSpec, dep: Deployment, baseDir = '.'): PerfModel {
  switch (spec.kind) {
    case 'roofline':
      return rooflinePerfModel(dep, efficiencyFor(dep.hardware, spec.efficiency ?? {}, { calibrated: spec.calibrated }));
    case 'profile': {
      const path = isAbsolute(spec.path) ? spec.path : resolve(baseDir, spec.path);
      const table = loadProfileTable(path);
      return profilePerfModel(table, {
        model: spec.model ?? dep.model.name,
        hardware: spec.hardware ?? dep.hardware.name,
        tp: spec.tp ?? dep.tp,
      });
    }
    default: {
      const never: never = spec;
      throw new Error(`unknown perf kind ${JSON.stringify(never)}`);
    }
  }
}

export { planMemory, kvBlocksFor, kvBytesPerToken, defaultActivationReserveBytes } from './memory.ts';
export type { MemoryOptions } from './memory.ts';
export { rooflinePerfModel } from './roofline.ts';
export { efficiencyFor, DEFAULT_EFFICIENCY } from './efficiency.ts';
export type { Efficiency } from './efficiency.ts';
export { loadProfileTable, parseProfileCsv, profilePerfModel, selectRows, profileKeys } from './profile-table.ts';
