import { createRequire } from 'node:module';
import type * as TF from '@tensorflow/tfjs';
import { makeForecaster, mean, stdev } from './base.ts';
import { Z80, type Forecaster } from './types.ts';

export interface LstmOptions {
  /** Look-back window in points (OServe uses 50 one-minute spans). */
  window: number;
  units: number;
  epochs: number;
  /** Train on at most this many most recent samples (keeps a fit to a few seconds on the pure-JS backend). */
  maxSamples: number;
  learningRate: number;
  /** Mini-batch size. tfjs's pure-JS LSTM is slow (~0.1 ms per sample·timestep·epoch measured here), so the
   * defaults keep 400 samples × 12 steps × 10 epochs (about 4–8 s here). Batches of 32 give 130 optimizer
   * steps; full-batch (10 steps) cost the same time and left the bench forecast at RMSE 13.5 instead of 7.6. */
  batchSize: number;
}

export const LSTM_DEFAULTS: LstmOptions = { window: 12, units: 8, epochs: 10, maxSamples: 400, learningRate: 0.02, batchSize: 32 };

/**
 * A small LSTM (one layer, `units` cells, dense head) on the pure-JS CPU backend of @tensorflow/tfjs, trained
 * to predict the next value from the last `window` values, standardised with the training mean and σ
 * (PreServe §3.1 min-max normalises; we standardise instead, see the comment in fit). Multi-step forecasts roll the
 * model forward on its own outputs (PreServe's two-step rollout, generalised). With a seasonal period m each
 * input step also carries the value one season earlier (a second feature): a short window cannot see a
 * 1,440-point day otherwise. Weights are initialised from `seed`, training does not shuffle,
 * so the same seed gives the same forecast. This is a plain LSTM, not PreServe's multiplicative mLSTM.
 */
export function lstm(options: Partial<LstmOptions> = {}): Forecaster {
  const o = { ...LSTM_DEFAULTS, ...options };
  let tf: typeof TF;
  let model: TF.Sequential | undefined;
  let z: number[] = [];
  let m = 1;
  let nf = 1;
  let lo = 0;
  let range = 1;
  let sigma = 0;
  return makeForecaster('lstm', {
    minHistory: (f) => (f.period ?? 1) + o.window + 8,
    fit(y, f) {
      tf = loadTf();
      // Production mode skips tfjs's debug checks and its "install tfjs-node" banner on first use.
      if (!tf.env().getBool('PROD')) tf.enableProdMode();
      m = f.period ?? 1;
      nf = m > 1 ? 2 : 1;
      // z-score with the training mean and σ (lo, range): an untrained net outputs ≈ 0, i.e. the mean, and
      // one burst does not squash everything else into a sliver of [0, 1] as min-max scaling would.
      lo = mean(y);
      range = stdev(y) || 1;
      z = y.map((v) => (v - lo) / range);
      const xs: number[][][] = [];
      const ys: number[] = [];
      const first = Math.max(o.window + m - 1, z.length - o.maxSamples);
      for (let t = first; t < z.length; t++) {
        xs.push(windowAt(z, t, o.window, m));
        ys.push(z[t]!);
      }
      model?.dispose();
      const seed = f.seed ?? 1;
      model = tf.sequential();
      model.add(
        tf.layers.lstm({
          units: o.units,
          inputShape: [o.window, nf],
          kernelInitializer: tf.initializers.glorotUniform({ seed }),
          recurrentInitializer: tf.initializers.orthogonal({ seed: seed + 1 }),
        }),
      );
      model.add(tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 2 }) }));
      const X = tf.tensor3d(xs);
      const Y = tf.tensor2d(ys, [ys.length, 1]);
      // model.fit() is async in tfjs; plain optimizer steps over ordered mini-batches keep fit() synchronous.
      const opt = tf.train.adam(o.learningRate);
      const batch = o.batchSize;
      for (let e = 0; e < o.epochs; e++) {
        for (let b = 0; b < xs.length; b += batch) {
          const size = Math.min(batch, xs.length - b);
          tf.tidy(() => {
            const xb = X.slice([b, 0, 0], [size, o.window, nf]);
            const yb = Y.slice([b, 0], [size, 1]);
            opt.minimize(() => tf.losses.meanSquaredError(yb, model!.predict(xb) as TF.Tensor) as TF.Scalar);
          });
        }
      }
      const fitted = tf.tidy(() => (model!.predict(X) as TF.Tensor).dataSync());
      const resid: number[] = [];
      for (let i = 0; i < ys.length; i++) resid.push((ys[i]! - fitted[i]!) * range);
      sigma = stdev(resid);
      X.dispose();
      Y.dispose();
      opt.dispose();
    },
    forecast(h) {
      const ext = z.slice();
      const point: number[] = [];
      const p10: number[] = [];
      const p90: number[] = [];
      for (let i = 0; i < h; i++) {
        const x = windowAt(ext, ext.length, o.window, m);
        const next = tf.tidy(() => (model!.predict(tf.tensor3d([x])) as TF.Tensor).dataSync()[0]!);
        ext.push(next);
        const v = next * range + lo;
        // Heuristic spread: one-step σ growing as √steps, capped at the window (beyond it errors stop compounding).
        const sd = sigma * Math.sqrt(Math.min(i + 1, o.window));
        point.push(v);
        p10.push(v - Z80 * sd);
        p90.push(v + Z80 * sd);
      }
      return { point, p10, p90 };
    },
  });
}

let tfModule: typeof TF | undefined;
/** tfjs is required on first fit: importing it costs ~1 s, which every CLI command would otherwise pay. */
function loadTf(): typeof TF {
  tfModule ??= createRequire(import.meta.url)('@tensorflow/tfjs') as typeof TF;
  return tfModule;
}

/**
 * Input for predicting z[t]: the `w` values before t, each paired (when m > 1) with the value one season
 * before the step after it, so the last row carries z[t − m], the seasonal-naive guess for the target.
 */
function windowAt(z: readonly number[], t: number, w: number, m: number): number[][] {
  const rows: number[][] = [];
  for (let j = t - w; j < t; j++) rows.push(m > 1 ? [z[j]!, z[j + 1 - m]!] : [z[j]!]);
  return rows;
}
