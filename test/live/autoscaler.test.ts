import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { advisoryActuator } from '../../src/live/autoscaler/advisory.ts';
import { LiveAutoscaler } from '../../src/live/autoscaler/controller.ts';
import { autoscalerFromConfig } from '../../src/live/autoscaler/from-config.ts';
import { kubeActuator } from '../../src/live/autoscaler/kubernetes.ts';
import { processActuator } from '../../src/live/autoscaler/process.ts';
import type { GatewayHandle, ScaledPool } from '../../src/live/autoscaler/types.ts';
import { startEmulator } from '../../src/live/emulator/server.ts';
import { gatewayConfigSchema } from '../../src/live/gateway/config.ts';
import { startGateway } from '../../src/live/gateway/gateway.ts';
import { LiveFleet } from '../../src/live/gateway/live-fleet.ts';
import { createScaler } from '../../src/policy/scaling/registry.ts';
import { Rng } from '../../src/util/rng.ts';
import { MODEL, sleep } from './helpers.ts';

const POOL: ScaledPool = { name: 'main', model: MODEL, hardware: 'h100-80gb', tp: 1, minCount: 1, maxCount: 3 };

/** A gateway stand-in whose backends' KV usage the test sets by hand. */
function fakeGateway(n: number): GatewayHandle & { setKv(v: number): void } {
  const fleet = new LiveFleet();
  for (let i = 0; i < n; i++) fleet.add(`http://127.0.0.1:${9000 + i}`, MODEL, 'h100-80gb', 100).healthy = true;
  fleet.refresh(0);
  return {
    fleet,
    queuedFor: () => 0,
    takeArrivals: () => [{ model: MODEL, region: '', tier: 'standard', requests: 12, inputTokens: 1200, predictedOutputTokens: 600 }],
    addBackend: (model, url) => fleet.add(url, model, '', 100),
    drainBackend: async () => {},
    probe: async () => {},
    setKv(v) {
      for (const b of fleet.instances) b.scrapedKv = v;
    },
  };
}

