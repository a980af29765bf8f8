import { agh } from './agh.ts';
import { buildCoefficients } from './coefficients.ts';
import { evaluate } from './evaluate.ts';
import { budgetForTypes, generateProblem } from './generate.ts';
import type { Problem } from './problem.ts';
import type { Progress } from './studies.ts';

/**
 * Fig. 5(d)–(f) (digest §4.7, §5.6): AGH re-planned on two-parameter grids. The paper gives neither the grid
 * values nor the plot type [A: factors below]; its claims, which the printed tables let one check:
 * (d) a tighter Δ_i pushes TP up (GPUs roughly ∝ 1/Δ_i until the TP cap); ε_i acts as a switch (INT8/INT4
 *     vanish at once below a type's threshold);
 * (e) a higher GPU price makes AGH consolidate on fewer, stronger tiers, more so under a tight δ;
 * (f) with relaxed Δ_i cost is almost flat in price, with tight Δ_i almost linear.
 */

export type SensitivityGrid = 'delay×error' | 'budget×price' | 'price×delay';

/** Per grid: the row parameter a and the column parameter b (factors on Δ_i, ε_i, p_k^c; δ in $ at (6,6,10)). */
export const SENSITIVITY_GRIDS: Record<SensitivityGrid, { a: { name: string; values: number[] }; b: { name: string; values: number[] } }> = {
  'delay×error': { a: { name: 'Δ ×', values: [0.5, 0.75, 1, 1.5, 2] }, b: { name: 'ε ×', values: [0.5, 0.75, 1, 1.5, 2] } },
  'budget×price': { a: { name: 'δ $', values: [50, 75, 100, 150] }, b: { name: 'price ×', values: [0.5, 1, 2, 4] } },
  'price×delay': { a: { name: 'price ×', values: [0.5, 1, 2, 4] }, b: { name: 'Δ ×', values: [0.5, 0.75, 1, 1.5, 2] } },
};

export interface SensitivityPoint {
  grid: SensitivityGrid;
  a: number;
  b: number;
  /** Nominal objective (8a) of AGH's plan. */
  objective: number;
  rentalUsd: number;
  gpus: number;
  pairs: number;
  /** Compute per rented GPU, GPU-weighted mean of the tiers' TFLOPS ("stronger tiers"). */
  tflopsPerGpu: number;
  /** Share of GPUs on quantised tiers (error multiplier μ_k > 1). */
  quantizedGpuShare: number;
  servedPct: number;
}

/** The problem with Δ_i × delay, ε_i × error, p_k^c × price and δ = budget·I/6 (when given). */
export function scaledProblem(p: Problem, f: { delay?: number; error?: number; price?: number; budgetUsd?: number }): Problem {
  return {
    ...p,
    ...(f.budgetUsd !== undefined ? { budgetUsd: budgetForTypes(f.budgetUsd, p.types.length) } : {}),
    types: p.types.map((t) => ({ ...t, delaySloS: t.delaySloS * (f.delay ?? 1), errorSlo: Math.min(1, t.errorSlo * (f.error ?? 1)) })),
    tiers: p.tiers.map((k) => ({ ...k, priceUsdPerHour: k.priceUsdPerHour * (f.price ?? 1) })),
  };
}

function factors(grid: SensitivityGrid, a: number, b: number): Parameters<typeof scaledProblem>[1] {
  switch (grid) {
    case 'delay×error': return { delay: a, error: b };
    case 'budget×price': return { budgetUsd: a, price: b };
    case 'price×delay': return { price: a, delay: b };
  }
}

export function sensitivityStudy(opts: { size?: [number, number, number]; seed?: number; grids?: SensitivityGrid[]; progress?: Progress } = {}): SensitivityPoint[] {
  const seed = opts.seed ?? 1;
  const base = generateProblem(...(opts.size ?? [6, 6, 10]), seed);
  const out: SensitivityPoint[] = [];
  for (const grid of opts.grids ?? (Object.keys(SENSITIVITY_GRIDS) as SensitivityGrid[])) {
    const g = SENSITIVITY_GRIDS[grid];
    for (const a of g.a.values) {
      for (const b of g.b.values) {
        const p = scaledProblem(base, factors(grid, a, b));
        const c = buildCoefficients(p);
        const alloc = agh(c, { seed }).state.toAllocation();
        const ev = evaluate(c, alloc);
        let gpus = 0, pairs = 0, tflops = 0, quantized = 0;
        for (let pr = 0; pr < c.J * c.K; pr++) {
          const cf = alloc.cfg[pr]!;
          if (cf < 0) continue;
          const n = c.configs[cf]!.gpus;
          const tier = p.tiers[pr % c.K]!;
          pairs++;
          gpus += n;
          tflops += n * tier.tflops;
          if (tier.errorScale > 1) quantized += n;
        }
        out.push({
          grid, a, b,
          objective: ev.objective,
          rentalUsd: ev.costBreakdown.gpuRental,
          gpus, pairs,
          tflopsPerGpu: gpus ? tflops / gpus : 0,
          quantizedGpuShare: gpus ? quantized / gpus : 0,
          servedPct: (100 * ev.perType.reduce((s, t) => s + t.served, 0)) / ev.perType.length,
        });
      }
    }
    opts.progress?.(`sensitivity: ${grid} done`);
  }
  return out;
}
