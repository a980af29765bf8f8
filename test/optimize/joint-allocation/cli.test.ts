import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
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
  assert.match(s.stderr, /--solver: expected one of milp, gh, agh, agh-a2, lpr, dvr, hf/);
  const c = cli(['--generate', '3,3,3', '--solver', 'gh', '--sim-check', 'soon']);
  assert.equal(c.status, 2);
  assert.match(c.stderr, /--sim-check: expected a number ≥ 1 and ≤ 604800 \(seconds of arrivals: .*\), got "soon"/);
  const w = cli(['--generate', '3,3,3', '--solver', 'milp', '--warm-start', 'gh']);
  assert.equal(w.status, 2);
  assert.match(w.stderr, /--warm-start: expected one of agh, none, got "gh"/);
  const g = cli(['--generate', '3,3,3', '--solver', 'agh', '--warm-start', 'none']);
  assert.equal(g.status, 2);
  assert.match(g.stderr, /--warm-start: only for --solver milp, not --solver agh/);
  const lw = cli(['--generate', '3,3,3', '--solver', 'gh', '--agh-lp-work', '1e9']);
  assert.equal(lw.status, 2);
  assert.match(lw.stderr, /--agh-lp-work: only for --solver agh or milp \(its start\), not --solver gh/);
  const st = cli(['study', 'runtime', '--warm-start', 'none']);
  assert.equal(st.status, 2);
  assert.match(st.stderr, /--warm-start: only for plan study optimality, not plan study runtime/);
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

test('llmfleet plan prints (8i)/(8j) and the per-served-query delay and error, flags types over their SLO, and "-" for an unserved type', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const m = cli(['--generate', '3,3,3', '--seed', '1', '--solver', 'milp', '--time-limit', '20']);
  assert.equal(m.status, 0, m.stderr);
  assert.match(m.stdout, /^per type: delay\/Δ and error\/ε as \(8i\)\/\(8j\) weigh them \(by served share\); per served query: their mean over served queries$/m);
  assert.match(m.stdout, /^ {2}math-solving +served {2}55\.1 % {2}delay 5\.51\/8\.59 s {2}error 0\.0291\/0\.0291 {2}per served query 10\.00 s, 0\.0528 {2}over SLO: delay, error$/m);
  assert.match(m.stdout, /^ {2}summarization +served 100\.0 % {2}delay 1\.98\/6\.12 s {2}error 0\.0505\/0\.0523 {2}per served query 1\.98 s, 0\.0505$/m);
  assert.match(m.stdout, /^note: served queries over their SLO on average: math-solving \(55\.1 % served\) delay 10\.00 s > Δ 8\.59 s/m);
  const d = cli(['--generate', '3,3,3', '--seed', '1', '--solver', 'dvr', '--bound-time-limit', '0', '--out', dir]);
  assert.equal(d.status, 0, d.stderr);
  assert.match(d.stdout, /^ {2}math-solving +served {3}0\.0 % {2}delay -\/8\.59 s {2}error -\/0\.0291 {2}per served query -$/m);
  const t = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')).perType.find((x: { type: string }) => x.type === 'math-solving');
  assert.deepEqual([t.served, t.delayS, t.error, t.delayPerServedS, t.errorPerServed, t.servedOverSlo], [0, null, null, null, null, []]);
});

test('llmfleet plan --out: a run without --sim-check leaves no sim-check output of an earlier run (files of the user kept)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const args = ['--generate', '3,3,3', '--seed', '2', '--solver', 'gh', '--bound-time-limit', '0', '--out', dir];
  assert.equal(cli([...args, '--sim-check', '10']).status, 0);
  assert.ok(existsSync(join(dir, 'sim-check.json')) && existsSync(join(dir, 'sim-check', 'trace.csv')));
  const r = cli(args);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!existsSync(join(dir, 'sim-check.json')), 'stale sim-check.json');
  assert.ok(!existsSync(join(dir, 'sim-check')), 'stale sim-check/');
  assert.ok(existsSync(join(dir, 'plan.json')) && existsSync(join(dir, 'problem.json')) && existsSync(join(dir, 'fleet.yaml')));
  assert.equal(cli([...args, '--sim-check', '10']).status, 0);
  writeFileSync(join(dir, 'sim-check', 'mine.txt'), 'x');
  assert.equal(cli(args).status, 0);
  assert.deepEqual(readdirSync(join(dir, 'sim-check')), ['mine.txt']);
  assert.ok(!existsSync(join(dir, 'sim-check.json')));
});

test('llmfleet plan: a zero-rate type is exit 2 naming the field; an infeasible heuristic plan prints the MILP diagnosis; the exit status is documented', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-cli-'));
  const example = readFileSync('scenarios/plan-example.yaml', 'utf8');
  const zero = join(dir, 'zero.yaml');
  writeFileSync(zero, example.replace(/arrivalsPerHour: \d+/g, 'arrivalsPerHour: 0'));
  oneLine(cli(['--problem', zero, '--solver', 'milp']), /zero\.yaml:\d+ types\[0\]\.arrivalsPerHour: expected > 0 arrivals per hour .*remove it from types\), got 0$/, 'zero demand');
  const tight = join(dir, 'tight.yaml');
  writeFileSync(tight, example.replace(/^budgetUsd: .*$/m, 'budgetUsd: 1').replace(/unservedCap: 1/g, 'unservedCap: 0'));
  const h = cli(['--problem', tight, '--solver', 'agh', '--bound-time-limit', '10']);
  assert.equal(h.status, 0, h.stderr); // a solved problem, infeasible: exit 0 (documented in --help)
  assert.match(h.stdout, /^solver agh {2}status infeasible .*\ninfeasible: relaxing any one of \[unserved-cap, budget\] restores feasibility/);
  assert.match(cli(['--help']).stdout, /Exit status: 0 whenever the solve ran, whatever the plan's status \(infeasible and time-limit included/);
});
