import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadScenario } from '../../src/scenario/load.ts';
import { simulate } from '../../src/sim/simulator.ts';

// Per-request TTFT and E2E of the real SplitwiseSim (commit 3780880) on two traces, recorded by
// bench/splitwisesim-compare.sh (fixtures/splitwisesim/README.md). The overload case exercises SplitwiseSim's
// starvation guard, its batch order and its rebuild trigger; without any of them most requests differ.
const DIR = 'test/engine/fixtures/splitwisesim';

function reference(name: string): Map<number, { ttft: number; e2e: number }> {
  const lines = readFileSync(`${DIR}/${name}.splitwisesim.csv`, 'utf8').trim().split('\n').slice(1);
  return new Map(lines.map((l) => {
    const [id, ttft, e2e] = l.split(',').map(Number) as [number, number, number];
    return [id, { ttft, e2e }];
  }));
}

for (const [name, servers] of [['moderate-40srv-20rps', 40], ['overload-4srv-40rps', 4]] as const) {
  test(`splitwise-baseline gives SplitwiseSim's own TTFT and E2E for every request: ${name}`, () => {
    const ref = reference(name);
    for (const mode of ['fast', 'step'] as const) {
      const { scenario, baseDir } = loadScenario({
        file: 'scenarios/splitwise-baseline.yaml',
        sets: [`fleet.pools.0.count=${servers}`],
        trace: { path: `${DIR}/${name}.trace.csv`, format: 'splitwise' },
      });
      const { log } = simulate(scenario, baseDir, { mode });
      assert.equal(log.n, ref.size);
      let worst = 0;
      for (const [id, want] of ref) {
        assert.ok(log.isDone(id), `request ${id} completed`);
        worst = Math.max(worst, Math.abs(log.ttft[id]! - want.ttft), Math.abs(log.e2e[id]! - want.e2e));
      }
      assert.ok(worst < 1e-6, `${mode}: largest difference ${worst} s`);
    }
  });
}
