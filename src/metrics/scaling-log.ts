import { netChange, type PoolStatus, type ScaleAction } from '../policy/scaling/types.ts';
import { csvCell } from '../util/csv.ts';

/**
 * One pool's scaling at one tick of the simulator: what the policy asked (net instances, + add / − remove) and what
 * the governor let through (bounds, cooldowns, step, stabilization window), with the pool's state before it. A row
 * with `asked` ≠ 0 and `applied` 0 is a vetoed request; `applied` without `asked` is the governor's top-up to
 * `minCount` (`below-min`). Scheduled actions (`scaling.actions`) have the reason `scheduled`.
 */
export interface ScalingDecision {
  tS: number;
  pool: string;
  ready: number;
  provisioning: number;
  asked: number;
  applied: number;
  /** The policy's reason codes for the pool at this tick, joined with '+' (the governor's when it acted alone). */
  reason: string;
}

/** The rows of one scaling tick: the pools the policy asked to change or the governor changed. */
export function tickDecisions(tS: number, pools: readonly PoolStatus[], asked: readonly ScaleAction[], applied: readonly ScaleAction[]): ScalingDecision[] {
  const rows: ScalingDecision[] = [];
  for (const p of pools) {
    const a = netChange(asked, p.name);
    const g = netChange(applied, p.name);
    if (a === 0 && g === 0) continue;
    // The policy's reasons; the governor's when it acted alone (a top-up to minCount).
    const reasons = new Set<string>();
    for (const x of a !== 0 ? asked : applied) if (x.kind !== 'hold' && x.pool === p.name) reasons.add(x.reason);
    rows.push({ tS, pool: p.name, ready: p.ready, provisioning: p.provisioning, asked: a, applied: g, reason: [...reasons].join('+') });
  }
  return rows;
}

export function scalingCsv(rows: readonly ScalingDecision[]): string {
  const head = 't_s,pool,ready,provisioning,asked,applied,reason\n';
  return head + rows.map((r) => `${r.tS.toFixed(6)},${csvCell(r.pool)},${r.ready},${r.provisioning},${r.asked},${r.applied},${csvCell(r.reason)}\n`).join('');
}
