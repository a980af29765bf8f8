// SplitwiseSim vs llmfleet on the same trace (docs/fidelity/splitwise-compare.md). Two sub-commands:
//   node --import tsx bench/splitwisesim-compare.ts trace OUT.csv [ratePerS=80] [durationS=600] [seed=1]
//     writes a SplitwiseSim trace CSV (request_id,request_type,application_id,arrival_timestamp,batch_size,
//     prompt_size,token_size): Poisson arrivals, (prompt, output) pairs drawn from the Azure conv trace.
//     The first arrival is after t = 0 (SplitwiseSim runs a zero-delay arrival before its instances exist),
//     and no two share a timestamp (SplitwiseSim's heap orders equal-time arrivals arbitrarily).
//   node --import tsx bench/splitwisesim-compare.ts compare SPLITWISE_DETAILED.csv OURS_REQUESTS.csv
//     joins SplitwiseSim's detailed/0.csv with our requests.csv by request id and prints the per-request
//     differences of TTFT, E2E and TBT and both simulators' p50/p90/p99.
// bench/splitwisesim-compare.sh runs both simulators and then this comparison.
import { createWriteStream, readFileSync } from 'node:fs';
import { Rng } from '../src/util/rng.ts';
import { percentile } from '../src/metrics/stats.ts';

const [cmd, ...args] = process.argv.slice(2);

function readCsv(path: string): { header: string[]; rows: string[][] } {
  const lines = readFileSync(path, 'utf8').split(/\r?\n/).filter((l) => l !== '');
  return { header: lines[0]!.split(','), rows: lines.slice(1).map((l) => l.split(',')) };
}

function column(t: { header: string[] }, name: string, path: string): number {
  const i = t.header.indexOf(name);
  if (i < 0) throw new Error(`${path}: no column '${name}' (have ${t.header.join(', ')})`);
  return i;
}

async function writeTrace(out: string, rate: number, duration: number, seed: number): Promise<void> {
  const src = 'data/azure-llm/AzureLLMInferenceTrace_conv.csv';
  const t = readCsv(src);
  const iIn = column(t, 'ContextTokens', src);
  const iOut = column(t, 'GeneratedTokens', src);
  const pairs = t.rows.map((r) => [Number(r[iIn]), Number(r[iOut])] as const);
  const rng = new Rng(seed);
  const arrivals = rng.fork('arrivals');
  const lengths = rng.fork('lengths');
  const w = createWriteStream(out);
  w.write('request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n');
  // Timestamps are written with 9 decimals and kept strictly increasing: SplitwiseSim pops equal-time events
  // from a binary heap in no defined order, so two requests with one timestamp may be routed in either order.
  let time = arrivals.exponential(rate);
  let id = 0;
  let last = '';
  while (time < duration) {
    const [p, o] = pairs[lengths.int(pairs.length)]!;
    let stamp = time.toFixed(9);
    if (stamp <= last && stamp.length === last.length) stamp = (Number(last) + 1e-9).toFixed(9);
    last = stamp;
    w.write(`${id},2,0,${stamp},1,${p},${o}\n`);
    id++;
    time += arrivals.exponential(rate);
  }
  await new Promise<void>((res, rej) => w.end((e?: Error | null) => (e ? rej(e) : res())));
  console.log(`${out}: ${id} requests, ${rate} req/s Poisson over ${duration} s, seed ${seed}`);
}

function sortedOf(xs: number[]): Float64Array {
  return Float64Array.from(xs).sort();
}

