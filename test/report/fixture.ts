import { resolve } from 'node:path';
import { runComparison, type VariantResult } from '../../src/report/compare.ts';
import type { ComparisonSetup } from '../../src/report/variants.ts';
import { scenarioSchema, type Scenario } from '../../src/scenario/schema.ts';

/**
 * Two minutes of synthetic Poisson traffic in two tiers on one Llama-3.1-8B H100 instance, with one more
 * instance added at 30 s (so the timeline has provisioning and ready states). Runs in well under a second.
 */
export function tierScenario(over: Record<string, unknown> = {}): Scenario {
  return scenarioSchema.parse({
    name: 'tiny-tiers',
    seed: 3,
    workload: {
      synthetic: {
        durationS: 120,
        arrivals: { kind: 'poisson', ratePerS: 12 },
        lengths: { kind: 'lognormal', input: { mu: 6, sigma: 0.6, max: 4000 }, output: { mu: 4.5, sigma: 0.6, max: 1000 } },
        labels: { tier: { gold: 1, bronze: 2 } },
      },
    },
    fleet: { pools: [{ name: 'h100', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }], provisioning: { vmAcquireS: 10, modelLoadS: 5 } },
    scaling: { policy: 'scheduled', actions: [{ atS: 30, action: 'add', pool: 'h100', count: 1 }] },
    slo: { ttftS: 0.05, tpotS: 0.012, tiers: { gold: { ttftS: 0.025 } } },
    output: { timelineIntervalS: 5 },
    ...over,
  });
}

/** Three variants of tierScenario (one, two and three instances at the start), run in this thread. */
export async function smallComparison(): Promise<{ setup: ComparisonSetup; results: VariantResult[] }> {
  const base = tierScenario();
  const pools = (count: number) => ({ ...base.fleet, pools: [{ ...base.fleet.pools[0]!, count }] });
  const setup: ComparisonSetup = {
    source: 'fixture',
    baseDir: resolve('.'),
    base,
    variants: [1, 2, 3].map((n) => ({ name: `x${n}`, overrides: [`fleet.pools.0.count=${n}`], scenario: { ...base, fleet: pools(n) } })),
    notes: [],
  };
  return { setup, results: await runComparison(setup, { mode: 'fast', workers: 0 }) };
}
