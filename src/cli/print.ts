import { headlineAttainment, type Summary } from '../metrics/summary.ts';
import { sloTargetsText, type LatencyBlock } from '../metrics/collector.ts';
import { formatAmount, formatAttainment, formatLatency as ms } from '../report/format.ts';


/** The human summary of one run (stdout). */
export function printSummary(s: Summary): void {
  const r = s.requests;
  const lines: string[] = [];
  lines.push(`scenario ${s.scenario} (seed ${s.seed}): ${r.total} requests, ${r.completed} completed, ${r.dropped} dropped, ${r.unfinished} unfinished`);
  for (const [k, v] of Object.entries(r.dropReasons)) lines.push(`  dropped (${k}): ${v}`);
  for (const [k, v] of Object.entries(r.skippedInTrace)) lines.push(`  skipped trace rows (${k}): ${v}, not replayed`);
  if (r.warmup !== undefined) lines.push(`  warm-up (output.warmupS): ${r.warmup} more served, left out of every figure here`);
  for (const n of s.notes) lines.push(`note: ${n}`);
  lines.push('');
  lines.push(pad(['metric', 'mean', 'p50', 'p90', 'p99']));
  // E2E/token: E2E over output tokens, PreServe's "normalised latency".
  // summary.json keeps zeros for an empty sample (with requests.completed, or tpot.count, beside them); the table
  // says so plainly. TPOT's sample is the completed requests with more than one output token.
  for (const [name, d, n] of [['queue', s.queue, r.completed], ['TTFT', s.ttft, r.completed], ['TPOT', s.tpot, s.tpot.count], ['E2E', s.e2e, r.completed], ['E2E/token', s.normalizedE2e, r.completed]] as const) {
    const cell = (v: number) => (n > 0 ? ms(v) : '–');
    lines.push(pad([name, cell(d.mean), cell(d.p50), cell(d.p90), cell(d.p99)]));
  }
  if (r.completed > 0 && s.tpot.count === 0) lines.push('TPOT –: every completed request had a single output token (no time between tokens)');
  lines.push('');
  // Nothing to attain in a run without requests: "–", not 0 %.
  const att = (a: number, n: number) => (n > 0 ? `${formatAttainment(a)} attained` : '–');
  const targets = sloTargetsText(s.slo);
  const untiered = r.total - Object.values(s.tiers ?? {}).reduce((n, b) => n + b.requests.total, 0);
  const judged = !s.tiers ? targets : `each request by its tier's targets${untiered > 0 ? `; untiered: ${targets}` : ''}`;
  lines.push(`SLO (${judged}): ${att(headlineAttainment(s), r.total)}`);
  const part = (kind: string, name: string, b: LatencyBlock) =>
    `  ${kind} ${name}: ${att(b.slo.attainment, b.requests.total)}, TTFT p99 ${b.requests.completed > 0 ? ms(b.ttft.p99) : '–'}, ` +
    `TPOT p99 ${b.tpot.count > 0 ? ms(b.tpot.p99) : '–'}, ${b.requests.total} request${b.requests.total === 1 ? '' : 's'}`;
  for (const [t, b] of Object.entries(s.tiers ?? {})) lines.push(part('tier', t, b));
  // Per model and per pool: by the top-level targets, whatever the tiers.
  const by = [s.models ? 'model' : '', s.pools ? 'pool' : ''].filter((k) => k !== '');
  if (by.length > 0) lines.push(`by ${by.join(' and by ')} (${targets}):`);
  for (const [m, b] of Object.entries(s.models ?? {})) lines.push(part('model', m, b));
  for (const [p, b] of Object.entries(s.pools ?? {})) lines.push(part('pool', p, b));
  if (s.utility) lines.push(`utility: ${s.utility.earned.toFixed(0)} of ${s.utility.possible.toFixed(0)} earned (${((s.utility.earned / (s.utility.possible || 1)) * 100).toFixed(1)}%)`);
  lines.push(`throughput: ${s.throughput.requestsPerSecond.toFixed(2)} req/s, ${s.throughput.outputTokensPerSecond.toFixed(0)} output tok/s`);
  const f = s.fleet;
  lines.push(`fleet: ${f.instances} instance${f.instances === 1 ? '' : 's'} started (peak ${f.peakInstances} at once), ${formatAmount(f.instanceHours)} instance-h, ${formatAmount(f.gpuHours)} GPU-h (${formatAmount(f.wastedGpuHours)} provisioning), $${formatAmount(f.costUsd)}`);
  if (s.spot) {
    const sp = s.spot;
    const reclaims = Object.entries(sp.reclaims).map(([k, v]) => `${v} ${k}`).join(', ');
    lines.push(`spot pool: ${sp.donations} donated, scale-outs from ${reclaims}; ${sp.instanceHours.toFixed(2)} spot instance-h, $${sp.revenueUsd.toFixed(2)} revenue`);
  }
  const mg = s.engine.migrations;
  const pc = s.engine.prefixCache;
  if (pc) lines.push(`prefix cache: ${(100 * pc.hitRate).toFixed(1)} % of ${pc.queryTokens.toLocaleString('en-US')} prompt tokens found cached (engine.prefixCache)`);
  if (mg) lines.push(`migrations: ${mg.completed} completed of ${mg.ordered} ordered (${mg.refused} refused, ${mg.dropped} dropped), mean downtime ${ms(mg.meanDowntimeS)}`);
  lines.push(`simulated ${s.sim.simulatedSeconds.toFixed(0)} s in ${s.sim.wallSeconds.toFixed(2)} s wall (${s.sim.events} events, ${s.engine.iterations} iterations, ${s.engine.preemptions} preemptions)`);
  process.stdout.write(lines.join('\n') + '\n');
}

function pad(cells: string[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(10) : ` ${c.padStart(10)}`)).join('');
}
