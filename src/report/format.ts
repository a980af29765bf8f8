import { sloTargetsText } from '../metrics/collector.ts';
import type { Summary } from '../metrics/summary.ts';

/** A latency in seconds as people read it: "12.3 ms" below one second, "7481.04 s" from there (never "7481043 ms"). */
export const formatLatency = (s: number): string => (s < 1 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`);

/** An amount (USD, hours) to 2 decimals; one that would print as 0.00 but is not 0, to 2 significant digits (0.00024). */
export const formatAmount = (v: number): string => (v !== 0 && Math.abs(v) < 0.005 ? v.toPrecision(2) : v.toFixed(2));

/**
 * An SLO attainment in [0, 1] to 0.01 %, rounded down so that a run with any miss never prints 100 %:
 * "99.97%", "100%" only when every request met its targets.
 */
export const formatAttainment = (a: number): string => (a >= 1 ? '100%' : `${(attainmentAsPrinted(a) * 100).toFixed(2)}%`);

/** An attainment (fraction) as `formatAttainment` shows it: floored to 0.01 % (a hair of float noise allowed). */
function attainmentAsPrinted(a: number): number {
  return a >= 1 ? 1 : Math.floor(a * 1e4 + 1e-7) / 1e4;
}

/** A cost / attainment point as the comparison table prints it: cents, and 0.01 % of attainment. */
export const asPrinted = (p: { costUsd: number; attainment: number }) => ({
  costUsd: Math.round(p.costUsd * 100) / 100,
  attainment: attainmentAsPrinted(p.attainment),
});

/**
 * Seed, request count and SLO targets of one or more runs, once when they agree and per run where they differ (a
 * variant can change the seed, the workload or the targets: a comparison would otherwise read as like for like).
 */
export function describeRuns(runs: readonly { name: string; summary: Summary }[]): string {
  return describeRunsParts(runs).join('; ');
}

/** describeRuns' parts: seed, requests, SLO. */
export function describeRunsParts(runs: readonly { name: string; summary: Summary }[]): string[] {
  const part = (what: (s: Summary) => string): string => {
    const values = runs.map((r) => what(r.summary));
    return new Set(values).size === 1 ? values[0]! : runs.map((r, i) => `${r.name}: ${values[i]}`).join(', ');
  };
  const slo = (s: Summary) => `${sloTargetsText(s.slo)}${s.tiers ? ' (untiered; tiers by their own)' : ''}`;
  return [`seed ${part((s) => String(s.seed))}`, `requests ${part((s) => s.requests.total.toLocaleString('en-US'))}`, `SLO ${part(slo)}`];
}
