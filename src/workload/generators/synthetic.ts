import { UserError } from '../../util/errors.ts';
import type { Rng } from '../../util/rng.ts';
import type { RequestSource, TraceRequest } from '../types.ts';
import { arrivalTimes, checkArrivals, type ArrivalSpec } from './arrivals.ts';
import { LABEL_KEYS, labelPicker, type LabelPicker, type LabelKey, type LabelsSpec } from './labels.ts';
import { lengthSampler, type LengthModel } from './lengths.ts';
import { prefixGroups, type SharedPrefixSpec } from './prefix-groups.ts';

export interface SyntheticOptions {
  /** Arrivals at or after this time are not generated. */
  durationS: number;
  /** Stop after this many requests even before durationS. */
  maxRequests?: number;
  arrivals: ArrivalSpec;
  lengths: LengthModel;
  labels?: LabelsSpec;
  /** Shared prompt prefixes with block hashes, for the prefix cache (prefix-groups.ts). */
  sharedPrefix?: SharedPrefixSpec;
}

/**
 * A synthetic workload as a re-iterable RequestSource. Each pass forks fresh streams from `rng` by name
 * ('arrivals', 'lengths', 'labels', 'prefix'), so passes are identical and changing one part (e.g. the label mix)
 * never shifts the draws of another.
 */
export function synthetic(opts: SyntheticOptions, rng: Rng): RequestSource {
  if (!(opts.durationS > 0)) throw new UserError(`synthetic: expected durationS > 0, got ${opts.durationS}`);
  if (opts.maxRequests !== undefined && !(Number.isInteger(opts.maxRequests) && opts.maxRequests >= 1)) {
    throw new UserError(`synthetic: expected maxRequests an integer ≥ 1, got ${opts.maxRequests}`);
  }
  checkArrivals(opts.arrivals);
  const sample = lengthSampler(opts.lengths);
  const pickers: [LabelKey, LabelPicker][] = [];
  for (const k of LABEL_KEYS) {
    const s = opts.labels?.[k];
    if (s !== undefined) pickers.push([k, labelPicker(s, k)]);
  }
  const durationS = opts.durationS;
  const max = opts.maxRequests ?? Infinity;
  return {
    *[Symbol.iterator]() {
      const times = arrivalTimes(opts.arrivals, rng.fork('arrivals'), durationS);
      const lengthRng = rng.fork('lengths');
      const labelRng = rng.fork('labels');
      const prefixRng = rng.fork('prefix');
      const prefix = opts.sharedPrefix ? prefixGroups(opts.sharedPrefix) : null;
      let id = 0;
      while (id < max) {
        const t = times.next().value;
        if (t >= durationS) break;
        const req: TraceRequest = { id: id++, arrivalS: t, inputTokens: 0, outputTokens: 0 };
        sample(lengthRng, req);
        for (const [k, pick] of pickers) req[k] = pick(labelRng);
        prefix?.(prefixRng, req);
        yield req;
      }
    },
  };
}
