import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_REPLAY_TRACE, parseDay, traceWindows } from '../../../src/optimize/joint-allocation/trace-windows.ts';
import { writeTrace } from '../../helpers/sim.ts';
import { UserError } from '../../../src/util/errors.ts';

/** An azure trace with `perHour[d][h]` requests in hour h of day d, starting 2024-05-10 00:00:00.5 UTC. */
function azureTrace(perHour: number[][]): string {
  const rows = ['TIMESTAMP,ContextTokens,GeneratedTokens'];
  perHour.forEach((hours, d) =>
    hours.forEach((n, h) => {
      for (let k = 0; k < n; k++) {
        const s = (k * 3600) / n;
        const t = new Date(Date.UTC(2024, 4, 10 + d, h, 0, 0, 500) + s * 1000).toISOString().replace('T', ' ').replace('Z', '+00:00');
        rows.push(`${t},100,10`);
      }
    }),
  );
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-test-'));
  const path = join(dir, 'week.csv');
  writeFileSync(path, rows.join('\n') + '\n');
  return path;
}

const flat = (n: number) => new Array<number>(24).fill(n);

test('the bundled sample replays its whole span; multipliers average to one', () => {
  const w = traceWindows(BUNDLED_REPLAY_TRACE, 24);
  assert.deepEqual(w.span, { kind: 'whole' });
  assert.equal(w.multipliers.length, 24);
  assert.ok(Math.abs(w.multipliers.reduce((a, b) => a + b, 0) / 24 - 1) < 1e-9);
  assert.ok(w.requests > 1000 && w.peakToTrough >= 1);
});

test('a multi-day azure trace replays its busiest UTC day, cut into equal windows of that day', () => {
  // Day 1 (2024-05-11) is busiest: 4/h in its first 12 hours, 1/h after; the other days 1/h.
  const day1 = [...new Array<number>(12).fill(4), ...new Array<number>(12).fill(1)];
  const path = azureTrace([flat(1), day1, flat(1)]);
  const w = traceWindows(path, 2);
  assert.deepEqual(w.span, { kind: 'day', day: '2024-05-11', busiest: true });
  assert.equal(w.requests, 60);
  assert.deepEqual(w.multipliers, [48 / 30, 12 / 30]);
  assert.equal(w.peakToTrough, 4);
  // A given day instead of the busiest one.
  const d0 = traceWindows(path, 4, { day: '2024-05-10' });
  assert.deepEqual(d0.span, { kind: 'day', day: '2024-05-10', busiest: false });
  assert.deepEqual(d0.multipliers, [1, 1, 1, 1]);
});

test('a day the trace does not cover, a malformed day, or a day on a trace without dates is a UserError', () => {
  const path = azureTrace([flat(1)]);
  assert.throws(() => traceWindows(path, 4, { day: '2024-06-01' }), (e: unknown) => e instanceof UserError && /no requests on that day.*2024-05-10 to 2024-05-10/.test(e.message));
  assert.throws(() => parseDay('--day', '2024-13-01'), (e: unknown) => e instanceof UserError && /YYYY-MM-DD/.test(e.message));
  assert.throws(() => parseDay('--day', 'monday'), UserError);
  const rel = writeTrace([{ t: 0, in: 1, out: 1 }, { t: 5, in: 1, out: 1 }]);
  assert.throws(() => traceWindows(rel, 4, { day: 'busiest' }), (e: unknown) => e instanceof UserError && /without absolute timestamps/.test(e.message));
  // Without a day, a relative-time trace replays its span.
  assert.deepEqual(traceWindows(rel, 2).multipliers, [1, 1]);
});
