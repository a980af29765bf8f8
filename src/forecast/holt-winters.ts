import { UserError } from '../util/errors.ts';
import { makeForecaster } from './base.ts';
import { Z80, type Forecaster } from './types.ts';

export type Seasonality = 'additive' | 'multiplicative';

export interface HoltWintersParams {
  alpha: number;
  beta: number;
  gamma: number;
  /** Trend damping φ (1 = undamped). */
  phi: number;
}

/**
 * Holt-Winters triple exponential smoothing with damped additive trend and additive or multiplicative
 * season (FPP3 §8.3–8.4). α, β, γ, φ are chosen by a deterministic search minimising the one-step squared
 * error: a coarse grid, then coordinate refinement with shrinking steps. With period 1 it is Holt's method.
 *
 * State update (additive):  ℓ = α(y − s[t−m]) + (1−α)(ℓ + φb);  b = β(ℓ − ℓ₋) + (1−β)φb;
 *                           s[t] = γ(y − ℓ) + (1−γ)s[t−m];  ŷ(t+h) = ℓ + (φ + … + φʰ)·b + s[t+h−m]
 * Multiplicative divides by the season instead of subtracting it. The trend is always damped (φ ∈ {0.9, 0.98}
 * searched): the one-step-optimal β often catches in-day swings as trend, and an undamped trend then drifts
 * far over a day-long horizon (measured: additive HW, 3 weeks of 10-minute data, 2-day horizon: RMSE 88 with
 * φ = 1, see docs/fidelity/forecast.md).
 */
export function holtWinters(seasonality: Seasonality = 'additive', fixed?: HoltWintersParams): Forecaster {
  let st: State | undefined;
  let m = 1;
  let params: HoltWintersParams = { alpha: 0.5, beta: 0.01, gamma: 0.1, phi: 0.98 };
  const mult = seasonality === 'multiplicative';
  const name = mult ? 'holt-winters-mul' : 'holt-winters';
  return makeForecaster(name, {
    minHistory: (o) => Math.max(4, 2 * (o.period ?? 1) + 2),
    fit(y, o) {
      m = o.period ?? 1;
      if (mult && y.some((v) => v <= 0)) {
        throw new UserError(`${name}: multiplicative seasonality needs every value > 0; use additive Holt-Winters`);
      }
      const init = initialState(y, m, mult);
      params = fixed ?? search((p) => run(y, m, mult, p, init).sse);
      st = run(y, m, mult, params, init);
    },
    forecast(h) {
      const s = st!;
      const { alpha, beta, gamma, phi } = params;
      const point: number[] = [];
      const p10: number[] = [];
      const p90: number[] = [];
      let varSum = 0;
      let damp = 0; // φ + φ² + … + φ^i
      for (let i = 1; i <= h; i++) {
        damp += Math.pow(phi, i);
        const season = m > 1 ? s.season[(s.t + i - 1) % m]! : mult ? 1 : 0;
        const base = s.level + damp * s.trend;
        const v = mult ? base * season : base + season;
        // h-step variance of additive damped HW: σ²[1 + Σ_{j<h} (α(1 + βφ(1−φʲ)/(1−φ)) + γ·[j mod m = 0])²]
        // (FPP3 Table 8.8); the multiplicative model reuses it on the relative error scale.
        const j = i - 1;
        if (j >= 1) {
          const trendSum = phi === 1 ? j : (phi * (1 - Math.pow(phi, j))) / (1 - phi);
          const c = alpha * (1 + beta * trendSum) + (m > 1 && j % m === 0 ? gamma : 0);
          varSum += c * c;
        }
        const sd = Math.sqrt(1 + varSum) * (mult ? s.sigma * Math.abs(v) : s.sigma);
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
  season: number[];
}

interface State extends Init {
  /** Index of the next step (season slot = t mod m). */
  t: number;
  sse: number;
  /** One-step error σ (relative for the multiplicative model). */
  sigma: number;
}

/** Classical start: level = mean of season 1, trend from season 1 → 2, season = deviation from level. */
function initialState(y: readonly number[], m: number, mult: boolean): Init {
  if (m === 1) return { level: y[0]!, trend: y[1]! - y[0]!, season: [mult ? 1 : 0] };
  let a = 0;
  let b = 0;
  for (let i = 0; i < m; i++) {
    a += y[i]!;
    b += y[m + i]!;
  }
  a /= m;
  b /= m;
  const season: number[] = [];
  for (let i = 0; i < m; i++) {
    const v = (y[i]! + y[m + i]!) / 2;
    const lvl = (a + b) / 2;
    season.push(mult ? (lvl > 0 ? v / lvl : 1) : v - lvl);
  }
  return { level: a, trend: (b - a) / m, season };
}

function run(y: readonly number[], m: number, mult: boolean, p: HoltWintersParams, init: Init): State {
  const { alpha, beta, gamma, phi } = p;
  const season = init.season.slice();
  let level = init.level;
  let trend = init.trend;
  let sse = 0;
  let sse1 = 0;
  let count = 0;
  for (let t = 0; t < y.length; t++) {
    const v = y[t]!;
    const k = t % m;
    const s = m > 1 ? season[k]! : mult ? 1 : 0;
    const pred = mult ? (level + phi * trend) * s : level + phi * trend + s;
    const e = v - pred;
    if (t >= m) {
      sse += e * e;
      const rel = mult && pred !== 0 ? e / pred : e;
      sse1 += rel * rel;
      count++;
    }
    const prevLevel = level;
    level = mult ? alpha * (s !== 0 ? v / s : v) + (1 - alpha) * (level + phi * trend) : alpha * (v - s) + (1 - alpha) * (level + phi * trend);
    trend = beta * (level - prevLevel) + (1 - beta) * phi * trend;
    if (m > 1) season[k] = mult ? gamma * (level !== 0 ? v / level : 1) + (1 - gamma) * s : gamma * (v - level) + (1 - gamma) * s;
  }
  if (!Number.isFinite(sse)) sse = Number.MAX_VALUE;
  return { level, trend, season, t: y.length, sse, sigma: Math.sqrt(sse1 / Math.max(1, count - 3)) };
}

const GRID_A = [0.05, 0.2, 0.4, 0.6, 0.8, 0.95];
const GRID_B = [0, 0.01, 0.05, 0.2];
const GRID_G = [0.01, 0.05, 0.15, 0.3, 0.5];
const GRID_PHI = [0.9, 0.98];

/** Deterministic search: grid (6·4·5·2 = 240 runs), then 4 rounds of coordinate steps ±δ with δ halving on α, β, γ. */
function search(sse: (p: HoltWintersParams) => number): HoltWintersParams {
  let best: HoltWintersParams = { alpha: 0.5, beta: 0.01, gamma: 0.1, phi: 0.98 };
  let bestV = Infinity;
  for (const alpha of GRID_A) {
    for (const beta of GRID_B) {
      for (const gamma of GRID_G) {
        for (const phi of GRID_PHI) {
          const v = sse({ alpha, beta, gamma, phi });
          if (v < bestV) {
            bestV = v;
            best = { alpha, beta, gamma, phi };
          }
        }
      }
    }
  }
  let step = 0.08;
  for (let round = 0; round < 4; round++, step /= 2) {
    for (const key of ['alpha', 'beta', 'gamma'] as const) {
      for (const dir of [-1, 1]) {
        const cand = { ...best, [key]: clamp(best[key] + dir * (key === 'beta' ? step / 4 : step)) };
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

function clamp(x: number): number {
  return Math.min(0.999, Math.max(0, x));
}
