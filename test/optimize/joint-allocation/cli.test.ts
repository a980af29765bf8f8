import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
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

/** Exit 2 and exactly one stderr line matching `msg` (no stack, no minified HiGHS source). */
function oneLine(r: ReturnType<typeof cli>, msg: RegExp, what: string): void {
  assert.equal(r.status, 2, `${what}: ${r.stderr.slice(0, 500)}`);
  assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: ${r.stderr.slice(0, 500)}`);
  assert.ok(r.stderr.length < 1000, `${what}: ${r.stderr.length} characters on stderr`);
  assert.match(r.stderr.trim(), msg, what);
}

test('llmfleet plan: out-of-range magnitudes are one line and exit 2 for every solver; so is a model HiGHS refuses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const gen = cli(['--generate', '2,2,2', '--solver', 'gh', '--bound-time-limit', '0', '--out', dir]);
  assert.equal(gen.status, 0, gen.stderr);
  const problem = JSON.parse(readFileSync(join(dir, 'problem.json'), 'utf8'));
  const write = (name: string, patch: (q: typeof problem) => void) => {
    const q = structuredClone(problem);
    patch(q);
    const f = join(dir, name);
    writeFileSync(f, JSON.stringify(q, null, 2));
    return f;
  };
  const huge = write('huge.json', (q) => { q.types[0].arrivalsPerHour = 1e19; });
  for (const solver of ['milp', 'lpr', 'hf', 'gh', 'agh']) {
    oneLine(cli(['--problem', huge, '--solver', solver]), /^llmfleet: .*huge\.json:\d+ types\[0\]\.arrivalsPerHour: expected ≤ 1000000000000, got 10000000000000000000$/, solver);
  }
  // Within every cap and floor, but a combination gives a compute coefficient ≥ 1e15 (a tier at the 1e-3 TFLOPS floor,
  // η at its 1e-3 floor, λ at its 1e12 cap): HiGHS cannot load the model.
  const slow = write('slow.json', (q) => { q.tiers[0].tflops = 1e-3; q.eta = 1e-3; q.types[0].arrivalsPerHour = 1e12; });
  oneLine(cli(['--problem', slow, '--solver', 'milp']), /^llmfleet: HiGHS could not load the model: passModel failed .*; HiGHS accepts coefficients below 1e\+15/, 'milp slow');
  // A heuristic keeps its plan and notes the skipped bound.
  const hOut = join(dir, 'h');
  const h = cli(['--problem', slow, '--solver', 'gh', '--out', hOut]);
  assert.equal(h.status, 0, h.stderr);
  // --problem writes the problem as planned too, so no problem.json of an earlier run is left beside the new plan.
  assert.deepEqual(JSON.parse(readFileSync(join(hOut, 'problem.json'), 'utf8')), JSON.parse(readFileSync(slow, 'utf8')));
  assert.match(h.stdout, /^solver gh {2}status feasible {2}objective \$/);
  assert.match(h.stdout, /note: bound skipped: HiGHS could not load the model/);
  const tp3 = write('tp3.json', (q) => { q.tpDegrees = [3]; });
  oneLine(cli(['--problem', tp3, '--solver', 'gh']), /tp3\.json:\d+ tpDegrees\[0\]: expected one of 1, 2, 4, 8, got 3/, 'tp3');
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, '');
  oneLine(cli(['--problem', empty]), /empty\.json: expected a mapping of the problem's fields .*, but the document is empty/, 'empty');
  const cut = join(dir, 'cut.json');
  writeFileSync(cut, readFileSync(join(dir, 'problem.json'), 'utf8').slice(0, 300));
  oneLine(cli(['--problem', cut]), /cut\.json:\d+: expected valid JSON, got /, 'truncated');
});

test('llmfleet plan: the exact solvers refuse an instance too large for the MILP up front; heuristics skip the bound with a note', () => {
  for (const solver of ['milp', 'lpr', 'hf']) {
    const t0 = Date.now();
    oneLine(cli(['--generate', '100,100,100', '--solver', solver, '--time-limit', '5']),
      new RegExp(`^llmfleet: --solver ${solver}: the instance is too large for the exact model: its MILP \\((paper|compact) encoding\\) would have 14,140,100 variables .*; use --solver agh or gh`), solver);
    assert.ok(Date.now() - t0 < 20_000, `${solver} took ${Date.now() - t0} ms`);
  }
  oneLine(cli(['--generate', '100,100,100', '--solver', 'gh', '--write-lp', join(tmpdir(), 'never.lp')]), /^llmfleet: --write-lp: the instance is too large .*; leave out --write-lp/, 'write-lp');
  oneLine(cli(['study', 'runtime', '--sizes', '4,4,5;40,40,40']), /^llmfleet: --sizes 40,40,40: the instance is too large for the exact model/, 'study sizes');
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const r = cli(['--generate', '100,100,100', '--solver', 'gh', '--out', dir]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^solver gh {2}status feasible {2}objective \$[\d.]+/);
  assert.match(r.stdout, /note: bound skipped: the MILP would have 14,140,100 variables and [\d,]+ nonzeros \(limits 300,000 and 4,000,000\); use --bound-time-limit 0 to silence this note/);
  assert.equal(JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')).size.I, 100);
  for (const size of ['1001,2,2', '300,300,300']) {
    oneLine(cli(['--generate', size, '--solver', 'gh']), /--generate: expected each of I,J,K ≤ 1000 and I·J·K ≤ 10000000/, size);
  }
});

test('a plan without a solution prints "objective none (…)", not "$-"', async () => {
  const { describeObjective } = await import('../../../src/cli/commands/plan.ts');
  assert.equal(describeObjective({ objective: null, status: 'time-limit' }), 'none (no feasible plan found within the time limit)');
  assert.equal(describeObjective({ objective: null, status: 'infeasible' }), 'none (no feasible plan found)');
  assert.equal(describeObjective({ objective: 12.345, status: 'optimal' }), '$12.35');
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const p = JSON.parse(JSON.stringify((await import('../../../src/optimize/joint-allocation/generate.ts')).generateProblem(2, 2, 2, 1)));
  for (const t of p.types) Object.assign(t, { errorSlo: 0, unservedCap: 0 });
  writeFileSync(join(dir, 'bad.json'), JSON.stringify(p));
  const r = cli(['--problem', join(dir, 'bad.json'), '--solver', 'milp', '--time-limit', '10']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^solver milp {2}status infeasible {2}objective none \(no feasible plan found\) {2}solve/);
});
