import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';

const out = () => join(mkdtempSync(join(tmpdir(), 'llmfleet-capacity-')), 'o');
const small = ['--set', 'workload.transforms.limit=3000'];

test('capacity finds the load factor where the default fleet stops meeting 99 %, as simulate judges it', () => {
  const dir = out();
  const r = runCli(['capacity', ...small, '--max-runs', '8', '--tolerance', '0.1', '--out', dir]);
  assert.equal(r.status, 0, r.stderr);
  const c = JSON.parse(readFileSync(join(dir, 'capacity.json'), 'utf8'));
  assert.equal(c.knob, 'load');
  assert.equal(c.target, 0.99);
  assert.ok(c.probes.length <= 8);
  assert.ok(c.best.meets && c.best.attainment >= 0.99);
  assert.ok(c.bracket.fails > c.best.value, 'the bracket closes above the answer');
  const miss = c.probes.find((p: { value: number }) => p.value === c.bracket.fails);
  assert.ok(miss.attainment < 0.99);
  assert.match(r.stdout, /^capacity at 99\.00%: ×[0-9.]+ the scenario's load, [0-9.]+ req\/s, [0-9.]+ req\/s per GPU/);
  // The answer's probe is the run simulate makes at that compress factor.
  const sim = out();
  const s = runCli(['simulate', ...small, '--set', `workload.transforms.compress=${c.best.value}`, '--no-report', '--quiet', '--out', sim]);
  assert.equal(s.status, 0, s.stderr);
  assert.equal(JSON.parse(readFileSync(join(sim, 'summary.json'), 'utf8')).slo.attainment, c.best.attainment);
});

test('capacity --pool finds the fewest instances, one fewer missing the target', () => {
  const dir = out();
  const r = runCli(['capacity', ...small, '--set', 'workload.transforms.compress=6', '--pool', 'h100', '--out', dir, '--quiet']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '');
  const c = JSON.parse(readFileSync(join(dir, 'capacity.json'), 'utf8'));
  assert.equal(c.knob, 'count');
  assert.equal(c.pool, 'h100');
  assert.ok(c.converged);
  assert.ok(c.best.value >= 2, `six times the load needs more than one instance: ${c.best.value}`);
  assert.equal(c.bracket.fails, c.best.value - 1);
  assert.equal(c.best.gpus, c.best.value);
});

test('capacity refuses bad flags in one line', () => {
  const cases: [string[], RegExp][] = [
    [['--target', '150%'], /--target: expected an SLO attainment in \(0, 1\]/],
    [['--pool', 'nope'], /--pool nope: expected a pool of the scenario: h100/],
    [['--tolerance', '0'], /--tolerance: expected a fraction in \(0, 1\]/],
    [['--max-runs', '0'], /--max-runs: expected an integer from 1 to 1000/],
    [['--pool', 'h100', '--set', 'scaling.policy=reactive'], /scaling\.policy is reactive.*--set scaling\.policy=none/],
  ];
  for (const [args, message] of cases) assert.match(refusedInOneLine(runCli(['capacity', ...args, '--out', out()]), args.join(' ')), message);
});