function compare(swPath: string, oursPath: string): void {
  const sw = readCsv(swPath);
  const ours = readCsv(oursPath);
  const sId = column(sw, 'request_ids', swPath);
  const sE2e = column(sw, 'response_times', swPath);
  const sTtft = column(sw, 'ttft_times', swPath);
  const sTbt = column(sw, 'tbt_times', swPath);
  const sOut = column(sw, 'token_sizes', swPath);
  const oId = column(ours, 'id', oursPath);
  const oStatus = column(ours, 'status', oursPath);
  const oTtft = column(ours, 'ttft_s', oursPath);
  const oE2e = column(ours, 'e2e_s', oursPath);
  const oOut = column(ours, 'output_tokens', oursPath);

  const mine = new Map<number, { ttft: number; e2e: number; out: number }>();
  for (const r of ours.rows) {
    if (r[oStatus] !== 'completed') continue;
    mine.set(Number(r[oId]), { ttft: Number(r[oTtft]), e2e: Number(r[oE2e]), out: Number(r[oOut]) });
  }
  const metrics = ['ttft', 'e2e', 'tbt'] as const;
  const a: Record<(typeof metrics)[number], number[]> = { ttft: [], e2e: [], tbt: [] };
  const b: Record<(typeof metrics)[number], number[]> = { ttft: [], e2e: [], tbt: [] };
  const diff: Record<(typeof metrics)[number], number[]> = { ttft: [], e2e: [], tbt: [] };
  let missing = 0;
  let outMismatch = 0;
  const worst: { id: number; dE2e: number; dTtft: number }[] = [];
  for (const r of sw.rows) {
    const id = Math.round(Number(r[sId]));
    const m = mine.get(id);
    if (m === undefined) {
      missing++;
      continue;
    }
    if (m.out !== Number(r[sOut])) outMismatch++;
    const s = { ttft: Number(r[sTtft]), e2e: Number(r[sE2e]), tbt: Number(r[sTbt]) };
    const o = { ttft: m.ttft, e2e: m.e2e, tbt: (m.e2e - m.ttft) / m.out };
    for (const k of metrics) {
      a[k].push(s[k]);
      b[k].push(o[k]);
      diff[k].push(o[k] - s[k]);
    }
    worst.push({ id, dE2e: o.e2e - s.e2e, dTtft: o.ttft - s.ttft });
  }
  const n = diff.ttft.length;
  console.log(`joined ${n} requests by id (SplitwiseSim completed ${sw.rows.length}, llmfleet completed ${mine.size}; ` +
    `${missing} SplitwiseSim ids not completed by llmfleet; output-length mismatches ${outMismatch})`);
  console.log('\nsummary percentiles (s), numpy linear interpolation on both sides');
  console.log('metric  pct   SplitwiseSim      llmfleet    rel.diff');
  for (const k of metrics) {
    const sa = sortedOf(a[k]);
    const sb = sortedOf(b[k]);
    for (const p of [50, 90, 99]) {
      const x = percentile(sa, p);
      const y = percentile(sb, p);
      console.log(`${k.padEnd(6)}  p${String(p).padEnd(3)} ${x.toFixed(6).padStart(13)} ${y.toFixed(6).padStart(13)} ${((y - x) / x * 100).toFixed(3).padStart(9)}%`);
    }
  }
  console.log('\nper-request difference llmfleet − SplitwiseSim (s)');
  console.log('metric   |d|≤1e-6   |d|≤1e-3      mean        p1         p50         p99       max|d|');
  for (const k of metrics) {
    const d = diff[k];
    const ad = sortedOf(d.map(Math.abs));
    const sd = sortedOf(d);
    const within = (eps: number) => (d.filter((x) => Math.abs(x) <= eps).length / n * 100).toFixed(2) + '%';
    const mean = d.reduce((s, x) => s + x, 0) / n;
    console.log(`${k.padEnd(6)} ${within(1e-6).padStart(10)} ${within(1e-3).padStart(10)} ${mean.toExponential(2).padStart(10)} ` +
      `${percentile(sd, 1).toExponential(2).padStart(10)} ${percentile(sd, 50).toExponential(2).padStart(10)} ${percentile(sd, 99).toExponential(2).padStart(10)} ` +
      `${ad[ad.length - 1]!.toExponential(2).padStart(10)}`);
  }
  worst.sort((x, y) => Math.abs(y.dE2e) - Math.abs(x.dE2e));
  console.log('\nlargest |E2E difference|: ' + worst.slice(0, 5).map((w) => `id ${w.id} (ΔE2E ${w.dE2e.toFixed(4)} s, ΔTTFT ${w.dTtft.toFixed(4)} s)`).join('; '));
}

if (cmd === 'trace') {
  const [out, rate = '80', duration = '600', seed = '1'] = args;
  if (out === undefined) throw new Error('usage: trace OUT.csv [ratePerS] [durationS] [seed]');
  await writeTrace(out, Number(rate), Number(duration), Number(seed));
} else if (cmd === 'compare') {
  const [swPath, oursPath] = args;
  if (swPath === undefined || oursPath === undefined) throw new Error('usage: compare SPLITWISE_DETAILED.csv OURS_REQUESTS.csv');
  compare(swPath, oursPath);
} else {
  throw new Error('usage: splitwisesim-compare.ts trace|compare ...');
}
