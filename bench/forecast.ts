// Forecaster speed on a one-week 1-minute series (10,080 points): fit + 60-step forecast, wall seconds.
// Targets (issue 3): Holt-Winters < 1 s, ARIMA(2,1,2) < 3 s. Run: node --import tsx bench/forecast.ts
import { score } from '../src/forecast/backtest.ts';
import { arima, sarima } from '../src/forecast/arima.ts';
import { holtWinters } from '../src/forecast/holt-winters.ts';
import { lstm } from '../src/forecast/lstm.ts';
import { seasonalNaive } from '../src/forecast/seasonal-naive.ts';
import { syntheticSeries } from '../src/forecast/synthetic.ts';
import type { Forecaster } from '../src/forecast/types.ts';
import { buildSeries } from '../src/forecast/series.ts';
import { evaluateLength } from '../src/forecast/length/evaluate.ts';
import { lengthPredictors } from '../src/forecast/length/registry.ts';
import { fitWorkloadTypes, typeLabeller } from '../src/forecast/workload-types.ts';
import { openTrace } from '../src/workload/index.ts';

const HORIZON = 60;
const { values } = syntheticSeries({ points: 10_080 + HORIZON, stepS: 60, seed: 1, noise: 0.05, burstsPerDay: 4 });
const history = values.slice(0, 10_080);
const actual = values.slice(10_080);

const cases: { name: string; make: () => Forecaster; period: number; target?: number }[] = [
  { name: 'seasonal-naive (day)', make: seasonalNaive, period: 1440 },
  { name: 'holt-winters additive (day)', make: () => holtWinters('additive'), period: 1440, target: 1 },
  { name: 'holt-winters multiplicative (day)', make: () => holtWinters('multiplicative'), period: 1440, target: 1 },
  { name: 'arima(2,1,2)', make: () => arima({ p: 2, d: 1, q: 2 }), period: 1, target: 3 },
  { name: 'arima(3,1,2) (SageServe code)', make: () => arima({ p: 3, d: 1, q: 2 }), period: 1 },
  { name: 'sarima(1,0,1)(0,1,1)1440', make: () => sarima(), period: 1440 },
  { name: 'lstm (defaults)', make: () => lstm(), period: 1440 },
];

const rows: string[][] = [['model', 'cold s', 'warm s', 'target', 'MAPE next 60', 'coverage80']];
for (const c of cases) {
  const times: number[] = [];
  let mape = NaN;
  let cov = NaN;
  for (let run = 0; run < 2; run++) {
    const t0 = performance.now();
    const f = c.make();
    f.fit(history, { period: c.period, seed: 1 });
    const fc = f.forecast(HORIZON);
    times.push((performance.now() - t0) / 1000);
    const m = score([{ actual, forecast: fc }]);
    mape = m.mape ?? NaN;
    cov = m.coverage80;
  }
  const ok = c.target === undefined ? '' : `< ${c.target} s ${times[1]! < c.target ? 'ok' : 'MISSED'}`;
  rows.push([c.name, times[0]!.toFixed(3), times[1]!.toFixed(3), ok, `${mape.toFixed(2)}%`, `${cov.toFixed(0)}%`]);
}
table(rows);
console.log(`\nseries: synthetic, ${history.length} points at 60 s, diurnal + weekly + trend + 5% noise + bursts; ARIMA fits the last 4,000 points (WASM stack limit)`);

function table(rows: string[][]): void {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i]!)).join('  '));
}

