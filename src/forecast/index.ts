/** The forecasting layer's public surface: series, forecasters, backtests, length predictors, workload types. */
export type { Forecast, FitOptions, Forecaster } from './types.ts';
export { makeForecaster, type ForecasterCore } from './base.ts';
export { seasonalNaive } from './seasonal-naive.ts';
export { holtWinters, type Seasonality, type HoltWintersParams } from './holt-winters.ts';
export { holtWintersDouble } from './holt-winters-double.ts';
export { arima, sarima, autoArima, arimaFitCounts, MAX_FIT_POINTS, type ArimaOrder, type SeasonalOrder, type ArimaFitReport, type ArimaForecaster } from './arima.ts';
export { lstm, LSTM_DEFAULTS, type LstmOptions } from './lstm.ts';
export { forecasters, FORECASTER_NAMES, SEASONAL, type ForecasterName } from './registry.ts';
export { score, backtest, selectModel, candidatePeriods, candidatesFor, AUTO_MODELS, type Metrics, type Candidate, type Selection } from './backtest.ts';
export { runForecast, MODEL_CHOICES, type ModelChoice, type RunOptions, type RunResult } from './pipeline.ts';
export {
  buildSeries,
  parseGranularity,
  parseKeyFields,
  KEY_FIELDS,
  SERIES_METRICS,
  type KeyField,
  type WorkloadSeries,
  type SeriesMetric,
  type BuildOptions,
} from './series.ts';
export { readSeriesCsv, parseSeriesCsv, IMPUTATIONS, type Imputation, type SeriesData } from './series-csv.ts';
export { syntheticSeries, SYNTHETIC_DEFAULTS, type SyntheticOptions } from './synthetic.ts';
export { forecastPeak, type PeakOptions, type PeakDemand } from './sageserve-peak.ts';
export { fitWorkloadTypes, fromState, typeLabeller, type WorkloadTypes, type WorkloadTypesState } from './workload-types.ts';
export type { LengthPredictor, LengthPrediction, LengthRequest } from './length/types.ts';
export { oracleLength } from './length/oracle.ts';
export { noisyOracleLength, PRESERVE_ERROR, type NoisyOracleOptions } from './length/noisy-oracle.ts';
export { keyQuantilesLength, type KeyQuantilesOptions } from './length/key-quantiles.ts';
export { onlineRegressorLength } from './length/online-regressor.ts';
export { evaluateLength, type LengthAccuracy } from './length/evaluate.ts';
export { lengthPredictors, type LengthPredictorName } from './length/registry.ts';
