import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimRequest } from '../../src/engine/request.ts';
import { latencyBlock, RequestLog } from '../../src/metrics/collector.ts';
import { dist } from '../../src/metrics/stats.ts';

test('latency block: distributions over completed requests, TPOT over multi-token outputs, every request in the attainment denominator', () => {
  const log = new RequestLog();
  // id: [arrival, output tokens, ttft, e2e] or 'drop' / 'open'; 2 500 requests so the index buffer grows.
  const ttfts: number[] = [], tpots: number[] = [], e2es: number[] = [];
  let ok = 0;
  const n = 2500;
  for (let id = 0; id < n; id++) {
    const out = id % 7 === 0 ? 1 : 1 + (id % 13);
    const r = new SimRequest({ id, arrivalS: id, inputTokens: 10, outputTokens: out }, 'm');
    log.arrive(r);
    if (id % 11 === 0) { log.drop(r, 'capacity'); continue; }
    if (id % 17 === 0) continue; // unfinished
    r.firstScheduledS = id; r.firstTokenS = id + 0.01 * (id % 50); r.finishS = r.firstTokenS + 0.02 * (out - 1) + 0.001 * (id % 3);
    log.finish(r);
    const ttft = r.firstTokenS - id, e2e = r.finishS - id; // as the log measures them
    ttfts.push(ttft); e2es.push(e2e);
    const tpot = out > 1 ? (e2e - ttft) / (out - 1) : 0;
    if (out > 1) tpots.push(tpot);
    if (ttft <= 0.3 && tpot <= 0.0205) ok++;
  }
  const b = latencyBlock(log, { ttftS: 0.3, tpotS: 0.0205 }, () => true);
  const dropped = Math.ceil(n / 11);
  assert.deepEqual(b.requests, { total: n, completed: ttfts.length, dropped, unfinished: n - ttfts.length - dropped });
  assert.deepEqual(b.ttft, dist(ttfts));
  assert.deepEqual(b.tpot, { count: tpots.length, ...dist(tpots) });
  assert.deepEqual(b.e2e, dist(e2es));
  assert.equal(b.slo.attainment, ok / n);
  // A filter keeps only its requests.
  const even = latencyBlock(log, { ttftS: 0.3, tpotS: 0.0205 }, (i) => i % 2 === 0);
  assert.equal(even.requests.total, n / 2);
});
