import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../../util/errors.ts';
import { prepareOutDir } from '../../util/folders.ts';

/**
 * Hourly forecast peaks by content, so a run that fits ARIMA on a history some earlier run already fitted
 * (another scaling strategy, scheduler or router on the same workload and seed: the planner's IW history
 * depends only on the arrivals) reads the peak instead of refitting. One fit costs 10–200 ms of CPU
 * (ARIMA(3,1,2) by conditional sum of squares on up to 1,440 points) and a week needs 2,016 of them, while
 * the rest of the 0.02 × week simulation costs ≈ 13 s (docs/fidelity/sageserve.md, "One-week run").
 *
 * The key is SHA-256 over everything the peak depends on: FORMAT, the `arima` package version, the order, the
 * peak window and horizon, and the history's exact float64 bytes; the value is the peak exactly as computed
 * (JSON round-trips doubles); the planner stores only successful fits (null, "the fit failed", is readable but
 * not written by it), so a failure is retried. A cached run makes the same decisions as an uncached one. Bump
 * FORMAT when the fit or peak code changes.
 *
 * Storage: `<dir>/sageserve-peaks.jsonl`, one `{"k":…,"v":…}` per line, appended as fits happen and read once
 * per process. A line that does not parse (e.g. cut short by a killed run) is ignored: a miss only costs a fit.
 */
export const FORMAT = 1;

export interface PeakKey {
  order: readonly [number, number, number];
  window: readonly [number, number];
  horizon: number;
  history: readonly number[];
}

const FILE = 'sageserve-peaks.jsonl';
const stores = new Map<string, Map<string, number | null>>();
let pkgVersion: string | undefined;

function arimaVersion(): string {
  if (pkgVersion === undefined) {
    const req = createRequire(import.meta.url);
    const main = req.resolve('arima');
    const pkg = JSON.parse(readFileSync(join(dirname(main), 'package.json'), 'utf8')) as { version?: string };
    pkgVersion = pkg.version ?? 'unknown';
  }
  return pkgVersion;
}

export function peakKey(k: PeakKey): string {
  const h = createHash('sha256');
  h.update(`${FORMAT}|${arimaVersion()}|${k.order.join(',')}|${k.window.join(',')}|${k.horizon}|`);
  h.update(new Uint8Array(Float64Array.from(k.history).buffer));
  return h.digest('hex');
}

/** A directory-backed cache of forecast peaks; instances on the same directory share one in-memory table. */
export class PeakCache {
  readonly file: string;
  private readonly table: Map<string, number | null>;
  hits = 0;
  misses = 0;

  constructor(dir: string) {
    const abs = resolve(dir);
    this.file = join(abs, FILE);
    let t = stores.get(abs);
    if (!t) {
      t = new Map();
      prepareOutDir('scaling.options.forecastCacheDir', abs);
      let text = '';
      try {
        text = readFileSync(this.file, 'utf8');
      } catch {
        // no cache file yet
      }
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          const e = JSON.parse(line) as { k?: unknown; v?: unknown };
          if (typeof e.k === 'string' && (e.v === null || (typeof e.v === 'number' && Number.isFinite(e.v)))) t.set(e.k, e.v);
        } catch {
          // a torn line: ignored, the entry is refitted
        }
      }
      stores.set(abs, t);
    }
    this.table = t;
  }

  /** The cached peak (null = the fit failed), or undefined on a miss. */
  get(key: string): number | null | undefined {
    const v = this.table.get(key);
    if (v === undefined) this.misses++;
    else this.hits++;
    return v;
  }

  set(key: string, value: number | null): void {
    if (this.table.has(key)) return;
    this.table.set(key, value);
    try {
      appendFileSync(this.file, `${JSON.stringify({ k: key, v: value })}\n`);
    } catch (e) {
      throw new UserError(`scaling.options.forecastCacheDir: cannot write ${this.file} (${e instanceof Error ? e.message : String(e)})`);
    }
  }
}
