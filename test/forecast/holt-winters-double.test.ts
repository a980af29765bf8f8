import { test } from 'node:test';
import assert from 'node:assert/strict';
import { score } from '../../src/forecast/backtest.ts';
import { holtWinters } from '../../src/forecast/holt-winters.ts';
import { holtWintersDouble } from '../../src/forecast/holt-winters-double.ts';
import { Rng } from '../../src/util/rng.ts';

// Additive daily cycle + weekend dip + noise at 1-hour steps; the forecast window crosses Friday → Saturday.
const rng = new Rng(5);
const y = Array.from({ length: 24 * 7 * 4 }, (_, t) => {
  const day = Math.floor(t / 24) % 7;
  return 100 + 30 * Math.sin((2 * Math.PI * (t % 24)) / 24) - (day >= 5 ? 40 : 0) + rng.normal(0, 2);
});
const cut = 24 * (7 * 3 + 4); // end of the fourth day (Thursday) of week 4
const train = y.slice(0, cut);
const actual = y.slice(cut, cut + 48); // Friday and Saturday

test('double-seasonal Holt-Winters learns the weekly season a daily model cannot', () => {
  const d = holtWintersDouble();
  d.fit(train, { period: 24, period2: 168 });
  const single = holtWinters('additive');
  single.fit(train, { period: 24 });
  const rd = score([{ actual, forecast: d.forecast(48) }]).rmse;
  const rs = score([{ actual, forecast: single.forecast(48) }]).rmse;
  assert.ok(rd < 6, `double RMSE ${rd.toFixed(2)} (noise σ 2)`);
  assert.ok(rd < rs / 2, `double ${rd.toFixed(2)} vs single ${rs.toFixed(2)}`);
});

test('double-seasonal Holt-Winters needs nested periods and two long seasons of data', () => {
  assert.throws(() => holtWintersDouble().fit(train, { period: 24 }), /period2 a larger multiple/);
  assert.throws(() => holtWintersDouble().fit(train, { period: 24, period2: 100 }), /period2 a larger multiple/);
  assert.throws(() => holtWintersDouble().fit(train.slice(0, 300), { period: 24, period2: 168 }), /series too short/);
});
