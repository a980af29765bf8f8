import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { dist } from '../../src/metrics/stats.ts';
import { replayTrace } from '../../src/live/replay.ts';
import { scenarioSchema } from '../../src/scenario/schema.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { MODEL, startFleet } from './helpers.ts';

const TIME_SCALE = 10;
/**
 * Two tolerances per latency percentile (p50, p90), in modelled seconds:
 * - engine side (what the emulators' engines recorded): TTFT within 10% + 20 ms; E2E within 10% + 20 ms + the
 *   p90 lateness of arrivals at the emulators (modelled). Only arrival times carry wall-clock noise there: a request reaching an emulator d late
 *   joins a later batch and can finish up to about d later. Lateness is measured per emulator against the trace
 *   (requests matched by their unique (input, output) lengths; the emulator's clock offset is the minimum gap).
 * - client side (measured by the load generator): 10% + time scale × (3 ms + the p99 event-loop delay seen
 *   during the run) + the arrival lateness p90 above: the way in and the way out. At 10× on an idle machine that
 *   is 10% + ~50 ms; a starved process (shared 2-core CI box) widens it by exactly the lateness it measured, and
 *   both are reported beside the check.
 */

describe('sim/live parity', { timeout: 30_000 }, () => {
  it('the same trace through the simulator and through gateway + emulators gives the same per-backend counts and close TTFT/E2E percentiles', async () => {
    const sc = scenarioSchema.parse({
      seed: 7,
      workload: {
        synthetic: {
          durationS: 30,
          maxRequests: 40,
          arrivals: { kind: 'poisson', ratePerS: 1.5 },
          lengths: { kind: 'lognormal', input: { mu: Math.log(300), sigma: 0.6, min: 16, max: 2000 }, output: { mu: Math.log(60), sigma: 0.5, min: 8, max: 200 } },
        },
      },
      fleet: { pools: [{ model: MODEL, hardware: 'h100-80gb', count: 2 }] },
      routing: { policy: 'round-robin' },
    });
    const res = simulate(sc, '.', { mode: 'step' });
    const log = res.log;
    const reqs = Array.from({ length: log.n }, (_, i) => ({ arrivalS: log.arrival[i]!, inputTokens: log.input[i]!, outputTokens: log.output[i]! }));
    assert.ok(reqs.length >= 30);
    const simCounts = [0, 0];
    for (let i = 0; i < log.n; i++) simCounts[log.instance[i]!]!++;

    const f = await startFleet(2, { timeScale: TIME_SCALE }, { routing: { policy: 'round-robin', options: {} } });
    try {
      // Warm-up (JIT, TCP connections): an even number of requests, so the round-robin cursor is back at 0.
      await replayTrace(f.gw.url, MODEL, Array.from({ length: 16 }, () => ({ arrivalS: 0, inputTokens: 100, outputTokens: 20 })), TIME_SCALE);
      const lag = monitorEventLoopDelay({ resolution: 5 });
      lag.enable();
      const live = await replayTrace(f.gw.url, MODEL, reqs, TIME_SCALE);
      lag.disable();
      const lagP99S = lag.percentile(99) / 1e9;

      assert.ok(live.every((r) => r.status === 200));
      live.forEach((r, i) => assert.equal(r.outputTokens, reqs[i]!.outputTokens));
      const liveCounts = f.emus.map((e) => live.filter((r) => r.backend === e.url).length);
      assert.deepEqual(liveCounts, simCounts);

      const done = f.emus.flatMap((e) => e.backend.finished.slice(16 / 2)); // past the warm-up
      assert.equal(done.length, reqs.length);
      const traceAt = new Map<string, number[]>();
      for (const r of reqs) traceAt.set(`${r.inputTokens}/${r.outputTokens}`, [...(traceAt.get(`${r.inputTokens}/${r.outputTokens}`) ?? []), r.arrivalS]);
      const lateness: number[] = [];
      for (const e of f.emus) {
        const gaps = e.backend.finished
          .slice(16 / 2)
          .map((d) => ({ d, at: traceAt.get(`${d.inputTokens}/${d.outputTokens}`) }))
          .filter((x) => x.at?.length === 1)
          .map((x) => x.d.arrivalS - x.at![0]!);
        const offset = Math.min(...gaps);
        for (const g of gaps) lateness.push(g - offset);
      }
      const lateP90S = dist(lateness).p90;
      const engineTol = (simS: number, metric: string) => 0.1 * simS + 0.02 + (metric === 'e2e' ? lateP90S : 0);
      // Client-side = engine latency + the way in (arrival lateness) + the way out (event-loop delay).
      const clientTol = (simS: number) => 0.1 * simS + TIME_SCALE * (0.003 + lagP99S) + lateP90S;
      const sets = {
        ttft: { sim: dist(Array.from(log.ttft.subarray(0, log.n))), engine: dist(done.map((d) => d.firstTokenS - d.arrivalS)), client: dist(live.map((r) => r.ttftS)) },
        e2e: { sim: dist(Array.from(log.e2e.subarray(0, log.n))), engine: dist(done.map((d) => d.finishS - d.arrivalS)), client: dist(live.map((r) => r.e2eS)) },
      };
      const rows = [`event-loop delay p99 during the run: ${(lagP99S * 1000).toFixed(1)} ms wall; arrival lateness at the emulators p90 ${(lateP90S * 1000).toFixed(0)} ms modelled (${lateness.length} matched)`];
      for (const [name, d] of Object.entries(sets)) {
        for (const p of ['p50', 'p90'] as const) {
          rows.push(`${name} ${p}: sim ${d.sim[p].toFixed(3)} s, engine ${d.engine[p].toFixed(3)} s (±${engineTol(d.sim[p], name).toFixed(3)}), client ${d.client[p].toFixed(3)} s (±${clientTol(d.sim[p]).toFixed(3)})`);
        }
      }
      const report = rows.join('\n');
      for (const [name, d] of Object.entries(sets)) {
        for (const p of ['p50', 'p90'] as const) {
          assert.ok(Math.abs(d.engine[p] - d.sim[p]) <= engineTol(d.sim[p], name), report);
          assert.ok(Math.abs(d.client[p] - d.sim[p]) <= clientTol(d.sim[p]), report);
        }
      }
      if (process.env.LLMFLEET_PARITY_REPORT) process.stderr.write(`${report}\n`);
    } finally {
      await f.close();
    }
  });
});
