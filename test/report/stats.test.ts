import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meanCi95, tQuantile975 } from '../../src/report/stats.ts';

/**
 * P(T ≤ t) for Student's t with ν degrees of freedom, computed independently of the code under test: with
 * x = √ν·tan θ the density becomes ∝ cos^(ν−1) θ on (−π/2, π/2), so F(t) = ½ + ½·∫₀^atan(t/√ν) cos^(ν−1) / ∫₀^(π/2) cos^(ν−1),
 * both integrals by Simpson's rule on a smooth integrand.
 */
function tCdf(t: number, nu: number): number {
  const simpson = (b: number, n = 4000) => {
    const h = b / n;
    let s = 1 + Math.cos(b) ** (nu - 1);
    for (let i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * Math.cos(i * h) ** (nu - 1);
    return (s * h) / 3;
  };
  return 0.5 + (0.5 * simpson(Math.atan(t / Math.sqrt(nu)))) / simpson(Math.PI / 2);
}

test('t(0.975, df) puts 97.5 % of the t distribution below it, for df = 1…200', () => {
  for (let df = 1; df <= 200; df++) {
    const q = tQuantile975(df);
    assert.ok(Math.abs(tCdf(q, df) - 0.975) < 2e-6, `df ${df}: t = ${q}, F(t) = ${tCdf(q, df)}`);
  }
});

test('t(0.975, df) matches the printed table (and the closed forms for df 1 and 2)', () => {
  // Closed forms: df 1 is Cauchy, tan(0.475π); df 2 is (2p − 1)/√(2p(1 − p)).
  assert.ok(Math.abs(tQuantile975(1) - Math.tan(0.475 * Math.PI)) < 1e-6);
  assert.ok(Math.abs(tQuantile975(2) - 0.95 / Math.sqrt(2 * 0.975 * 0.025)) < 1e-6);
  // A printed two-sided 95 % table (3 decimals).
  const printed: [number, number][] = [
    [3, 3.182], [4, 2.776], [5, 2.571], [6, 2.447], [7, 2.365], [8, 2.306], [9, 2.262], [10, 2.228], [15, 2.131], [20, 2.086],
    [25, 2.06], [29, 2.045], [30, 2.042], [40, 2.021], [60, 2.0], [120, 1.98],
  ];
  for (const [df, t] of printed) assert.ok(Math.abs(tQuantile975(df) - t) < 6e-4, `df ${df}: ${tQuantile975(df)} vs ${t}`);
  // Decreasing towards the normal quantile.
  for (let df = 2; df <= 500; df++) assert.ok(tQuantile975(df) < tQuantile975(df - 1), `df ${df}`);
  assert.ok(Math.abs(tQuantile975(100_000) - 1.959964) < 1e-4);
  assert.ok(Number.isNaN(tQuantile975(0)));
});

test('mean and 95 % half-width: [1, 2, 3] is 2 ± 2.484; one value or a NaN has no interval', () => {
  const m = meanCi95([1, 2, 3]);
  assert.equal(m.mean, 2);
  assert.equal(m.n, 3);
  assert.ok(Math.abs(m.ci95 - 2.484) < 5e-4, String(m.ci95));
  // s = 1 and t(0.975, 2) · 1 / √3 exactly as the formula says.
  assert.ok(Math.abs(m.ci95 - tQuantile975(2) / Math.sqrt(3)) < 1e-12);
  assert.deepEqual(meanCi95([5, 5, 5, 5]), { mean: 5, ci95: 0, n: 4, nWithValue: 4 });
  // Two values 10 and 12: s = √2, half-width 12.706 · √2 / √2.
  assert.ok(Math.abs(meanCi95([10, 12]).ci95 - 12.7062047) < 1e-6);
  const one = meanCi95([7]);
  assert.equal(one.mean, 7);
  assert.ok(Number.isNaN(one.ci95));
  const gap = meanCi95([1, NaN, 3]);
  assert.ok(Number.isNaN(gap.mean) && Number.isNaN(gap.ci95));
});
