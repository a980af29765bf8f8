import { kmeans } from 'ml-kmeans';
import { UserError } from '../util/errors.ts';
import type { TraceRequest } from '../workload/types.ts';

/**
 * OServe's workload types (§3.2, §4.4): k-means over (input length, output length). The digest leaves the
 * feature scaling open; as it suggests, we cluster log1p(length) standardised per axis, with k-means++
 * seeded initialisation (ml-kmeans) and `restarts` seeds, keeping the lowest within-cluster error. Types
 * are renumbered by centroid (input, then output) so type 0 is the shortest-input one whatever the seed.
 */
export interface WorkloadTypes {
  k: number;
  /** Centroids in tokens (expm1 of the log-space centroid), type order. */
  centroidsTokens: { inputTokens: number; outputTokens: number }[];
  /** Type of a request from its input and (true or predicted) output length. */
  assign(inputTokens: number, outputTokens: number): number;
  /** Label for series keys: 'type0'..'typeK-1'. */
  label(inputTokens: number, outputTokens: number): string;
  /** Everything needed to rebuild the classifier (persist it so live classification matches training). */
  toJSON(): WorkloadTypesState;
}

export interface WorkloadTypesState {
  k: number;
  mean: [number, number];
  sd: [number, number];
  centroids: [number, number][];
}

export function fitWorkloadTypes(
  requests: readonly Pick<TraceRequest, 'inputTokens' | 'outputTokens'>[],
  o: { k?: number; seed?: number; restarts?: number; maxPoints?: number } = {},
): WorkloadTypes {
  const k = o.k ?? 4;
  if (!Number.isInteger(k) || k < 1) throw new UserError(`workload types: k must be an integer ≥ 1, got ${k}`);
  if (requests.length < k) throw new UserError(`workload types: need at least k = ${k} requests, got ${requests.length}`);
  // Deterministic subsample (every n-th request) keeps k-means fast on multi-million-row traces.
  const stride = Math.max(1, Math.ceil(requests.length / (o.maxPoints ?? 50_000)));
  const raw: [number, number][] = [];
  for (let i = 0; i < requests.length; i += stride) raw.push([Math.log1p(requests[i]!.inputTokens), Math.log1p(requests[i]!.outputTokens)]);
  const mean: [number, number] = [0, 0];
  for (const p of raw) {
    mean[0] += p[0] / raw.length;
    mean[1] += p[1] / raw.length;
  }
  const sd: [number, number] = [0, 0];
  for (const p of raw) {
    sd[0] += (p[0] - mean[0]) ** 2 / raw.length;
    sd[1] += (p[1] - mean[1]) ** 2 / raw.length;
  }
  sd[0] = Math.sqrt(sd[0]) || 1;
  sd[1] = Math.sqrt(sd[1]) || 1;
  const data = raw.map((p) => [(p[0] - mean[0]) / sd[0], (p[1] - mean[1]) / sd[1]]);
  let best: number[][] | undefined;
  let bestErr = Infinity;
  const seed = o.seed ?? 1;
  for (let r = 0; r < (o.restarts ?? 5); r++) {
    const res = kmeans(data, k, { seed: seed + r, initialization: 'kmeans++', maxIterations: 100 });
    const err = res.computeInformation(data).reduce((s, c) => s + (c.error > 0 ? c.error * c.size : 0), 0);
    if (err < bestErr - 1e-12) {
      bestErr = err;
      best = res.centroids;
    }
  }
  const centroids = best!.map((c) => [c[0]!, c[1]!] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return fromState({ k, mean, sd, centroids });
}

/** Rebuilds a classifier from `toJSON()` output. */
export function fromState(s: WorkloadTypesState): WorkloadTypes {
  const assign = (inputTokens: number, outputTokens: number) => {
    const x = (Math.log1p(inputTokens) - s.mean[0]) / s.sd[0];
    const y = (Math.log1p(outputTokens) - s.mean[1]) / s.sd[1];
    let best = 0;
    let bestD = Infinity;
    s.centroids.forEach((c, i) => {
      const d = (x - c[0]) ** 2 + (y - c[1]) ** 2;
      if (d < bestD) {
        bestD = d;
        best = i;
      }
    });
    return best;
  };
  return {
    k: s.k,
    centroidsTokens: s.centroids.map((c) => ({
      inputTokens: Math.expm1(c[0] * s.sd[0] + s.mean[0]),
      outputTokens: Math.expm1(c[1] * s.sd[1] + s.mean[1]),
    })),
    assign,
    label: (i, o) => `type${assign(i, o)}`,
    toJSON: () => s,
  };
}

/**
 * A `typeOf` for buildSeries: types a request from its input length and its output length as `predictor`
 * predicts it at arrival (OServe types live requests before their output is known), or from the true
 * output length when no predictor is given (offline history).
 */
export function typeLabeller(
  types: WorkloadTypes,
  predictor?: { predict(r: TraceRequest): { point: number } },
): (r: TraceRequest) => string {
  return (r) => types.label(r.inputTokens, predictor ? predictor.predict(r).point : r.outputTokens);
}