describe('live autoscaler', { timeout: 40_000 }, () => {
  it('logs every decision with its inputs, and keeps cooldowns across a restart through the state file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmfleet-as-'));
    try {
      const gw = fakeGateway(1);
      gw.setKv(0.9);
      const mk = (t: { now: number }) =>
        new LiveAutoscaler({
          scaler: createScaler('reactive', {}, { rng: new Rng(1) }),
          limits: { upCooldownS: 60, downCooldownS: 120, maxStep: 1 },
          pools: [POOL],
          actuator: advisoryActuator(),
          gateway: gw,
          intervalS: 10,
          decisionLog: join(dir, 'decisions.jsonl'),
          stateFile: join(dir, 'state.json'),
          now: () => t.now,
        });
      const clock = { now: 1000 };
      const a = mk(clock);
      const r1 = await a.tick();
      assert.deepEqual(r1.governed, [{ kind: 'add', pool: 'main', count: 1, reason: 'governed' }]);
      assert.match(r1.results[0]!, /advisory: would add 1 to main/);
      // A new controller (a restart) reads the state: 30 s later the up-cooldown (60 s) still holds.
      clock.now = 1030;
      const b = mk(clock);
      const r2 = await b.tick();
      assert.equal(r2.proposed[0]!.kind, 'add');
      assert.deepEqual(r2.governed, [], 'the restored governor holds the add');
      assert.equal(r2.results.length, 0);
      clock.now = 1061;
      const r3 = await b.tick();
      assert.equal(r3.results.length, 1);
      const lines = readFileSync(join(dir, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: number; pools: { kvUtilization: number; ready: number }[]; arrivals: unknown[]; proposed: { reason: string }[]; actuator: string; scaler: string });
      assert.equal(lines.length, 3);
      assert.deepEqual(lines.map((l) => l.t), [1000, 1030, 1061]);
      assert.equal(lines[0]!.pools[0]!.kvUtilization, 0.9);
      assert.equal(lines[0]!.pools[0]!.ready, 1);
      assert.equal(lines[0]!.proposed[0]!.reason, 'kv-above-threshold');
      assert.equal(lines[0]!.arrivals.length, 1);
      assert.equal(lines[0]!.actuator, 'advisory');
      const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { lastUpS: Record<string, number>; lastActions: unknown[] };
      assert.equal(state.lastUpS.main, 1061);
      assert.equal(state.lastActions.length, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts only backends on their way as provisioning: a backend that went down is replaced up to minCount', async () => {
    const gw = fakeGateway(4);
    const [, down, starting, ejected] = gw.fleet.instances;
    for (const b of gw.fleet.instances) b.wasHealthy = true;
    down!.healthy = false; // was up, now fails its health checks (crashed, killed)
    starting!.healthy = starting!.wasHealthy = false; // never healthy yet: model loading
    ejected!.ejectedUntilS = 100; // healthy, out for an outlier ejection: back soon
    gw.fleet.refresh(0);
    assert.deepEqual(gw.fleet.instances.map((b) => b.state), ['ready', 'provisioning', 'provisioning', 'provisioning']);
    const as = new LiveAutoscaler({ scaler: createScaler('static', {}, { rng: new Rng(1) }), limits: { upCooldownS: 0, downCooldownS: 0, maxStep: 1 }, pools: [{ ...POOL, minCount: 4, maxCount: 6 }], actuator: advisoryActuator(), gateway: gw, intervalS: 1, now: () => 0 });
    const p = as.signals(0).pools[0]!;
    assert.deepEqual([p.ready, p.provisioning], [1, 2], 'the down backend is neither ready nor provisioning');
    const rec = await as.tick();
    assert.deepEqual(rec.governed.map((a) => [a.kind, a.kind === 'hold' ? 0 : a.count]), [['add', 1]], 'topped back up to minCount');
  });

  it("publishes each tick on the gateway's /metrics: current and desired replicas per pool, the policy's requests by reason", async () => {
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [] }] }));
    try {
      const as = new LiveAutoscaler({ scaler: createScaler('static', {}, { rng: new Rng(1) }), limits: { upCooldownS: 0, downCooldownS: 0, maxStep: 1 }, pools: [{ ...POOL, minCount: 2, maxCount: 3 }], actuator: advisoryActuator(), gateway: gw, intervalS: 1, now: () => 0 });
      await as.tick();
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(text, /^llmfleet_autoscaler_current_replicas\{pool="main"\} 0$/m);
      assert.match(text, /^llmfleet_autoscaler_desired_replicas\{pool="main"\} 2$/m, 'topped up to minCount (advisory: nothing started)');
      // A request the governor vetoed still counts as the policy's decision; desired stays at current.
      const pool = as.signals(1).pools[0]!;
      gw.recordScaling([pool], [{ kind: 'add', pool: 'main', count: 1, reason: 'kv-above-threshold' }], []);
      const after = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(after, /^llmfleet_autoscaler_decisions_total\{pool="main",action="add",reason="kv-above-threshold"\} 1$/m);
      assert.match(after, new RegExp(`^llmfleet_autoscaler_desired_replicas\\{pool="main"\\} ${pool.ready + pool.provisioning}$`, 'm'));
    } finally {
      await gw.close();
    }
  });

  it('the process actuator removes a started backend whose process was killed and starts a replacement', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmfleet-as-'));
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [] }], health: { intervalS: 0.2, timeoutS: 1, unhealthyAfter: 1, healthyAfter: 1 } }));
    const actuator = processActuator(gw, { command: [process.execPath, 'bin/llmfleet.js', 'emulate', '--model', '{model}', '--hardware', '{hardware}', '--port', '{port}', '--time-scale', '20'], healthTimeoutS: 30 });
    const stateFile = join(dir, 'state.json');
    const as = new LiveAutoscaler({
      scaler: createScaler('reactive', {}, { rng: new Rng(1) }),
      limits: { upCooldownS: 0, downCooldownS: 600, maxStep: 1 },
      pools: [{ ...POOL, minCount: 1, maxCount: 2 }],
      actuator,
      gateway: gw,
      intervalS: 1,
      stateFile,
      now: () => 0,
    });
    const pids = () => (JSON.parse(readFileSync(stateFile, 'utf8')) as { actuator: { pid: number }[] }).actuator.map((x) => x.pid);
    try {
      let rec = await as.tick();
      assert.match(rec.results[0] ?? '', /^started http/, JSON.stringify(rec));
      assert.equal(gw.fleet.ready(MODEL).length, 1);
      const [first] = pids();
      process.kill(first!, 'SIGKILL');
      for (let i = 0; i < 500; i++) {
        try {
          process.kill(first!, 0);
        } catch {
          break;
        }
        await sleep(10);
      }
      await gw.probe(); // the gateway sees it down
      rec = await as.tick();
      assert.match(rec.refreshed ?? '', new RegExp(`\\(pid ${first}\\) exited; removed`));
      assert.deepEqual([rec.pools[0]!.ready, rec.pools[0]!.provisioning], [0, 0]);
      assert.match(rec.results[0] ?? '', /^started http/, JSON.stringify(rec));
      assert.equal(gw.fleet.ready(MODEL).length, 1);
      assert.equal(pids().length, 1);
      assert.ok(!pids().includes(first!), 'the dead pid left the state file');
    } finally {
      await actuator.close();
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the process actuator adds an emulator under load and drains and stops it after', async () => {
    // Small KV (64 blocks × 16 tokens) so a few long requests push KV usage over the reactive 70 % threshold.
    const emu = await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 5, engine: { kvBlocks: 64 } });
    const gw = await startGateway(gatewayConfigSchema.parse({ port: 0, pools: [{ model: MODEL, backends: [emu.url] }], scrapeIntervalS: 0.1, health: { intervalS: 0.2, timeoutS: 1, unhealthyAfter: 1, healthyAfter: 1 } }));
    const actuator = processActuator(gw, { command: [process.execPath, 'bin/llmfleet.js', 'emulate', '--model', '{model}', '--hardware', '{hardware}', '--port', '{port}', '--time-scale', '20', '--kv-blocks', '64'], healthTimeoutS: 20 });
    const clock = { now: 0 };
    const as = new LiveAutoscaler({
      scaler: createScaler('reactive', {}, { rng: new Rng(1) }),
      limits: { upCooldownS: 0, downCooldownS: 0, maxStep: 1 },
      pools: [{ ...POOL, maxCount: 2 }],
      actuator,
      gateway: gw,
      intervalS: 1,
      now: () => clock.now,
    });
    try {
      const load = Array.from({ length: 3 }, () =>
        fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: new Array(250).fill(1), max_tokens: 100 }) }).then((r) => r.text()),
      );
      let rec;
      for (let i = 0; i < 50; i++) {
        await sleep(40);
        await gw.probe();
        if (gw.fleet.instances[0]!.kvUsedFraction > 0.7) break;
      }
      clock.now = 10;
      rec = await as.tick();
      assert.equal(rec.proposed[0]!.kind, 'add', JSON.stringify(rec));
      assert.match(rec.results[0]!, /^started http/);
      assert.equal(gw.fleet.ready(MODEL).length, 2);
      await Promise.all(load);
      await gw.probe();
      clock.now = 20;
      rec = await as.tick();
      assert.equal(rec.proposed[0]!.kind, 'remove', JSON.stringify(rec));
      assert.match(rec.results[0]!, /^drained and stopped/);
      assert.equal(gw.fleet.ready(MODEL).length, 1);
      assert.equal(gw.fleet.ready(MODEL)[0]!.url, emu.url, 'the static backend stays; the started one goes');
    } finally {
      await actuator.close();
      await gw.close();
      await emu.close();
    }
  });

  it('the Kubernetes actuator reads and patches the Deployment scale subresource as the apps/v1 API documents, and makes each serving pod a backend', async () => {
    // A loopback stand-in for the API server, checking requests against the documented contract:
    // GET/PATCH /apis/apps/v1/namespaces/{ns}/deployments/{name}/scale (autoscaling/v1 Scale),
    // PATCH with Content-Type application/merge-patch+json and body {"spec":{"replicas":N}};
    // GET /apis/apps/v1/namespaces/{ns}/deployments/{name} for status.readyReplicas and spec.selector;
    // GET /api/v1/namespaces/{ns}/pods?labelSelector=… (core/v1 PodList) for the pods behind it.
    let replicas = 2;
    const pod = (name: string, ip: string | undefined, ready: boolean, deleting = false) => ({
      metadata: { name, namespace: 'llm', ...(deleting ? { deletionTimestamp: '2026-11-27T00:00:00Z' } : {}) },
      status: { phase: ip ? 'Running' : 'Pending', ...(ip ? { podIP: ip } : {}), conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    });
    let pods = [pod('a', '10.0.0.5', true), pod('b', undefined, false), pod('c', '10.0.0.7', true, true), pod('d', 'fd00::9', false)];
    const selector = { matchLabels: { app: 'vllm-8b' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['gpu', 'spot'] }] };
    const seen: { method: string; url: string; type?: string; body: string }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, type: req.headers['content-type'], body });
        const scalePath = '/apis/apps/v1/namespaces/llm/deployments/vllm-8b/scale';
        const scale = () => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'vllm-8b', namespace: 'llm' }, spec: { replicas }, status: { replicas } });
        res.setHeader('content-type', 'application/json');
        if (req.url === scalePath && req.method === 'GET') return res.end(JSON.stringify(scale()));
        if (req.url === scalePath && req.method === 'PATCH') {
          replicas = (JSON.parse(body) as { spec: { replicas: number } }).spec.replicas;
          return res.end(JSON.stringify(scale()));
        }
        if (req.url === '/apis/apps/v1/namespaces/llm/deployments/vllm-8b' && req.method === 'GET') {
          return res.end(JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'vllm-8b', namespace: 'llm' }, spec: { replicas, selector }, status: { replicas, readyReplicas: 2 } }));
        }
        const u = new URL(req.url!, 'http://x');
        if (u.pathname === '/api/v1/namespaces/llm/pods' && u.searchParams.get('labelSelector') === 'app=vllm-8b,tier in (gpu,spot)' && req.method === 'GET') {
          return res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: pods }));
        }
        res.statusCode = 404;
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
        currentContext: 'c',
      });
      const gw = fakeGateway(0);
      const drained: number[] = [];
      gw.drainBackend = async (id) => {
        drained.push(id);
        gw.fleet.instances[id].removed = true;
      };
      const act = kubeActuator(gw, { namespace: 'llm', deployments: { main: 'vllm-8b' }, port: 8000, kubeConfig: kc });
      assert.equal(await act.add(POOL, 1), 'llm/vllm-8b: replicas 2 → 3');
      assert.equal(await act.refresh!([POOL]), 'llm/vllm-8b pods: +http://10.0.0.5:8000', 'only the Running, Ready pod that is not being deleted');
      assert.equal(act.pending(POOL), 1, '3 asked for, 2 ready');
      assert.deepEqual(gw.fleet.instances.map((b) => [b.url, b.model]), [['http://10.0.0.5:8000', MODEL]]);
      assert.equal(await act.refresh!([POOL]), undefined, 'nothing changed');
      pods = [pod('a', '10.0.0.5', true, true), pod('d', 'fd00::9', true)];
      assert.equal(await act.refresh!([POOL]), 'llm/vllm-8b pods: +http://[fd00::9]:8000 −http://10.0.0.5:8000');
      assert.deepEqual(drained, [0], 'the pod being deleted is drained');
      assert.deepEqual(gw.fleet.instances.filter((b) => !b.removed).map((b) => b.url), ['http://[fd00::9]:8000']);
      assert.equal(await act.remove(POOL, 2), 'llm/vllm-8b: replicas 3 → 1');
      const patches = seen.filter((s) => s.method === 'PATCH');
      assert.equal(patches.length, 2);
      for (const p of patches) {
        assert.equal(p.url, '/apis/apps/v1/namespaces/llm/deployments/vllm-8b/scale');
        assert.equal(p.type, 'application/merge-patch+json');
      }
      assert.deepEqual(patches.map((p) => JSON.parse(p.body)), [{ spec: { replicas: 3 } }, { spec: { replicas: 1 } }]);
      assert.ok(seen.every((s) => s.url.startsWith('/apis/apps/v1/namespaces/llm/deployments/vllm-8b') || s.url.startsWith('/api/v1/namespaces/llm/pods?')));
    } finally {
      server.close();
    }
  });

  it('refuses a Kubernetes actuator without a Deployment for an autoscaled pool at load, naming the field', () => {
    const cfg = gatewayConfigSchema.parse({
      pools: [{ model: MODEL }],
      autoscaler: { policy: 'reactive', pools: [{ model: MODEL, maxCount: 2 }], actuator: { kind: 'kubernetes', namespace: 'llm', deployments: { other: 'vllm-8b' } } },
    });
    assert.throws(() => autoscalerFromConfig(cfg, fakeGateway(0), () => 0), /autoscaler\.actuator\.deployments: expected a Deployment for autoscaler\.pools\[0\] \(key 'llama3\.1-8b'/);
  });
});
