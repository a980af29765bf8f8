import { createRequire } from 'node:module';
import { UserError } from '../util/errors.ts';
import { makeForecaster, stdev } from './base.ts';
import { Z80, type Forecaster } from './types.ts';

/**
 * ARIMA, SARIMA and AutoARIMA through the `arima` npm package (an Emscripten build of the C library ctsa).
 * Three things about that package shape this file (measured, see docs/fidelity/forecast.md):
 * - It passes the series through the WASM stack (64 KiB): 10,080 points crash it ("memory access out of
 *   bounds") and ~5,000–7,500 points can silently return garbage. We fit on the last MAX_FIT_POINTS only.
 * - Its `method` numbers are not what its README says: for these (SARIMAX) fits the C library ctsa reads 0 as
 *   CSS-then-ML, 1 as exact ML, 2 as CSS (its fit summary prints so). We try method 1 first, method 0 second
 *   (0 sometimes diverges: forecast 1e9 on a sine), and every fit is checked. With its default optimizer
 *   (L-BFGS, unconstrained) method 1 sometimes ends on a non-stationary AR coefficient (measured: AR1 = 1.0005
 *   and 1.009 on clean hourly series) and returns negative h-step MSEs, while method 0 diverges to NaN on the
 *   same series; a third attempt, method 1 with Nelder-Mead, fitted every such case we measured. Which attempt
 *   passed is reported (`lastFit` on the forecaster).
 * - Native seasonal fits with a long season are very slow (s = 144 on 1,008 points: 30–90 s). For
 *   s > NATIVE_SEASON_MAX we difference the season ourselves and fit ARIMA(p,d,q) on y(t) − y(t−s), i.e.
 *   SARIMA(p,d,q)(0,1,0)s; short seasons use the package's own SARIMA.
 * The package's second output is the h-step mean squared error, so the interval is point ± 1.2816·√mse.
 */
export const MAX_FIT_POINTS = 4000;
export const NATIVE_SEASON_MAX = 48;

export interface ArimaOrder {
  p: number;
  d: number;
  q: number;
}
export interface SeasonalOrder {
  P: number;
  D: number;
  Q: number;
}

interface ArimaInstance {
  train(ts: number[]): ArimaInstance;
  predict(h: number): [number[], number[]];
  destroy(): void;
}
type ArimaCtor = new (o: Record<string, number | boolean>) => ArimaInstance;

let ctor: ArimaCtor | undefined;
function loadArima(): ArimaCtor {
  // Loaded on first use: compiling the WASM costs ~100 ms that other models should not pay.
  ctor ??= quiet(() => createRequire(import.meta.url)('arima') as ArimaCtor);
  return ctor;
}

/** Runs f with stdout muted: the WASM module prints optimizer traces through console.log. */
function quiet<T>(f: () => T): T {
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return f();
  } finally {
    process.stdout.write = write;
  }
}

interface Fitted {
  /** Forecast on the (possibly seasonally differenced) scale, with h-step MSE. */
  predict(h: number): [number[], number[]];
  report: ArimaFitReport;
}

/** Which fit attempt passed the checks: 1 = exact ML (L-BFGS), 2 = CSS-then-ML (L-BFGS), 3 = exact ML with
 * Nelder-Mead (the retry; not for auto fits); 0 = a constant series, not passed to the package. */
export interface ArimaFitReport {
  attempt: number;
  method: 'constant' | 'exact-ml' | 'css-ml' | 'exact-ml-nelder-mead';
}

/** The package's `method` and `optimizer` per attempt (see the file comment). */
const ATTEMPTS = [
  { method: 1, optimizer: 6, name: 'exact-ml' },
  { method: 0, optimizer: 6, name: 'css-ml' },
  { method: 1, optimizer: 0, name: 'exact-ml-nelder-mead' },
] as const;

