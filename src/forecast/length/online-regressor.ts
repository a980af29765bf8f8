import { getEncoding, type Tiktoken } from 'js-tiktoken';
import { hash32 } from '../../util/rng.ts';
import { SortedWindow } from './sorted-window.ts';
import { clampTokens, type LengthPredictor, type LengthRequest } from './types.ts';

/** Task words that move output length (PreServe digest §9 (b)); each is one indicator feature. */
const KEYWORDS = ['translate', 'summar', 'code', 'write', 'list', 'explain', 'essay', 'story', 'short', 'brief', 'detail', 'step', 'yes', 'one word'];
const HASH_SLOTS = 16;
const TEXT_SLOTS = 16;
/** One indicator per power-of-two input length: output length is far from monotone in input length on Azure conv. */
const INPUT_BUCKETS = 16;

let encoder: Tiktoken | undefined;

/**
 * Online ridge regression on log1p(output tokens), updated per completed request by recursive least
 * squares (exact ridge solution on everything seen so far, O(d²) per update with d ≈ 50 features).
 * Features: log1p(input), its square and its power-of-two bucket; hashed model/app/tier indicators; with prompt text, the
 * cl100k token count (js-tiktoken), task keywords and hashed token unigrams. The point is
 * expm1(prediction + median recent residual), a median estimate (MAE-optimal), and P10/P90 come from the
 * last 2,000 residuals in log space.
 */
export function onlineRegressorLength(opts: { ridge?: number; residualWindow?: number } = {}): LengthPredictor {
  const ridge = opts.ridge ?? 1;
  const residualWindow = opts.residualWindow ?? 2000;
  const d = 3 + INPUT_BUCKETS + HASH_SLOTS + 2 + KEYWORDS.length + TEXT_SLOTS;
  const w = new Float64Array(d);
  // P = (XᵀX + ridge·I)⁻¹, started at I/ridge.
  const P = new Float64Array(d * d);
  for (let i = 0; i < d; i++) P[i * d + i] = 1 / ridge;
  const residuals = new SortedWindow(residualWindow);
  const px = new Float64Array(d);

  const features = (r: LengthRequest): Float64Array => {
    const x = new Float64Array(d);
    const li = Math.log1p(r.inputTokens);
    x[0] = 1;
    x[1] = li;
    x[2] = (li * li) / 10;
    x[3 + Math.min(INPUT_BUCKETS - 1, Math.floor(Math.log2(Math.max(1, r.inputTokens))))] = 1;
    const hb = 3 + INPUT_BUCKETS;
    for (const [f, v] of [['model', r.model], ['app', r.app], ['tier', r.tier]] as const) {
      if (v !== undefined) x[hb + (((hash32(`${f}=${v}`) % HASH_SLOTS) + HASH_SLOTS) % HASH_SLOTS)] = 1;
    }
    const base = hb + HASH_SLOTS;
    if (r.promptText) {
      encoder ??= getEncoding('cl100k_base');
      const toks = encoder.encode(r.promptText);
      x[base] = 1;
      x[base + 1] = Math.log1p(toks.length);
      const lower = r.promptText.toLowerCase();
      KEYWORDS.forEach((k, i) => {
        if (lower.includes(k)) x[base + 2 + i] = 1;
      });
      const tb = base + 2 + KEYWORDS.length;
      for (const t of toks) x[tb + (t % TEXT_SLOTS)] += 1 / toks.length;
    }
    return x;
  };
  const dot = (x: Float64Array) => {
    let s = 0;
    for (let i = 0; i < d; i++) s += w[i]! * x[i]!;
    return s;
  };
  return {
    name: 'online-regressor',
    predict(r) {
      const yHat = dot(features(r));
      if (residuals.size === 0) {
        const v = clampTokens(Math.expm1(yHat) || 128);
        return { point: v, p10: v, p50: v, p90: v };
      }
      const q = (p: number) => residuals.quantile(p)!;
      const p50 = clampTokens(Math.expm1(yHat + q(0.5)));
      return { point: p50, p10: clampTokens(Math.expm1(yHat + q(0.1))), p50, p90: clampTokens(Math.expm1(yHat + q(0.9))) };
    },
    observe(r) {
      const x = features(r);
      const y = Math.log1p(r.outputTokens);
      const e = y - dot(x);
      residuals.push(e);
      // RLS: k = Px / (1 + xᵀPx); w += k·e; P -= k·(Px)ᵀ
      let denom = 1;
      for (let i = 0; i < d; i++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += P[i * d + j]! * x[j]!;
        px[i] = s;
        denom += x[i]! * s;
      }
      for (let i = 0; i < d; i++) w[i] += (px[i]! / denom) * e;
      for (let i = 0; i < d; i++) {
        const ki = px[i]! / denom;
        for (let j = 0; j < d; j++) P[i * d + j] -= ki * px[j]!;
      }
    },
  };
}
