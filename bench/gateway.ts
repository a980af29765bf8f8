// Gateway overhead: latency the gateway adds in front of a trivial backend, and its max throughput, each as a
// ratio against calling the backend directly in the same run.
//
//   node --import tsx bench/gateway.ts [--rate 2000] [--seconds 10] [--trials 5] [--concurrency 64] [--no-pin] [--low-latency]
//
// The fake backend and the proxies run as child processes, the load generator here. Pinned (the default when
// taskset works; --no-pin turns it off): backend and generator on cpu 0, the proxy under test alone on cpu 1; the
// generator moves to both cpus for the throughput phase. Latency is open loop at --rate req/s, measured from each
// request's intended send time (corrected for coordinated omission, like wrk2). Max
// throughput is closed loop with --concurrency requests in flight; a sequential phase (one request in flight)
// gives the added latency without queueing. Non-streaming requests, ~250-byte bodies.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { percentile } from '../src/metrics/stats.ts';
import { bundleEntry } from '../src/util/bundle.ts';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : (process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
};
const role = arg('role', 'main');

const REPLY = JSON.stringify({
  id: 'cmpl-0',
  object: 'text_completion',
  created: 0,
  model: 'fake',
  choices: [{ index: 0, text: ' the model says hello', logprobs: null, finish_reason: 'length' }],
  usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
});
const BODY = JSON.stringify({ model: 'fake', prompt: 'Say hello to the benchmark, please.', max_tokens: 4 });

