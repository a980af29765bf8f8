import type { LengthPredictor, LengthRequest } from './types.ts';
import { clampTokens } from './types.ts';
import { SortedWindow } from './sorted-window.ts';

export interface KeyQuantilesOptions {
  /** Request fields that form the key; input length is added as a log2 bucket when `inputBuckets` is on. */
  fields: ('model' | 'app' | 'tier' | 'region')[];
  inputBuckets: boolean;
  /** Most recent outputs kept per key (a sliding window, so the quantiles follow drift). */
  window: number;
  /** Fewer observations than this under a key fall back to the coarser key, then to the global window. */
  minCount: number;
}

/**
 * Per-key historical quantiles: the median of recent outputs for requests with the same key (e.g. same
 * model and app and input length within a factor of 2) is the point, P10/P90 the interval. Before any
 * observation it predicts `prior` tokens (default 128).
 */
export function keyQuantilesLength(opts: Partial<KeyQuantilesOptions> = {}, prior = 128): LengthPredictor {
  const o: KeyQuantilesOptions = { fields: ['model', 'app', 'tier'], inputBuckets: true, window: 2000, minCount: 20, ...opts };
  const windows = new Map<string, SortedWindow>();
  const p0 = clampTokens(prior); // a prediction is always an integer in [1, MAX_OUTPUT_TOKENS], the prior too
  const keysOf = (r: LengthRequest): string[] => {
    const base = o.fields.map((f) => `${f}=${r[f] ?? '-'}`).join(',');
    const fine = o.inputBuckets ? `${base},in=${Math.floor(Math.log2(Math.max(1, r.inputTokens)))}` : base;
    return fine === base ? [base, '*'] : [fine, base, '*'];
  };
  return {
    name: 'key-quantiles',
    predict(r) {
      for (const k of keysOf(r)) {
        const w = windows.get(k);
        if (w && (w.size >= o.minCount || k === '*')) return quantiles(w);
      }
      return { point: p0, p10: p0, p50: p0, p90: p0 };
    },
    observe(r) {
      for (const k of keysOf(r)) {
        let w = windows.get(k);
        if (!w) windows.set(k, (w = new SortedWindow(o.window)));
        w.push(r.outputTokens);
      }
    },
  };
}

function quantiles(w: SortedWindow) {
  const q = (p: number) => w.quantile(p)!;
  const p50 = clampTokens(q(0.5));
  return { point: p50, p10: clampTokens(q(0.1)), p50, p90: clampTokens(q(0.9)) };
}
