import { z } from 'zod';
import { issueError } from '../util/config-file.ts';
import { MAX_TRACE_ARRIVAL_S } from '../workload/fields.ts';

/**
 * A time or duration in seconds, in a scenario or a policy's options: at most 1e10 s (the trace readers' limit on
 * arrivals). A timer past it never fires within any trace, and past it a double is too coarse for the latencies
 * simulated; huge values used to run (1e300 s) without saying what they meant.
 */
export const secondsFrom = (min: number, exclusive = false) =>
  (exclusive ? z.number().gt(min) : z.number().min(min)).max(MAX_TRACE_ARRIVAL_S, 's (about 317 years, the longest trace span; past it a double is too coarse for the latencies simulated)');
export const seconds = secondsFrom(0);
/** A duration that must be > 0 (one lower bound, so -1 and 0 get the same message). */
export const positiveSeconds = secondsFrom(0, true);

/** Validates a policy's options with its schema; the first problem is a ConfigError at `<prefix>.<key>`. */
export function parsePolicyOptions<S extends z.ZodType>(schema: S, options: unknown, prefix: readonly string[]): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  throw issueError(parsed.error, options, { prefix });
}

/**
 * Lets `preset: NAME` choose another set of defaults for a policy's options, explicit keys still winning: e.g. a
 * paper's values by default and its released code's under `preset: code`. The schema must accept `preset`
 * itself (an enum of the names), so an unknown one is reported against that field.
 */
export function withPresets<S extends z.ZodType>(presets: Readonly<Record<string, Readonly<Record<string, unknown>>>>, schema: S) {
  return z.preprocess((raw) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const preset = (raw as { preset?: unknown }).preset;
    return typeof preset === 'string' && Object.hasOwn(presets, preset) ? { ...presets[preset], ...raw } : raw;
  }, schema);
}