async function runBackend(): Promise<void> {
  const server = createServer((req, res) => {
    if (req.url === '/health' || req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(req.url === '/metrics' ? 'vllm:num_requests_running{model_name="fake"} 0\n' : '');
      return;
    }
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) }).end(REPLY));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`));
}

/** The reference proxy: node:http in, one undici Pool out, bodies streamed, nothing else (no routing, no metrics). */
async function runBare(backend: string): Promise<void> {
  const pool = new Pool(backend, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const server = createServer((req, res) => {
    pool
      .request({ path: req.url ?? '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: req })
      .then(({ statusCode, headers, body }) => {
        res.writeHead(statusCode, { 'content-type': String(headers['content-type'] ?? 'application/json') });
        body.pipe(res);
      })
      .catch(() => res.writeHead(502).end());
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => process.exit(0));
}

async function runGateway(backend: string): Promise<void> {
  const { gatewayConfigSchema } = await import('../src/live/gateway/config.ts');
  const { startGateway } = await import('../src/live/gateway/gateway.ts');
  const gw = await startGateway(
    gatewayConfigSchema.parse({
      port: 0,
      pools: [{ model: 'fake', backends: [backend], maxInflightPerBackend: 100_000, connections: 256 }],
      admission: { maxQueue: 100_000 },
      routing: { policy: 'round-robin' },
    }),
  );
  process.stdout.write(`PORT ${gw.port}\n`);
  process.once('SIGTERM', () => process.exit(0)); // lets --cpu-prof write its profile
}

function child(args: string[], cpu: number | null): Promise<{ proc: ChildProcess; port: number }> {
  const prof = args.includes('gateway') && process.argv.includes('--cpu-prof') ? ['--cpu-prof', '--cpu-prof-dir=bench-profiles'] : [];
  const script = bundled ? [process.argv[1]!] : ['--import', 'tsx', 'bench/gateway.ts'];
  const base = [process.execPath, ...prof, ...script, ...args];
  const cmd = cpu === null ? base : ['taskset', '-c', String(cpu), ...base];
  const proc = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ proc, port: Number(m[1]) });
    });
    proc.once('exit', (code) => reject(new Error(`child ${args.join(' ')} exited ${code}`)));
  });
}

/** CPU seconds (user + system) a process has used, from /proc (clock ticks at 100 Hz). */
function cpuS(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Open loop: request i is due at t0 + i/rate; latency counts from when it was due. */
async function openLoop(url: string, rate: number, seconds: number): Promise<{ p50: number; p99: number; errors: number; achieved: number }> {
  const pool = new Pool(url, { connections: 512, pipelining: 1 });
  const total = Math.round(rate * seconds);
  const lat = new Float64Array(total);
  let done = 0;
  let errors = 0;
  const t0 = performance.now() + 50;
  await new Promise<void>((resolve) => {
    let sent = 0;
    const tick = () => {
      const now = performance.now();
      while (sent < total && t0 + (sent * 1000) / rate <= now) {
        const due = t0 + (sent * 1000) / rate;
        const i = sent++;
        pool
          .request({ path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY })
          .then(async (r) => {
            await r.body.dump();
            if (r.statusCode !== 200) errors++;
          })
          .catch(() => errors++)
          .finally(() => {
            lat[i] = performance.now() - due;
            if (++done === total) resolve();
          });
      }
      // Sleep until the next send is due rather than spin: a spinning generator would take a core from the
      // processes it measures. Timer lateness counts in the latency (it is measured from the due time).
      if (sent < total) setTimeout(tick, Math.max(0, t0 + (sent * 1000) / rate - performance.now() - 1));
    };
    tick();
  });
  const wall = (performance.now() - t0) / 1000;
  await pool.close();
  lat.sort();
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), errors, achieved: total / wall };
}

/** One request at a time, `n` times: latency without any queueing (the floor of what the gateway adds). */
async function sequential(url: string, n: number): Promise<{ p50: number; p99: number }> {
  const pool = new Pool(url, { connections: 1 });
  const lat = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await pool.request({ path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
    await r.body.dump();
    lat[i] = performance.now() - t;
  }
  await pool.close();
  lat.sort();
  return { p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/** Closed loop: `concurrency` requests always in flight for `seconds`; completions per second. */
async function closedLoop(url: string, concurrency: number, seconds: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const r = await pool.request({ path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
      await r.body.dump();
      n++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const rps = n / ((performance.now() - t0) / 1000);
  await pool.close();
  return rps;
}

const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 50);

/** Moves this process (the load generator) to `cpus` ('0', '0,1', …) when pinning is on. */
function pinSelf(pin: boolean, cpus: string): void {
  if (pin) spawnSync('taskset', ['-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
}

const bundled = process.argv[1]!.endsWith('.mjs');

/**
 * `--low-latency`: holds /dev/cpu_dma_latency at 0 µs for the run (the kernel's PM-QoS interface, what tuned's
 * latency-performance profile sets), so idle cpus poll instead of halting (a halted vCPU of a VM takes host
 * scheduling to wake). Measured here: it mattered while the processes ran through tsx (gateway's added p50
 * +0.25 → +0.02 ms), not since they run bundled and pinned (docs/LIVE.md).
 */
function holdLowLatency(): string {
  try {
    const fd = openSync('/dev/cpu_dma_latency', 'w');
    const b = Buffer.alloc(4);
    b.writeInt32LE(0);
    writeSync(fd, b); // the request holds while the file stays open, i.e. until this process exits
    return 'cpu_dma_latency held at 0 (idle cpus poll)';
  } catch (e) {
    return `--low-latency unavailable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); idle cpus may halt`;
  }
}

async function main(): Promise<void> {
  if (!bundled) {
    // Every measured process (this load generator included) runs as plain node from one esbuild bundle: through
    // tsx, each would carry tsx's hooks thread, whose garbage collections land on the pinned core seconds after
    // start (5–14 ms pauses, seen with --trace-gc) — a start-up artefact, not the gateway's steady state.
    let url: string | null = null;
    try {
      url = await bundleEntry('bench-gateway', { file: fileURLToPath(import.meta.url) });
    } catch {
      console.log('(esbuild bundle unavailable: processes run through tsx)');
    }
    if (url) {
      const r = spawnSync(process.execPath, [fileURLToPath(url), ...process.argv.slice(2)], { stdio: 'inherit' });
      process.exit(r.status ?? 1);
    }
  }
  const lowLatency = process.argv.includes('--low-latency') ? holdLowLatency() : 'idle cpus as configured (see --low-latency)';
  const rate = Number(arg('rate', '2000'));
  const seconds = Number(arg('seconds', '10'));
  const trials = Number(arg('trials', '5'));
  const concurrency = Number(arg('concurrency', '64'));
  const pin = !process.argv.includes('--no-pin') && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const backend = await child(['--role', 'backend'], pin ? 0 : null);
  const gateway = await child(['--role', 'gateway', '--backend', `http://127.0.0.1:${backend.port}`], pin ? 1 : null);
  const bare = await child(['--role', 'bare', '--backend', `http://127.0.0.1:${backend.port}`], pin ? 1 : null);
  try {
    const direct = `http://127.0.0.1:${backend.port}`;
    const via = `http://127.0.0.1:${gateway.port}`;
    const ref = `http://127.0.0.1:${bare.port}`;
    const load0 = loadavg()[0]!;
    // Latency phases, pinned: the generator shares cpu 0 with the backend, so the proxy under test has cpu 1 to
    // itself (as a gateway would be deployed) and the direct path pays no cross-core hop (conservative).
    pinSelf(pin, '0');
    // Warm-up at the full rate on every path (JIT, connection pools, V8 heap sizes).
    for (const u of [direct, via, ref]) await openLoop(u, rate, 2);
    for (const u of [direct, via]) await sequential(u, 2000);
    const dSeq = await sequential(direct, 5000);
    const gSeq = await sequential(via, 5000);
    // Interleaved trials, so a burst of outside load on the shared machine hits one trial of each path, not all
    // trials of one path; the overhead reported is the median over trials.
    type Latency = Awaited<ReturnType<typeof openLoop>>;
    const rows: { d: Latency; g: Latency; b: Latency; gCpuUs: number }[] = [];
    for (let t = 0; t < trials; t++) {
      const d = await openLoop(direct, rate, seconds);
      const gCpu0 = cpuS(gateway.proc.pid!);
      const g = await openLoop(via, rate, seconds);
      const gCpuUs = ((cpuS(gateway.proc.pid!) - gCpu0) / (rate * seconds)) * 1e6;
      const b = await openLoop(ref, rate, seconds);
      rows.push({ d, g, b, gCpuUs });
    }
    // Throughput: the generator may use both cpus (closed loop needs more client CPU than one shared core has).
    pinSelf(pin, '0,1');
    const dMax = await closedLoop(direct, concurrency, seconds);
    const gMax = await closedLoop(via, concurrency, seconds);
    const bMax = await closedLoop(ref, concurrency, seconds);
    const f = (x: number) => x.toFixed(3);
    const sign = (x: number) => (x >= 0 ? '+' : '') + f(x);
    console.log(`gateway overhead: open loop ${rate} req/s, ${trials} interleaved trials × ${seconds} s (non-streaming), closed loop ${concurrency} in flight; cpus ${pin ? 'pinned (backend + generator 0, proxy 1; generator on both for max req/s)' : 'not pinned'}; ${lowLatency}; processes ${bundled ? 'plain node from an esbuild bundle' : 'through tsx'}; load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}; ${new Date().toISOString()}`);
    console.log('| trial | direct p50 / p99 ms | gateway p50 / p99 ms | bare proxy p50 / p99 ms | gateway − direct p50 / p99 ms | bare − direct p50 / p99 ms | errors | gateway CPU µs/req |');
    console.log('|---|---|---|---|---|---|---|---|');
    rows.forEach(({ d, g, b, gCpuUs }, i) =>
      console.log(`| ${i + 1} | ${f(d.p50)} / ${f(d.p99)} | ${f(g.p50)} / ${f(g.p99)} | ${f(b.p50)} / ${f(b.p99)} | ${sign(g.p50 - d.p50)} / ${sign(g.p99 - d.p99)} | ${sign(b.p50 - d.p50)} / ${sign(b.p99 - d.p99)} | ${d.errors + g.errors + b.errors} | ${gCpuUs.toFixed(0)} |`),
    );
    const med = (k: 'p50' | 'p99', via: 'g' | 'b') => median(rows.map((r) => r[via][k] - r.d[k]));
    console.log(`median over trials: gateway adds p50 ${sign(med('p50', 'g'))} / p99 ${sign(med('p99', 'g'))} ms; bare proxy adds p50 ${sign(med('p50', 'b'))} / p99 ${sign(med('p99', 'b'))} ms; achieved ${median(rows.map((r) => r.g.achieved)).toFixed(0)} req/s via the gateway`);
    console.log(`one request at a time (5,000 each, after warm-up): direct p50 ${f(dSeq.p50)} / p99 ${f(dSeq.p99)} ms, gateway p50 ${f(gSeq.p50)} / p99 ${f(gSeq.p99)} ms, added p50 ${sign(gSeq.p50 - dSeq.p50)} / p99 ${sign(gSeq.p99 - dSeq.p99)} ms`);
    console.log(`max throughput (closed loop): direct ${dMax.toFixed(0)}, gateway ${gMax.toFixed(0)} (×${(gMax / dMax).toFixed(2)}), bare proxy ${bMax.toFixed(0)} req/s`);
  } finally {
    await new Promise((r) => {
      gateway.proc.once('exit', r);
      gateway.proc.kill('SIGTERM');
    });
    bare.proc.kill('SIGKILL');
    backend.proc.kill('SIGKILL');
  }
}

if (role === 'backend') await runBackend();
else if (role === 'gateway') await runGateway(arg('backend', ''));
else if (role === 'bare') await runBare(arg('backend', ''));
else await main();
