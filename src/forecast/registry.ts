import { arima, autoArima, sarima } from './arima.ts';
import { holtWinters } from './holt-winters.ts';
import { holtWintersDouble } from './holt-winters-double.ts';
import { lstm } from './lstm.ts';
import { seasonalNaive } from './seasonal-naive.ts';
import type { Forecaster } from './types.ts';

/**
 * Every forecaster by its CLI name. `holt-winters` is additive, `holt-winters-mul` multiplicative,
 * `holt-winters-double` additive with a daily and a weekly season (`period`, `period2`); `auto`
 * is not here: it is a selection over these (backtest.ts, `selectModel`).
 */
export const forecasters = {
  'seasonal-naive': () => seasonalNaive(),
  'holt-winters': () => holtWinters('additive'),
  'holt-winters-mul': () => holtWinters('multiplicative'),
  'holt-winters-double': () => holtWintersDouble(),
  arima: () => arima(),
  sarima: () => sarima(),
  'auto-arima': () => autoArima(),
  lstm: () => lstm(),
} satisfies Record<string, () => Forecaster>;

export type ForecasterName = keyof typeof forecasters;
export const FORECASTER_NAMES = Object.keys(forecasters).sort() as ForecasterName[];

/** Whether the model uses the seasonal period (auto searches periods only for these). */
export const SEASONAL: Record<ForecasterName, boolean> = {
  'seasonal-naive': true,
  'holt-winters': true,
  'holt-winters-mul': true,
  'holt-winters-double': true,
  arima: false,
  sarima: true,
  'auto-arima': false,
  lstm: true,
};
