import type { LengthPredictor, LengthRequest } from './types.ts';

export interface LengthAccuracy {
  /** Mean |predicted − true| output tokens. */
  mae: number;
  /** % of predictions within ±25 / ±50 / ±100 tokens (PreServe's Acc-k). */
  acc25: number;
  acc50: number;
  acc100: number;
  /** % of true lengths inside [P10, P90]. */
  coverage80: number;
  n: number;
}

/**
 * Time-ordered evaluation: the predictor observes the first `trainFraction` of the requests (in arrival
 * order), then each later request is predicted before it is observed (prequential: an online predictor
 * keeps learning, as it would in production). Only the later part is scored.
 */
export function evaluateLength(p: LengthPredictor, requests: readonly LengthRequest[], trainFraction = 0.5): LengthAccuracy {
  const cut = Math.floor(requests.length * trainFraction);
  for (let i = 0; i < cut; i++) p.observe(requests[i]!);
  let abs = 0;
  let a25 = 0;
  let a50 = 0;
  let a100 = 0;
  let inside = 0;
  const n = requests.length - cut;
  for (let i = cut; i < requests.length; i++) {
    const r = requests[i]!;
    const pred = p.predict(r);
    const e = Math.abs(pred.point - r.outputTokens);
    abs += e;
    if (e <= 25) a25++;
    if (e <= 50) a50++;
    if (e <= 100) a100++;
    if (r.outputTokens >= pred.p10 && r.outputTokens <= pred.p90) inside++;
    p.observe(r);
  }
  const pct = (k: number) => (n ? (100 * k) / n : 0);
  return { mae: n ? abs / n : 0, acc25: pct(a25), acc50: pct(a50), acc100: pct(a100), coverage80: pct(inside), n };
}
