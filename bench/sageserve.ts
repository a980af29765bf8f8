// SageServe ILP solve time (seed 000 §5; paper: 1.41 s for 4 models × 3 regions × 1 GPU type, 33 s for 20 × 20 × 5).
// Run: node --import tsx bench/sageserve.ts [--reps N]
// Random instances (seeded): current counts 0–20, demand up to 40 instances' worth per (model, region), θ per
// (model, GPU) 2k–10k tokens/s, α per GPU type $30–$100/h, σ = α × start-up (5–15 min), ε = 0.8. Times are the
// median over reps of HiGHS (WebAssembly, one thread) and of the closed-form solver used in the simulator (g = 1).
import { greedySageServe, solveSageServeIlp, type IlpInput } from '../src/policy/sageserve/ilp.ts';
import { Rng } from '../src/util/rng.ts';

const args = process.argv.slice(2);
const reps = Number(args[args.indexOf('--reps') + 1] ?? 5) || 5;

function instance(L: number, R: number, G: number, seed: number): IlpInput {
  const rng = new Rng(seed);
  const alpha = Array.from({ length: G }, () => 30 + 70 * rng.next());
  const theta = Array.from({ length: L }, () => Array.from({ length: G }, () => 2000 + 8000 * rng.next()));
  return {
    models: Array.from({ length: L }, (_, i) => `m${i}`),
    regions: Array.from({ length: R }, (_, j) => `r${j}`),
    gpus: Array.from({ length: G }, (_, k) => `g${k}`),
    n: Array.from({ length: L }, () => Array.from({ length: R }, () => Array.from({ length: G }, () => rng.int(21)))),
    rho: Array.from({ length: L }, (_, i) => Array.from({ length: R }, () => rng.next() * 40 * theta[i]![0]!)),
    theta,
    alpha,
    sigma: Array.from({ length: L }, () => alpha.map((a) => (a * (5 + 10 * rng.next())) / 60)),
    epsilon: 0.8,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log('(models,regions,gpus)  vars  HiGHS median s  status     objective  closed-form s  closed-form objective');
for (const [L, R, G] of [[4, 3, 1], [20, 20, 5]] as const) {
  const hs: number[] = [];
  const gs: number[] = [];
  let last = { status: '', objective: NaN };
  let gObj = NaN;
  for (let rep = 0; rep < reps; rep++) {
    const p = instance(L, R, G, 100 + rep);
    const t0 = performance.now();
    const h = await solveSageServeIlp(p, { timeLimitS: 120 });
    hs.push((performance.now() - t0) / 1000);
    last = h;
    if (G === 1) {
      const t1 = performance.now();
      gObj = greedySageServe(p).objective;
      gs.push((performance.now() - t1) / 1000);
    }
  }
  console.log(
    `(${L},${R},${G})`.padEnd(22), String(2 * L * R * G).padStart(5), median(hs).toFixed(4).padStart(15), last.status.padStart(8),
    last.objective.toFixed(2).padStart(13), (gs.length ? median(gs).toFixed(6) : '-').padStart(14), (Number.isNaN(gObj) ? '-' : gObj.toFixed(2)).padStart(22),
  );
}
