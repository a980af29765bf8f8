import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = (args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', 'plan', ...args], { encoding: 'utf8' });

test('llmfleet plan --generate writes plan.json with status, objective, breakdown and routing, and --write-lp an LP file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const lp = join(dir, 'm.lp');
  const r = cli(['--generate', '3,3,3', '--seed', '2', '--solver', 'milp', '--time-limit', '20', '--out', dir, '--write-lp', lp, '--sim-check', '20']);
  assert.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8'));
  assert.equal(plan.status, 'optimal');
  assert.equal(typeof plan.objective, 'number');
  assert.equal(typeof plan.solveSeconds, 'number');
  assert.ok(plan.costBreakdown && plan.deployments && plan.routing && plan.perType);
  assert.ok(plan.gap !== null && plan.gap < 1e-3);
  assert.ok(existsSync(join(dir, 'problem.json')));
  assert.match(readFileSync(lp, 'utf8'), /^Minimize[\s\S]*Subject To[\s\S]*Binaries[\s\S]*End/);
  // --sim-check: the plan simulated, one row per served type.
  const check = JSON.parse(readFileSync(join(dir, 'sim-check.json'), 'utf8'));
  assert.equal(check.durationS, 20);
  assert.ok(check.types.length > 0 && check.types.every((t: { requests: number }) => t.requests > 0));
  assert.ok(existsSync(join(dir, 'sim-check', 'scenario.yaml')));
  assert.match(r.stdout, /sim-check: \d+ requests over 20 s/);
});

test('llmfleet plan rejects a bad flag with exit 2 and one line', () => {
  const r = cli(['--generate', '3,3', '--solver', 'agh']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--generate: expected I,J,K/);
  const s = cli(['--problem', 'scenarios/plan-example.yaml', '--solver', 'cplex']);
  assert.equal(s.status, 2);
  assert.match(s.stderr, /--solver: expected one of milp, gh, agh, lpr, dvr, hf/);
  const c = cli(['--generate', '3,3,3', '--solver', 'gh', '--sim-check', 'soon']);
  assert.equal(c.status, 2);
  assert.match(c.stderr, /--sim-check: expected a number ≥ 1, got "soon"/);
});

test('the robustness study checks its replay trace, day and lists before the long stages; its flags elsewhere are exit 2', () => {
  const cases: [string[], RegExp][] = [
    [['study', 'robustness', '--trace', 'no/such/trace.csv'], /no\/such\/trace\.csv/],
    [['study', 'robustness', '--day', '2024-05-14'], /--day 2024-05-14: .* has no requests on that day \(it spans 2023-11-16 to 2023-11-16\)/],
    [['study', 'robustness', '--day', '14/05/2024'], /--day: expected a date YYYY-MM-DD or "busiest"/],
    [['study', 'robustness', '--trace', 'none', '--day', 'busiest'], /--day: no trace to replay/],
    [['study', 'robustness', '--stresses', '1,,1.5'], /--stresses: expected comma-separated numbers/],
    [['study', 'robustness', '--caps', '0.02,1.5'], /--caps: each cap is a share of a type's demand in \[0, 1\]/],
    [['study', 'robustness', '--budgets', 'lots'], /--budgets: expected a number/],
    [['study', 'runtime', '--trace', 'x.csv'], /--trace: only for plan study robustness, not plan study runtime/],
    [['--generate', '3,3,3', '--stresses', '1.5'], /--stresses: only for plan study robustness, not plan \(one plan\)/],
  ];
  for (const [args, msg] of cases) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr); // one line, and no study stage ran (they log progress)
  }
});
