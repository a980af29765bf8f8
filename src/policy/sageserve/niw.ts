/**
 * SageServe's NIW queue manager release rule (§6.1–6.2, digest §3.4): an endpoint signalling utilisation u
 * may take NIW requests from the held queue.
 * - paper: u < 0.50 ⇒ 2 requests, u < 0.60 ⇒ 1, else 0;
 * - code (`niwRelease: code`, the released repository, counts inverted): u ≤ 0.50 ⇒ 1, 0.50 < u ≤ 0.60 ⇒ 2.
 * Thresholds are options (`niwOneBelow`, `niwTwoBelow`).
 */
export type NiwReleaseRule = 'paper' | 'code';

export function niwReleaseCount(u: number, rule: NiwReleaseRule, oneBelow = 0.6, twoBelow = 0.5): number {
  if (rule === 'code') return u <= twoBelow ? 1 : u <= oneBelow ? 2 : 0;
  return u < twoBelow ? 2 : u < oneBelow ? 1 : 0;
}
