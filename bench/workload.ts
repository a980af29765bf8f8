// Workload-layer throughput: trace parsing (rows/s) and synthetic generation (requests/s).
// Run: node --import tsx bench/workload.ts [rows]   (default 2,000,000 Azure rows). Timings go to stdout as a table.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../src/util/rng.ts';
import { fitEmpirical, openTrace, synthetic, applyTransforms, type RequestSource } from '../src/workload/index.ts';

const ROWS = Number(process.argv[2] ?? 2_000_000);
const CONV = new URL('../data/azure-llm/AzureLLMInferenceTrace_conv.csv', import.meta.url).pathname;

/** An Azure-2023-format file of `rows` rows: conv lengths repeated, one arrival every 5 ms, CRLF endings. */
function writeAzure(path: string, rows: number): void {
  const lengths = readFileSync(CONV, 'utf8').split('\r\n').slice(1).map((r) => r.slice(r.indexOf(',')));
  const fd = openSync(path, 'w');
  let buf = 'TIMESTAMP,ContextTokens,GeneratedTokens';
  const p2 = (n: number) => (n < 10 ? '0' : '') + n;
  for (let i = 0; i < rows; i++) {
    const ticks = i * 50_000 + (i % 7); // 100 ns ticks: 5 ms apart, odd last digits
    const s = Math.floor(ticks / 1e7);
    const frac = String(ticks % 1e7).padStart(7, '0');
    const day = 16 + Math.floor(s / 86_400);
    const sod = s % 86_400;
    buf += `\r\n2023-11-${day} ${p2(Math.floor(sod / 3600))}:${p2(Math.floor(sod / 60) % 60)}:${p2(sod % 60)}.${frac}${lengths[i % lengths.length]}`;
    if (buf.length > 1 << 20) {
      writeSync(fd, buf);
      buf = '';
    }
  }
  writeSync(fd, buf);
  closeSync(fd);
}

function time(src: RequestSource): { n: number; s: number; check: number } {
  const t0 = performance.now();
  let n = 0;
  let check = 0;
  for (const r of src) {
    n++;
    check += r.inputTokens;
  }
  return { n, s: (performance.now() - t0) / 1000, check };
}

const dir = mkdtempSync(join(tmpdir(), 'llmfleet-bench-'));
const rowsOut: [string, number, number, number][] = [];
function run(name: string, make: () => RequestSource, reps = 3): void {
  let best = Infinity;
  let n = 0;
  for (let k = 0; k < reps; k++) {
    const r = time(make());
    n = r.n;
    best = Math.min(best, r.s);
  }
  rowsOut.push([name, n, best, n / best]);
}

try {
  const big = join(dir, 'azure.csv');
  const tw = performance.now();
  writeAzure(big, ROWS);
  process.stderr.write(`wrote ${ROWS} rows (${(statSync(big).size / 1e6).toFixed(1)} MB) in ${((performance.now() - tw) / 1000).toFixed(1)} s\n`);

  run('azure csv parse (1 MiB chunks)', () => openTrace(big, 'azure'));
  const gz = join(dir, 'azure.csv.gz');
  writeFileSync(gz, gzipSync(readFileSync(big)));
  run('azure csv.gz parse (inflated as it streams)', () => openTrace(gz, 'azure'));
  run('azure csv parse + window/compress/rateScale 1.5', () =>
    applyTransforms(openTrace(big, 'azure'), { window: { startS: 100 }, compress: 2, rateScale: 1.5 }, new Rng(1)),
  );
  const pairs = fitEmpirical(openTrace(CONV, 'azure'));
  const lognormal = { kind: 'lognormal', input: { mu: 6.6, sigma: 1, min: 1, max: 16_384 }, output: { mu: 5, sigma: 0.9, min: 1, max: 4096 } } as const;
  run('synthetic poisson + lognormal (1 M)', () => synthetic({ durationS: 1e9, maxRequests: 1_000_000, arrivals: { kind: 'poisson', ratePerS: 80 }, lengths: lognormal }, new Rng(1)));
  run('synthetic gamma cv 2 + empirical (1 M)', () =>
    synthetic({ durationS: 1e9, maxRequests: 1_000_000, arrivals: { kind: 'gamma', ratePerS: 80, cv: 2 }, lengths: { kind: 'empirical', pairs } }, new Rng(1)),
  );
  run('synthetic diurnal curve + empirical + tier mix (1 M)', () =>
    synthetic(
      {
        durationS: 1e9,
        maxRequests: 1_000_000,
        arrivals: { kind: 'curve', baseRatePerS: 12, diurnalAmplitude: 0.6, peakHour: 14, weekendFactor: 0.5 },
        lengths: { kind: 'empirical', pairs },
        labels: { tier: { 'iw-f': 0.3, 'iw-n': 0.5, 'niw': 0.2 } },
      },
      new Rng(1),
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`| workload | requests | best of 3 (s) | requests/s |`);
console.log(`| --- | ---: | ---: | ---: |`);
for (const [name, n, s, rate] of rowsOut) {
  console.log(`| ${name} | ${n.toLocaleString('en-US')} | ${s.toFixed(3)} | ${(rate / 1e6).toFixed(2)} M |`);
}
