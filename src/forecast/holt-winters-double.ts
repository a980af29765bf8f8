import { UserError } from '../util/errors.ts';
import { makeForecaster } from './base.ts';
import { Z80, type Forecaster } from './types.ts';

interface Params {
  alpha: number;
  beta: number;
  gamma: number;
  omega: number;
}

/**
 * Double-seasonal additive Holt-Winters (Taylor 2003, "Short-term electricity demand forecasting using double
 * seasonal exponential smoothing"): a daily season d (period m1 = `period`) and a weekly season w (m2 =
 * `period2`, a multiple of m1) on top of level and trend:
 *   ℓ = α(y − d[t−m1] − w[t−m2]) + (1−α)(ℓ + b);  b = β(ℓ − ℓ₋) + (1−β)b
 *   d[t] = γ(y − ℓ − w[t−m2]) + (1−γ)d[t−m1];    w[t] = ω(y − ℓ − d[t−m1]) + (1−ω)w[t−m2]
 *   ŷ(t+h) = ℓ + h·b + d[t+h−m1] + w[t+h−m2]
 * Start: level = mean of the first m2 points, d = the first m2 points' mean daily profile, w = what is left.
 * α, β, γ, ω by the same deterministic grid + coordinate search as holt-winters.ts.
 */
export function holtWintersDouble(): Forecaster {
  let st: State | undefined;
  let m1 = 1;
  let m2 = 1;
  let params: Params = { alpha: 0.3, beta: 0, gamma: 0.1, omega: 0.1 };
  return makeForecaster('holt-winters-double', {
    minHistory: (o) => 2 * (o.period2 ?? 2 * (o.period ?? 1)) + 2,
    fit(y, o) {
      m1 = o.period ?? 1;
      m2 = o.period2 ?? 0;
      if (m1 < 2 || m2 <= m1 || m2 % m1 !== 0) {
        throw new UserError(`holt-winters-double: needs period ≥ 2 and period2 a larger multiple of it, got ${m1} and ${o.period2 ?? 'none'}`);
      }
      const init = initial(y, m1, m2);
      params = search((p) => run(y, m1, m2, p, init).sse);
      st = run(y, m1, m2, params, init);
    },
    forecast(h) {
      const s = st!;
      const { alpha, beta, gamma, omega } = params;
      const point: number[] = [];
      const p10: number[] = [];
      const p90: number[] = [];
      let varSum = 0;
      for (let i = 1; i <= h; i++) {
        const v = s.level + i * s.trend + s.d[(s.t + i - 1) % m1]! + s.w[(s.t + i - 1) % m2]!;
        const j = i - 1;
        if (j >= 1) {
          const c = alpha * (1 + j * beta) + (j % m1 === 0 ? gamma : 0) + (j % m2 === 0 ? omega : 0);
          varSum += c * c;
        }
        const sd = s.sigma * Math.sqrt(1 + varSum);
        point.push(v);
        p10.push(v - Z80 * sd);
        p90.push(v + Z80 * sd);
      }
      return { point, p10, p90 };
    },
  });
}

interface Init {
  level: number;
  trend: number;
  d: number[];
  w: number[];
}
interface State extends Init {
  t: number;
  sse: number;
  sigma: number;
}

function initial(y: readonly number[], m1: number, m2: number): Init {
  let a = 0;
  let b = 0;
  for (let i = 0; i < m2; i++) {
    a += y[i]!;
    b += y[m2 + i]!;
  }
  a /= m2;
  b /= m2;
  const days = m2 / m1;
  const d = new Array<number>(m1).fill(0);
  for (let i = 0; i < m2; i++) d[i % m1]! += (y[i]! - a) / days;
  const w: number[] = [];
  for (let i = 0; i < m2; i++) w.push(y[i]! - a - d[i % m1]!);
  return { level: a, trend: (b - a) / m2, d, w };
}

function run(y: readonly number[], m1: number, m2: number, p: Params, init: Init): State {
  const { alpha, beta, gamma, omega } = p;
  const d = init.d.slice();
  const w = init.w.slice();
  let level = init.level;
  let trend = init.trend;
  let sse = 0;
  let count = 0;
  for (let t = 0; t < y.length; t++) {
    const v = y[t]!;
    const kd = t % m1;
    const kw = t % m2;
    const sd = d[kd]!;
    const sw = w[kw]!;
    const e = v - (level + trend + sd + sw);
    if (t >= m2) {
      sse += e * e;
      count++;
    }
    const prev = level;
    level = alpha * (v - sd - sw) + (1 - alpha) * (level + trend);
    trend = beta * (level - prev) + (1 - beta) * trend;
    d[kd] = gamma * (v - level - sw) + (1 - gamma) * sd;
    w[kw] = omega * (v - level - sd) + (1 - omega) * sw;
  }
  if (!Number.isFinite(sse)) sse = Number.MAX_VALUE;
  return { level, trend, d, w, t: y.length, sse, sigma: Math.sqrt(sse / Math.max(1, count - 4)) };
}

const GRID_A = [0.05, 0.2, 0.5, 0.8];
const GRID_B = [0, 0.01, 0.1];
const GRID_S = [0.01, 0.1, 0.3];

/** Grid (4·3·3·3 = 108 runs), then 4 rounds of coordinate steps with halving δ. */
function search(sse: (p: Params) => number): Params {
  let best: Params = { alpha: 0.3, beta: 0, gamma: 0.1, omega: 0.1 };
  let bestV = Infinity;
  for (const alpha of GRID_A)
    for (const beta of GRID_B)
      for (const gamma of GRID_S)
        for (const omega of GRID_S) {
          const v = sse({ alpha, beta, gamma, omega });
          if (v < bestV) {
            bestV = v;
            best = { alpha, beta, gamma, omega };
          }
        }
  let step = 0.08;
  for (let round = 0; round < 4; round++, step /= 2) {
    for (const key of ['alpha', 'beta', 'gamma', 'omega'] as const) {
      for (const dir of [-1, 1]) {
        const cand = { ...best, [key]: Math.min(0.999, Math.max(0, best[key] + dir * (key === 'beta' ? step / 4 : step))) };
        const v = sse(cand);
        if (v < bestV) {
          bestV = v;
          best = cand;
        }
      }
    }
  }
  return best;
}
