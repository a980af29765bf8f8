/** A variant as a point on the cost / SLO plane. */
export interface CostSloPoint {
  costUsd: number;
  /** SLO attainment in [0, 1]. */
  attainment: number;
}

/**
 * Indices of the points on the Pareto frontier (lower cost and higher attainment are better), sorted by
 * cost, ties by attainment descending then index. A point is on it when no other point is at least as good
 * on both axes and strictly better on one: ($10, 90 %) beats ($12, 85 %), but neither of ($10, 90 %) and
 * ($15, 99 %) beats the other. Identical points are both on it. Non-finite points are never on it, nor points that
 * attain nothing (0 %): the cheapest way to attain nothing, e.g. a variant without instances at $0, is no trade-off.
 */
export function paretoFrontier(points: readonly CostSloPoint[]): number[] {
  const ok = (p: CostSloPoint) => Number.isFinite(p.costUsd) && Number.isFinite(p.attainment) && p.attainment > 0;
  const front: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (!ok(p)) continue;
    const dominated = points.some(
      (q, j) => j !== i && ok(q) && q.costUsd <= p.costUsd && q.attainment >= p.attainment && (q.costUsd < p.costUsd || q.attainment > p.attainment),
    );
    if (!dominated) front.push(i);
  }
  return front.sort((a, b) => points[a]!.costUsd - points[b]!.costUsd || points[b]!.attainment - points[a]!.attainment || a - b);
}