// Accuracy on the bundled Azure 2023 traces (about one hour each): per-minute token rates, PreServe's 1:1
// time-ordered split, one-step-ahead forecasts refitted at every step on all data so far (expanding window).
const AZURE = ['conv', 'code'].map((f) => ({ name: f, path: `data/azure-llm/AzureLLMInferenceTrace_${f}.csv` }));
console.log('\nAzure traces, 1-minute series, one-step-ahead (refit each step), test = second half');
const accRows: string[][] = [['trace', 'series', 'model', 'MAPE', 'max APE', 'RRMSE', 'coverage80']];
const oneStep: { name: string; make: () => Forecaster }[] = [
  { name: 'naive (last value)', make: seasonalNaive },
  { name: 'holt (no season)', make: () => holtWinters('additive') },
  { name: 'arima(2,1,2)', make: () => arima() },
  { name: 'lstm (window 6, 4 units)', make: () => lstm({ window: 6, units: 4, epochs: 20 }) },
];
for (const t of AZURE) {
  const [s] = buildSeries(openTrace(t.path, 'azure'), { stepS: 60 });
  // The last bucket is partial (the trace ends inside it): drop it.
  for (const metric of ['inputTokensPerS', 'outputTokensPerS'] as const) {
    const y = s![metric].slice(0, -1);
    const cut = Math.floor(y.length / 2);
    for (const m of oneStep) {
      const windows = [];
      let maxApe = 0;
      for (let i = cut; i < y.length; i++) {
        const f = m.make();
        f.fit(y.slice(0, i), { period: 1, seed: 1 });
        const fc = f.forecast(1);
        windows.push({ actual: [y[i]!], forecast: fc });
        if (y[i]! > 0) maxApe = Math.max(maxApe, Math.abs(fc.point[0]! - y[i]!) / y[i]!); // MAPE skips empty minutes too
      }
      const sc = score(windows);
      accRows.push([t.name, metric, m.name, `${sc.mape!.toFixed(1)}%`, `${(100 * maxApe).toFixed(1)}%`, `${sc.rrmse!.toFixed(1)}%`, `${sc.coverage80.toFixed(0)}%`]);
    }
  }
}
table(accRows);

console.log('\nOutput-length predictors on the Azure traces: first half observed, second half predicted then observed');
const lenRows: string[][] = [['trace', 'predictor', 'MAE', 'Acc-25', 'Acc-50', 'Acc-100', 'coverage80', 'n']];
for (const t of AZURE) {
  const reqs = [...openTrace(t.path, 'azure')];
  for (const [name, make] of Object.entries(lengthPredictors)) {
    const m = evaluateLength(make(1), reqs, 0.5);
    lenRows.push([t.name, name, m.mae.toFixed(1), `${m.acc25.toFixed(1)}%`, `${m.acc50.toFixed(1)}%`, `${m.acc100.toFixed(1)}%`, `${m.coverage80.toFixed(1)}%`, String(m.n)]);
  }
}
table(lenRows);

console.log('\nWorkload types: k-means (k = 4, seed 1) on both Azure traces, log1p lengths standardised');
const both = AZURE.flatMap((t) => [...openTrace(t.path, 'azure')]);
const types = fitWorkloadTypes(both, { seed: 1 });
const counts = new Array<number>(types.k).fill(0);
for (const r of both) counts[types.assign(r.inputTokens, r.outputTokens)]!++;
table([
  ['type', 'centroid input', 'centroid output', 'requests'],
  ...types.centroidsTokens.map((c, i) => [`type${i}`, c.inputTokens.toFixed(0), c.outputTokens.toFixed(0), String(counts[i])]),
]);

// OServe §4.4's metric: per-type request counts per minute, one-step-ahead, RRMSE per type then averaged
// (types from k-means on the conv trace itself; first half observed, refit each step on the second half).
console.log('\nOServe-style per-type counts (conv, 1-minute spans, 4 types), one-step-ahead, mean RRMSE over types');
const conv = [...openTrace(AZURE[0]!.path, 'azure')];
const convTypes = fitWorkloadTypes(conv, { seed: 1 });
const perType = buildSeries(conv, { stepS: 60, keys: ['type'], typeOf: typeLabeller(convTypes) });
const typeRows: string[][] = [['model', 'mean RRMSE', ...perType.map((s) => s.key)]];
for (const m of oneStep.slice(0, 3)) {
  const rr: number[] = [];
  for (const s of perType) {
    const y = s.requestsPerS.slice(0, -1).map((v) => v * 60);
    const cut = Math.floor(y.length / 2);
    const windows = [];
    for (let i = cut; i < y.length; i++) {
      const f = m.make();
      f.fit(y.slice(0, i), { period: 1 });
      windows.push({ actual: [y[i]!], forecast: f.forecast(1) });
    }
    rr.push(score(windows).rrmse ?? NaN);
  }
  typeRows.push([m.name, `${(rr.reduce((a, b) => a + b, 0) / rr.length).toFixed(1)}%`, ...rr.map((v) => `${v.toFixed(1)}%`)]);
}
table(typeRows);
