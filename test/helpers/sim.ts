import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchShape, DecodeCoeffs, PerfModel } from '../../src/perf/types.ts';
import { scenarioSchema, type Scenario } from '../../src/scenario/schema.ts';
import { simulate, type SimResult } from '../../src/sim/simulator.ts';

/** Step times a test can compute by hand: prefill 1 ms + 0.01 ms/token, decode 5 ms + 0.1 ms/seq + 1 µs/context token. */
export const linearPerf: PerfModel = {
  name: 'linear-test',
  stepTimeS(b: BatchShape): number {
    return 0.001 + 1e-5 * b.prefillTokens + 1e-4 * b.decodeSeqs + 1e-6 * b.decodeContextTokens;
  },
  decodeStepCoeffs(k: number): DecodeCoeffs {
    return { baseS: 0.005 + 1e-4 * k, perContextTokenS: 1e-6 };
  },
};

export interface Req {
  t: number;
  in: number;
  out: number;
  tier?: string;
  deadline?: number;
}

/** Writes requests as a canonical CSV trace in a fresh temp folder and returns its path. */
export function writeTrace(reqs: readonly Req[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  const path = join(dir, 'trace.csv');
  const labelled = reqs.some((r) => r.tier !== undefined);
  const head = labelled ? 'arrival_s,input_tokens,output_tokens,tier,deadline_s\n' : 'arrival_s,input_tokens,output_tokens\n';
  const row = (r: Req) => (labelled ? `${r.t},${r.in},${r.out},${r.tier ?? ''},${r.deadline ?? ''}` : `${r.t},${r.in},${r.out}`);
  writeFileSync(path, head + reqs.map(row).join('\n') + '\n');
  return path;
}

/** A scenario over a trace file with the given raw overrides merged in (validated like a user's file). */
export function scenarioFor(tracePath: string, raw: Record<string, unknown> = {}): Scenario {
  const { fleet, engine, ...rest } = raw as { fleet?: Record<string, unknown>; engine?: Record<string, unknown> };
  return scenarioSchema.parse({
    name: 'test',
    workload: { trace: { path: tracePath, format: 'csv' } },
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }], ...fleet },
    engine: { ...engine },
    ...rest,
  });
}

export function run(sc: Scenario, mode: 'fast' | 'step', perf: PerfModel | undefined = linearPerf): SimResult {
  return simulate(sc, '.', { mode, perf });
}

/** Everything measured per request, as one comparable string per request. */
export function outcomes(res: SimResult): string[] {
  const l = res.log;
  const rows: string[] = [];
  for (let i = 0; i < l.n; i++) {
    rows.push([i, l.status[i], l.instance[i], l.queue[i], l.ttft[i], l.e2e[i], l.preemptions[i]].join(' '));
  }
  return rows;
}
