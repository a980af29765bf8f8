import { UserError } from '../../util/errors.ts';
import type { Rng } from '../../util/rng.ts';

/** A label is fixed (`"iw-f"`) or a weighted mix (`{ "iw-f": 0.3, "iw-n": 0.7 }`, weights need not sum to 1). */
export type LabelSpec = string | Record<string, number>;
export const LABEL_KEYS = ['model', 'tier', 'region', 'app'] as const;
export type LabelKey = (typeof LABEL_KEYS)[number];
export type LabelsSpec = Partial<Record<LabelKey, LabelSpec>>;

/** Draws one value; a fixed label draws nothing from the rng (so adding one shifts no other stream). */
export type LabelPicker = (rng: Rng) => string;

export function labelPicker(spec: LabelSpec, key: string): LabelPicker {
  if (typeof spec === 'string') return () => spec;
  const names = Object.keys(spec);
  const weights = names.map((n) => spec[n]!);
  // The workload schema rejects these at their file line; this guards direct callers (a UserError, as the
  // other generators' checks are).
  if (!(weights.length > 0 && weights.every((w) => w >= 0 && Number.isFinite(w)) && weights.reduce((s, w) => s + w, 0) > 0)) {
    throw new UserError(`labels.${key}: expected a name or a map of names to weights ≥ 0 with a positive sum, got ${JSON.stringify(spec)}`);
  }
  if (names.length === 1) return () => names[0]!;
  // Weights near the largest double can sum to Infinity, and w / Infinity is 0 for every name (the last would take
  // every draw): then scale them by the largest first, which keeps their ratios and a finite sum (at most n).
  let total = weights.reduce((s, w) => s + w, 0);
  if (!Number.isFinite(total)) {
    const max = Math.max(...weights);
    for (let i = 0; i < weights.length; i++) weights[i] = weights[i]! / max;
    total = weights.reduce((s, w) => s + w, 0);
  }
  const cum = new Float64Array(names.length);
  let acc = 0;
  weights.forEach((w, i) => (cum[i] = acc += w / total));
  // The last name with a positive weight takes every u past the earlier ones: the cumulative sum can round to a
  // hair below 1, and a zero-weight name after it must never be drawn.
  let last = names.length - 1;
  while (weights[last] === 0) last--;
  return (rng) => {
    const u = rng.next();
    for (let i = 0; i < last; i++) if (u < cum[i]!) return names[i]!;
    return names[last]!;
  };
}
