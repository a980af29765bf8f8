import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { UserError } from '../../util/errors.ts';
import type { Actuator, GatewayHandle } from './types.ts';

export interface ProcessActuatorOptions {
  /** argv with placeholders {model} {hardware} {tp} {port} {host}; default: this CLI's `emulate`. */
  command?: string[];
  host?: string;
  /** Seconds to wait for a started backend's /health to answer 200. */
  healthTimeoutS?: number;
  /** Seconds to let a draining backend finish its requests before it is stopped anyway (default: the gateway's drainTimeoutS). */
  drainTimeoutS?: number;
}

interface Started {
  pool: string;
  url: string;
  pid: number;
  backendId: number;
  child: ChildProcess | null;
}

export const DEFAULT_COMMAND = [process.execPath, fileURLToPath(new URL('../../../bin/llmfleet.js', import.meta.url)), 'emulate', '--model', '{model}', '--hardware', '{hardware}', '--tp', '{tp}', '--host', '{host}', '--port', '{port}'];

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url: string, timeoutS: number, child: ChildProcess): Promise<boolean> {
  const pool = new Pool(url, { connections: 1 });
  const end = performance.now() + timeoutS * 1000;
  try {
    while (performance.now() < end && child.exitCode === null) {
      try {
        const r = await pool.request({ path: '/health', method: 'GET', headersTimeout: 1000, bodyTimeout: 1000 });
        await r.body.dump();
        if (r.statusCode === 200) return true;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  } finally {
    await pool.destroy();
  }
}

/**
 * Starts backends as local processes from a command template (the emulator by default), adds each to the
 * gateway once its /health answers 200; removes by draining the newest one it started in the gateway first,
 * then SIGTERM. Only processes it started are ever stopped.
 */
export function processActuator(gw: GatewayHandle, opts: ProcessActuatorOptions = {}): Actuator {
  const host = opts.host ?? '127.0.0.1';
  const command = opts.command ?? DEFAULT_COMMAND;
  if (command.length === 0) throw new UserError('process actuator: the command template is empty');
  const started: Started[] = [];
  const starting = new Map<string, number>();

  const stop = (s: Started) =>
    new Promise<void>((resolve) => {
      if (s.child && s.child.exitCode !== null) return resolve();
      const t = setTimeout(() => {
        try {
          process.kill(s.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        resolve();
      }, 5000);
      if (s.child) s.child.once('exit', () => (clearTimeout(t), resolve()));
      try {
        process.kill(s.pid, 'SIGTERM');
      } catch {
        clearTimeout(t);
        resolve();
      }
      if (!s.child) {
        clearTimeout(t);
        resolve();
      }
    });

  /** The process is gone (exited, killed): for a child, its exit status; for an adopted one, signal 0 finding no such pid. */
  const exited = (s: Started): boolean => {
    if (s.child) return s.child.exitCode !== null || s.child.signalCode !== null;
    try {
      process.kill(s.pid, 0);
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ESRCH';
    }
  };

  return {
    kind: 'process',
    pending: (pool) => starting.get(pool.name) ?? 0,
    async refresh() {
      // A started backend whose process has exited leaves the gateway and the state file: it is not capacity,
      // and the pool is topped back up (the governor's minCount, or the scaler) on this very tick.
      const gone = started.filter(exited);
      if (gone.length === 0) return;
      for (const s of gone) started.splice(started.indexOf(s), 1);
      await Promise.all(gone.map((s) => gw.drainBackend(s.backendId, 0)));
      return gone.map((s) => `${s.url} (pid ${s.pid}) exited; removed`).join('; ');
    },
    async add(pool, count) {
      const notes: string[] = [];
      starting.set(pool.name, (starting.get(pool.name) ?? 0) + count);
      try {
        await Promise.all(
          Array.from({ length: count }, async () => {
            const port = await freePort(host);
            const argv = command.map((a) => a.replaceAll('{model}', pool.model).replaceAll('{hardware}', pool.hardware).replaceAll('{tp}', String(pool.tp)).replaceAll('{port}', String(port)).replaceAll('{host}', host));
            const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
            const url = `http://${host}:${port}`;
            const ok = await waitHealthy(url, opts.healthTimeoutS ?? 120, child);
            if (!ok) {
              child.kill('SIGKILL');
              notes.push(`start failed: ${url} not healthy`);
              return;
            }
            const b = gw.addBackend(pool.model, url);
            started.push({ pool: pool.name, url, pid: child.pid!, backendId: b.id, child });
            notes.push(`started ${url} (pid ${child.pid})`);
          }),
        );
        await gw.probe();
      } finally {
        starting.set(pool.name, (starting.get(pool.name) ?? 0) - count);
      }
      return notes.join('; ');
    },
    async remove(pool, count) {
      const mine = started.filter((s) => s.pool === pool.name).slice(-count).reverse();
      if (mine.length === 0) return `nothing to remove: no process of ${pool.name} was started by this actuator`;
      await Promise.all(
        mine.map(async (s) => {
          await gw.drainBackend(s.backendId, opts.drainTimeoutS);
          await stop(s);
          started.splice(started.indexOf(s), 1);
        }),
      );
      return `drained and stopped ${mine.map((s) => s.url).join(', ')}`;
    },
    snapshot: () => started.map(({ pool, url, pid }) => ({ pool, url, pid })),
    async restore(state) {
      // Processes started before a restart: adopted again if still alive and healthy.
      if (!Array.isArray(state)) return;
      for (const s of state as { pool: string; url: string; pid: number }[]) {
        try {
          process.kill(s.pid, 0);
        } catch {
          continue;
        }
        const b = gw.addBackend(s.pool, s.url);
        started.push({ ...s, backendId: b.id, child: null });
      }
      await gw.probe();
    },
    async close() {
      await Promise.all(started.splice(0).map(stop));
    },
  };
}
