import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UserError } from '../../src/util/errors.ts';
import { run, scenarioFor, writeTrace } from '../helpers/sim.ts';
import { nextGridPoint } from '../../src/sim/simulator.ts';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

test('a scaling interval too short for the run stops with a UserError naming scaling.intervalS instead of hanging', () => {
  const trace = writeTrace([{ t: 0, in: 10, out: 2 }, { t: 5000, in: 10, out: 2 }]);
  // At t ≈ 5000 s, 1e-12 s no longer advances the clock: the scaling tick would fire at one instant for ever.
  const sc = scenarioFor(trace, { scaling: { policy: 'reactive', intervalS: 1e-12 } });
  assert.throws(() => run(sc, 'fast'), (e: unknown) => e instanceof UserError && /scaling\.intervalS/.test(e.message));
  // A sane interval over the same trace runs.
  const ok = run(scenarioFor(trace, { scaling: { policy: 'reactive', intervalS: 1 } }), 'fast');
  assert.equal(ok.log.n, 2);
});

test('nextGridPoint is strictly after t even where floor(t / period) + 1 lands on t (4.3 / 0.1 = 42.99…)', () => {
  assert.equal((Math.floor(4.3 / 0.1) + 1) * 0.1, 4.3); // the case that looped
  for (const period of [0.1, 0.2, 0.3, 0.7, 1 / 3, 30]) {
    for (let i = 0; i < 2000; i++) {
      const t = i * 0.1;
      const next = nextGridPoint(t, period);
      assert.ok(next > t && next <= t + period * (1 + 1e-9), `period ${period}, t ${t}: ${next}`);
    }
  }
});

// Through the CLI in a child process with a timeout: on the code before the fix both runs looped for ever, which no
// in-process timeout can interrupt (the simulation is synchronous).
const simulateCli = (trace: string, sets: string[]) => {
  const out = join(mkdtempSync(join(tmpdir(), 'llmfleet-ticks-')), 'o');
  return spawnSync(process.execPath, ['bin/llmfleet.js', 'simulate', '--trace', trace, ...sets.flatMap((x) => ['--set', x]), '--no-report', '--quiet', '--out', out], { encoding: 'utf8', timeout: 60_000 });
};

test('the periodic signal of the SageServe router at 0.1 s ends (it was rescheduled at 4.3 s for ever); below 1 ms is refused', () => {
  const trace = writeTrace(Array.from({ length: 300 }, (_, i) => ({ t: i * 0.01, in: 4000, out: 500, tier: 'niw', deadline: 86_400 })));
  const sets = ['endS=10', 'routing.policy=sageserve'];
  const r = simulateCli(trace, [...sets, 'routing.options.niwSignalIntervalS=0.1']);
  assert.equal(r.status, 0, `${r.signal ?? ''} ${r.stderr}`);
  const tiny = simulateCli(trace, [...sets, 'routing.options.niwSignalIntervalS=1e-20']);
  assert.equal(tiny.status, 2, tiny.stderr);
  assert.match(tiny.stderr, /routing\.options\.niwSignalIntervalS: expected ≥ 0\.001, got 1e-20\n$/);
});

test('Llumnix migration polls through a long idle gap in one step (it stepped every 0.05 s), and below 1 ms is refused', () => {
  const trace = writeTrace([{ t: 0, in: 100, out: 10 }, { t: 9e9, in: 100, out: 10 }]);
  // With the default timeline interval (60 s) the polls and the samples also held each other back (each stepped to
  // the other): an event every 60 s through 9e9 s.
  const sets = ['routing.policy=llumnix', 'routing.options.migration.enabled=true'];
  const r = simulateCli(trace, sets);
  assert.equal(r.status, 0, `${r.signal ?? ''} ${r.stderr}`);
  const res = run(scenarioFor(trace, { routing: { policy: 'llumnix', options: { migration: { enabled: true } } } }), 'fast');
  assert.equal(res.log.n, 2);
  assert.ok(res.events < 100_000, `${res.events} events`);
  const tiny = simulateCli(trace, [...sets, 'routing.options.migration.intervalS=1e-300']);
  assert.equal(tiny.status, 2, tiny.stderr);
  assert.match(tiny.stderr, /routing\.options\.migration\.intervalS: expected ≥ 0\.001, got 1e-300\n$/);
});
