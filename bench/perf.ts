// Speed of the perf models on the engine's hot path (step-time calls) and of the one-off work (loading a
// profile, planning memory, calibrating). Plain script: `node --import tsx bench/perf.ts`.
import { performance } from 'node:perf_hooks';
import { getHardware, getModel } from '../src/model/catalog.ts';
import { makePerfModel, perfSpecSchema, planMemory } from '../src/perf/index.ts';
import { calibrate } from '../src/perf/calibrate.ts';
import { parseProfileCsv } from '../src/perf/profile-table.ts';
import { readFileSync } from 'node:fs';
import type { BatchShape, PerfModel } from '../src/perf/types.ts';

const dep = { model: getModel('llama2-70b'), hardware: getHardware('h100-80gb'), tp: 8, pp: 1 };
const rows: [string, string, string][] = [];

function perCall(name: string, n: number, fn: (i: number) => number): void {
  let sink = 0;
  for (let i = 0; i < 1000; i++) sink += fn(i); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < n; i++) sink += fn(i);
  const ns = ((performance.now() - t0) * 1e6) / n;
  if (!Number.isFinite(sink)) throw new Error('non-finite step time');
  rows.push([name, `${ns.toFixed(1)} ns/call`, `${n} calls`]);
}

function once(name: string, fn: () => unknown): void {
  const t0 = performance.now();
  fn();
  rows.push([name, `${(performance.now() - t0).toFixed(1)} ms`, '1 run']);
}

const shapes: BatchShape[] = Array.from({ length: 1024 }, (_, i) => ({
  prefillTokens: 1 + ((i * 37) % 2048),
  prefillSeqs: 1 + (i % 4),
  prefillAttendTokens: 1000 * (1 + (i % 50)),
  decodeSeqs: i % 256,
  decodeContextTokens: (i % 256) * 900,
}));
const models: [string, PerfModel][] = [
  ['roofline', makePerfModel(perfSpecSchema.parse({ kind: 'roofline' }), dep)],
  ['profile', makePerfModel(perfSpecSchema.parse({ kind: 'profile', path: 'data/profiles/splitwise_perf_model.csv' }), dep)],
];
for (const [kind, pm] of models) {
  perCall(`${kind} stepTimeS (mixed batch)`, 2_000_000, (i) => pm.stepTimeS(shapes[i & 1023]!));
  perCall(`${kind} decodeStepCoeffs(k)`, 2_000_000, (i) => pm.decodeStepCoeffs(1 + (i & 511)).baseS);
}
perCall('planMemory', 200_000, () => planMemory(dep).kvBlocks);
const text = readFileSync('data/profiles/splitwise_perf_model.csv', 'utf8');
once('parse splitwise_perf_model.csv (1,260 rows)', () => parseProfileCsv(text, 'splitwise_perf_model.csv'));
once('calibrate on the bundled profile (12 keys)', () => calibrate(parseProfileCsv(text, 'p.csv')));

const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))];
console.log(`${'what'.padEnd(w[0]!)}  ${'time'.padStart(w[1]!)}  n`);
for (const [a, b, c] of rows) console.log(`${a.padEnd(w[0]!)}  ${b.padStart(w[1]!)}  ${c}`);