function fitChecked(y: number[], opts: Record<string, number | boolean>, name: string): Fitted {
  // A constant series has one right answer, and the package gets it wrong (all zeros: points like 4.6e-319 and
  // 1e-31, p10 = p90): forecast the constant with a zero-width interval.
  if (y.every((v) => v === y[0])) {
    return { predict: (h) => [new Array<number>(h).fill(y[0]!), new Array<number>(h).fill(0)], report: { attempt: 0, method: 'constant' } };
  }
  const Arima = loadArima();
  const scale = stdev(diff(y)) || stdev(y) || 1;
  const lo = Math.min(...y);
  const hi = Math.max(...y);
  const span = Math.max(hi - lo, scale);
  const errs: string[] = [];
  // Auto fits get no Nelder-Mead retry: their stepwise search was not measured with it.
  const attempts = opts.auto ? ATTEMPTS.slice(0, 2) : ATTEMPTS;
  for (let a = 0; a < attempts.length; a++) {
    const { method, optimizer } = attempts[a]!;
    const report: ArimaFitReport = { attempt: a + 1, method: attempts[a]!.name };
    try {
      const train = () => quiet(() => new Arima({ ...opts, method, optimizer, verbose: false }).train(y));
      const model = train();
      const probe = quiet(() => model.predict(Math.min(8, y.length)));
      // Besides divergence, the package sometimes returns a flat forecast far from the data with zero variance
      // (measured: auto-arima on 4,000 points of a daily + weekly sine: 201 after a last value of 41, max 163,
      // p10 = p90). A one-step forecast more than 10 one-step deviations from the last value, or a zero one-step
      // variance on a noisy series, is such a fit.
      const last = y[y.length - 1]!;
      const ok =
        plausible(probe, lo - 10 * span, hi + 10 * span) &&
        probe[1][0]! <= 25 * scale * scale + 1e-9 &&
        Math.abs(probe[0][0]! - last) <= 10 * scale &&
        (probe[1][0]! > 0 || stdev(diff(y)) === 0);
      // A forecast past the probe is checked for garbage too (not for range: a long horizon may leave the data's).
      const checked = (f: [number[], number[]]): [number[], number[]] => {
        if (!plausible(f, -Infinity, Infinity)) throw new UserError(`${name}: the arima package returned an implausible ${f[0].length}-step forecast (${report.method}); try holt-winters or seasonal-naive`);
        return f;
      };
      if (ok) {
        if (!opts.auto) return { predict: (h) => checked(quiet(() => model.predict(h))), report };
        // The package's auto fits cannot be asked twice: a model with a mean or drift adds it again on every
        // predict() call (measured: white noise around 55 forecast 55, then 110, then 165; the probe above was the
        // first call, so every auto-arima forecast with a mean was doubled). Horizons within the probe are slices of
        // it; a longer one refits the same (deterministic) model and asks it once.
        model.destroy();
        return {
          report,
          predict: (h) => {
            if (h <= probe[0].length) return [probe[0].slice(0, h), probe[1].slice(0, h)];
            const fresh = train();
            try {
              return checked(quiet(() => fresh.predict(h)));
            } finally {
              fresh.destroy();
            }
          },
        };
      }
      model.destroy();
      errs.push(`${report.method}: ${probe[1].some((v) => v < 0) ? 'negative MSE' : 'fit diverged'}`);
    } catch (e) {
      errs.push(`${report.method}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  throw new UserError(`${name}: the arima package failed to fit this series (${errs.join('; ')}); try holt-winters or seasonal-naive`);
}

/**
 * Whether a forecast (points, h-step MSE) can come from a fitted ARIMA: finite points within [lo, hi], no subnormal
 * numbers, and an MSE that is ≥ 0 and does not fall with the horizon (σ² Σ ψ_j² over more steps; the package's
 * exact-ML MSEs dip by up to 0.1 % between steps, so dips under 1 % pass). The package returns memory instead of a
 * forecast for orders without AR and MA terms (measured: auto-arima on the conv trace's 48 one-minute points gave
 * points 2e-309, 5e-310, …, 0, then training values, with training values as MSEs; ARIMA(0,0,0) on white noise
 * around 55: 55, 55, 55, 113, 109, …), which the first-step checks let pass.
 */
function plausible([points, mse]: [number[], number[]], lo: number, hi: number): boolean {
  const subnormal = (v: number) => v !== 0 && Math.abs(v) < 2.2250738585072014e-308;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!, m = mse[i]!;
    if (!Number.isFinite(p) || p <= lo || p >= hi || subnormal(p) || !Number.isFinite(m) || m < 0 || subnormal(m)) return false;
    if (i > 0 && m < mse[i - 1]! * 0.99) return false;
  }
  return true;
}

function diff(y: readonly number[]): number[] {
  const d: number[] = [];
  for (let i = 1; i < y.length; i++) d.push(y[i]! - y[i - 1]!);
  return d;
}

function toForecast(pred: number[], mse: number[]) {
  const p10: number[] = [];
  const p90: number[] = [];
  for (let i = 0; i < pred.length; i++) {
    const sd = Math.sqrt(Math.max(0, mse[i]!));
    p10.push(pred[i]! - Z80 * sd);
    p90.push(pred[i]! + Z80 * sd);
  }
  return { point: pred, p10, p90 };
}

/** A forecaster on the package; `lastFit` says which attempt passed on the latest successful fit. */
export type ArimaForecaster = Forecaster & { readonly lastFit: ArimaFitReport | undefined };

function withReport(f: Forecaster, get: () => ArimaFitReport | undefined): ArimaForecaster {
  return Object.defineProperty(f, 'lastFit', { get, enumerable: true }) as ArimaForecaster;
}

/** ARIMA(p,d,q); SageServe's code uses (3,1,2) on 1-minute input-token sums, our default is (2,1,2). */
export function arima(order: ArimaOrder = { p: 2, d: 1, q: 2 }): ArimaForecaster {
  let fitted: Fitted | undefined;
  return withReport(makeForecaster('arima', {
    minHistory: () => order.d + Math.max(order.p + order.q, 10) + 2,
    fit(y) {
      fitted = fitChecked(y.slice(-MAX_FIT_POINTS), { ...order, P: 0, D: 0, Q: 0, s: 0 }, 'arima');
    },
    forecast(h) {
      const [pred, mse] = fitted!.predict(h);
      return toForecast(pred, mse);
    },
  }), () => fitted?.report);
}

/** SARIMA(p,d,q)(P,D,Q)s; default (1,0,1)(0,1,1)s. Needs `period` ≥ 2. See the file comment for long seasons. */
export function sarima(order: ArimaOrder = { p: 1, d: 0, q: 1 }, seasonal: SeasonalOrder = { P: 0, D: 1, Q: 1 }): ArimaForecaster {
  let m = 1;
  let native: Fitted | undefined;
  let tail: number[] = [];
  let inner: Fitted | undefined;
  return withReport(makeForecaster('sarima', {
    minHistory: (o) => {
      const s = o.period ?? 1;
      return order.d + s * Math.max(seasonal.D, 1) + Math.max(order.p + order.q, 2 * s, 10) + 2;
    },
    fit(y, o) {
      m = o.period ?? 1;
      if (m < 2) throw new UserError('sarima: needs a seasonal period ≥ 2 (set it, or use arima)');
      const window = y.slice(-MAX_FIT_POINTS);
      if (m <= NATIVE_SEASON_MAX) {
        native = fitChecked(window, { ...order, ...seasonal, s: m }, 'sarima');
        inner = undefined;
      } else {
        // y(t) − y(t−m), fitted as ARIMA(p,d,q); the forecast is integrated back below.
        const z: number[] = [];
        for (let i = m; i < window.length; i++) z.push(window[i]! - window[i - m]!);
        if (z.length < 20) throw new UserError(`sarima: series too short for period ${m}: needs at least ${m + 20} points`);
        inner = fitChecked(z, { ...order, P: 0, D: 0, Q: 0, s: 0 }, 'sarima');
        tail = window.slice(-m);
        native = undefined;
      }
    },
    forecast(h) {
      if (native) {
        const [pred, mse] = native.predict(h);
        return toForecast(pred, mse);
      }
      const [dz, mz] = inner!.predict(h);
      const pred: number[] = [];
      const mse: number[] = [];
      for (let i = 0; i < h; i++) {
        const prev = i < m ? tail[i]! : pred[i - m]!;
        const prevVar = i < m ? 0 : mse[i - m]!;
        pred.push(prev + dz[i]!);
        mse.push(prevVar + mz[i]!); // cross-covariances ignored: a slightly narrow interval past one season
      }
      return toForecast(pred, mse);
    },
  }), () => (native ?? inner)?.report);
}

/** Longest season the seasonal AutoARIMA search is run for: with s = 24 and (P,Q) ≤ 2 it took 48 s on 480
 * points; with (p,q) ≤ 3, (P,Q) ≤ 1 it takes ~3.5 s. */
export const AUTO_SEASON_MAX = 24;

/**
 * AutoARIMA (the package's stepwise search, p,q ≤ 5, d ≤ 2). Seasonal — (p,q) ≤ 3, (P,D,Q) ≤ 1 — only when
 * a period ≤ AUTO_SEASON_MAX is passed; the CLI and `auto` treat it as non-seasonal (SEASONAL in registry.ts).
 */
export function autoArima(): ArimaForecaster {
  let fitted: Fitted | undefined;
  return withReport(makeForecaster('auto-arima', {
    minHistory: (o) => Math.max(2 * (o.period ?? 1) + 2, 24),
    fit(y, o) {
      const m = o.period ?? 1;
      const order = m > 1 && m <= AUTO_SEASON_MAX ? { p: 3, d: 1, q: 3, P: 1, D: 1, Q: 1, s: m } : { p: 5, d: 2, q: 5, P: 0, D: 0, Q: 0, s: 0 };
      fitted = fitChecked(y.slice(-MAX_FIT_POINTS), { auto: true, ...order }, 'auto-arima');
    },
    forecast(h) {
      const [pred, mse] = fitted!.predict(h);
      return toForecast(pred, mse);
    },
  }), () => fitted?.report);
}
