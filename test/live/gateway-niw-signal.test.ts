import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TIER_HEADER } from '../../src/live/gateway/gateway.ts';
import { MODEL, startFleet } from './helpers.ts';

const post = (url: string, tier: string) =>
  fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TIER_HEADER]: tier },
    body: JSON.stringify({ model: MODEL, prompt: 'hi', max_tokens: 2 }),
  });

describe('SageServe NIW queue manager in the live gateway', { timeout: 60_000 }, () => {
  it('releases a held NIW request at the periodic endpoint signal, as in simulation (niwReleaseTo: signalling)', async () => {
    const f = await startFleet(1, {}, {
      routing: { policy: 'sageserve', options: { niwSignalIntervalS: 0.3 } },
      tiers: { default: 'iw-f', priorities: { 'iw-f': 0, niw: 1 } },
      admission: { queueTimeoutS: 4 },
    });
    try {
      await new Promise((r) => setTimeout(r, 500));
      const t0 = performance.now();
      const r = await post(f.gw.url, 'niw');
      const waited = (performance.now() - t0) / 1000;
      assert.equal(r.status, 200, `NIW answered ${r.status} after ${waited.toFixed(2)} s: ${await r.text()}`);
      assert.ok(waited < 3, `released after ${waited.toFixed(2)} s`);
      assert.equal((await post(f.gw.url, 'iw-f')).status, 200);
    } finally {
      await f.close();
    }
  });

  it('releases a NIW request held while no backend was ready when one becomes ready (its endpoint signals)', async () => {
    // The periodic signal is an hour away: only the instance-ready signal can release it before the queue timeout.
    const f = await startFleet(1, { startupDelayS: 1 }, {
      routing: { policy: 'sageserve', options: { niwSignalIntervalS: 3600 } },
      tiers: { default: 'iw-f', priorities: { 'iw-f': 0, niw: 1 } },
      admission: { queueTimeoutS: 5 },
      health: { intervalS: 0.2, timeoutS: 0.5, unhealthyAfter: 1, healthyAfter: 1, startupGraceS: 30 },
    });
    try {
      const t0 = performance.now();
      const r = await post(f.gw.url, 'niw');
      const waited = (performance.now() - t0) / 1000;
      assert.equal(r.status, 200, `NIW answered ${r.status} after ${waited.toFixed(2)} s: ${await r.text()}`);
      assert.ok(waited < 4, `released after ${waited.toFixed(2)} s`);
    } finally {
      await f.close();
    }
  });
});
