import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// Bad values of `plan` / `plan study` flags (fuzz review D2–D5, D10, D22): exit 2 and one line naming the flag, before
// any work — never a stack trace, a HiGHS source dump, a hang, an out-of-memory or a silently ignored value. The old
// code crashed, hung or ran on with these; the 60-s timeout turns a hang into a failure (status null).
const BIN = resolve('bin/llmfleet.js');
const cli = (args: string[], cwd = process.cwd()) => spawnSync(process.execPath, [BIN, 'plan', ...args], { encoding: 'utf8', timeout: 60_000, cwd });

function refused(args: string[], msg: RegExp, cwd?: string): void {
  const r = cli(args, cwd);
  const what = args.join(' ');
  assert.equal(r.status, 2, `${what}: exit ${r.status} (signal ${r.signal}): ${r.stderr.slice(0, 500)}`);
  assert.match(r.stderr, /^llmfleet: [^\n]+\n$/, `${what}: one line: ${JSON.stringify(r.stderr.slice(0, 500))}`);
  assert.match(r.stderr, msg, what);
  assert.equal(r.stdout, '', `${what}: no study or plan output`);
}

const ROBUST = ['study', 'robustness', '--sizes', '2,2,2', '--trace', 'none', '--scenarios', '2', '--trials', '1'];

test('D2: plan study robustness --sigmas is bounded to [0, 0.2] and the error names --sigmas', () => {
  // 1e308: uncaught HighsValidationError with 170 KB of minified source; 5: "HiGHS could not load the model", no flag named.
  for (const v of ['1e308', '5', '0.21', '-0.01', 'NaN', '']) {
    refused([...ROBUST, '--sigmas', v], new RegExp(`^llmfleet: --sigmas: expected (a number ≥ 0 and ≤ 0\\.2 \\(GRW volatilities|comma-separated numbers ≥ 0 and ≤ 0\\.2).*got "${v}"\\n$`));
  }
});

test('D3: plan study robustness --budgets is bounded by the problem files\' budgetUsd limit (1e12)', () => {
  // 1e308: RangeError: solveDenseLp: b[6] = NaN with a stack trace, after the other tables had printed.
  refused([...ROBUST, '--budgets', '50,1e308'], /^llmfleet: --budgets: expected a number ≥ 0 and ≤ 1e12 \(δ in \$.*\), got "1e308"\n$/);
  refused([...ROBUST, '--budgets', '1000000000001'], /--budgets: expected a number ≥ 0 and ≤ 1e12/);
});

test('D4: plan --sim-check is bounded (one week, 200,000 requests) before the solve', () => {
  // 1e8: JavaScript heap out of memory (every arrival built in memory); 1e308: never ended.
  for (const v of ['1e8', '1e308', '604801']) {
    refused(['--problem', 'scenarios/plan-example.yaml', '--bound-time-limit', '0', '--sim-check', v],
      new RegExp(`^llmfleet: --sim-check: expected a number ≥ 1 and ≤ 604800 \\(seconds of arrivals: at most one week, and 200,000 requests\\), got "${v}"\\n$`));
  }
  // Within a week, but more requests than a check simulates at the problem's demand: the longest span that fits.
  refused(['--problem', 'scenarios/plan-example.yaml', '--bound-time-limit', '0', '--sim-check', '600000'],
    /^llmfleet: --sim-check 600000: the problem's arrivals \(15\.5 per s\) give ≈ 9,299,167 requests in 600000 s, more than the 200,000 a check simulates; use --sim-check 12904 or less\n$/);
});

test('D5: plan study counts are capped (--scenarios ≤ 10000, --trials ≤ 100, --seeds ≤ 1000) and an empty one is not ignored', () => {
  refused(['study', 'robustness', '--sizes', '2,2,2', '--trace', 'none', '--scenarios', '1000000000'], /^llmfleet: --scenarios: expected an integer ≥ 1 and ≤ 10000 \(.*\), got "1000000000"\n$/);
  refused(['study', 'robustness', '--sizes', '2,2,2', '--trace', 'none', '--trials', '100000000'], /^llmfleet: --trials: expected an integer ≥ 1 and ≤ 100 \(.*\), got "100000000"\n$/);
  refused(['study', 'optimality', '--sizes', '2,2,2', '--seeds', '100000000', '--time-limit', '1'], /^llmfleet: --seeds: expected an integer ≥ 1 and ≤ 1000 \(.*\), got "100000000"\n$/);
  // `--trials ""` and `--seeds ""` were skipped as absent (the defaults ran).
  refused([...ROBUST.slice(0, -2), '--trials', ''], /^llmfleet: --trials: expected an integer .*, got ""\n$/);
  refused(['study', 'optimality', '--sizes', '2,2,2', '--seeds', '', '--time-limit', '1'], /^llmfleet: --seeds: expected an integer .*, got ""\n$/);
  refused(['study', 'optimality', '--sizes', '2,2,2', '--seeds', '1.5'], /--seeds: expected an integer/);
  refused([...ROBUST.slice(0, -4), '--scenarios', '0'], /--scenarios: expected an integer ≥ 1/);
});

test('D10: an empty --out or --write-lp is refused naming the flag (it wrote nothing, exit 0); nothing lands in the current folder', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'plan-empty-'));
  const example = resolve('scenarios/plan-example.yaml');
  refused(['--generate', '2,2,2', '--out', ''], /^llmfleet: --out: expected a non-empty folder .*, got ''\n$/, cwd);
  refused(['--problem', example, '--write-lp', ''], /^llmfleet: --write-lp: expected a non-empty file .*, got ''\n$/, cwd);
  refused(['--generate', '2,2,2', '--out', ' '], /^llmfleet: --out: expected a non-empty folder .*, got ' '\n$/, cwd);
  refused([...ROBUST, '--out', ''], /^llmfleet: --out: expected a non-empty folder to write study-<name>\.json into, got ''\n$/, cwd);
  assert.deepEqual(readdirSync(cwd), []);
});

test('D22: --write-lp naming a folder is one line naming the flag (was a bare EISDIR)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-lpdir-'));
  mkdirSync(join(dir, 'm.lp'));
  refused(['--generate', '2,2,2', '--solver', 'gh', '--write-lp', join(dir, 'm.lp')], /^llmfleet: --write-lp .*m\.lp: expected a file to write, got a folder\n$/);
  refused(['--generate', '2,2,2', '--solver', 'gh', '--write-lp', dir], /^llmfleet: --write-lp .*: expected a file to write, got a folder\n$/);
});

test('other plan numbers: "" is not 0, hex is not decimal, a seed stays an exact integer, lists and stresses are bounded', () => {
  // `--seed ""` and `--bound-time-limit ""` ran as 0; `--seed 0x10` as 16; `--seed 1e308` was taken.
  for (const v of ['', ' ', '0x10', '1e308', '1.5', '9007199254740992']) {
    refused(['--generate', '2,2,2', '--solver', 'gh', '--seed', v], new RegExp(`^llmfleet: --seed: expected an integer ≥ -9007199254740991 and ≤ 9007199254740991, got ${JSON.stringify(JSON.stringify(v)).slice(1, -1)}\\n$`));
  }
  refused(['--generate', '2,2,2', '--bound-time-limit', ''], /^llmfleet: --bound-time-limit: expected a number ≥ 0 and ≤ 604800 \(.*\), got ""\n$/);
  refused(['--generate', '2,2,2', '--solver', 'milp', '--time-limit', '-1'], /^llmfleet: --time-limit: expected a number ≥ 0\.1 and ≤ 604800 \(.*\), got "-1"\n$/);
  refused(['study', 'runtime', '--seed', ''], /^llmfleet: --seed: expected an integer/);
  // --stresses 1e308: "HiGHS could not load the model … |coefficient| 1.1e+308", no flag named.
  refused([...ROBUST, '--stresses', '1e308'], /^llmfleet: --stresses: expected a number ≥ 0\.01 and ≤ 100 \(delay\/error multipliers\), got "1e308"\n$/);
  refused([...ROBUST, '--caps', '1e308'], /^llmfleet: --caps: each cap is a share of a type's demand in \[0, 1\]/);
  refused([...ROBUST, '--stresses', Array(101).fill('1').join(',')], /^llmfleet: --stresses: expected at most 100 values, got 101\n$/);
  refused(['study', 'runtime', '--sizes', Array(101).fill('2,2,2').join(';')], /^llmfleet: --sizes: expected at most 100 sizes, got 101\n$/);
  // `--sizes ""` ran the six default sizes; `--trace ""` read the current folder as the trace; `--problem ""` was absent.
  refused(['study', 'runtime', '--sizes', ''], /^llmfleet: --sizes: expected I,J,K \(three positive integers\), got ""\n$/);
  refused(['study', 'robustness', '--sizes', '2,2,2', '--trace', ''], /^llmfleet: --trace: expected a non-empty trace file or "none", got ''\n$/);
  refused(['--problem', '', '--generate', '2,2,2'], /^llmfleet: --problem: expected a non-empty problem file \(YAML or JSON\), got ''\n$/);
  refused(['--problem', 'scenarios/plan-example.yaml', '--generate', ''], /^llmfleet: plan: give exactly one of --problem FILE or --generate I,J,K\n$/);
});

test('a misspelled `study` is pointed at the study named after it ("plan stduy runtime" suggested "plan study stduy")', () => {
  refused(['stduy', 'runtime'], /^llmfleet: plan: unexpected argument "stduy" \(did you mean "plan study runtime"\?\)\n$/);
  refused(['runtime'], /^llmfleet: plan: unexpected argument "runtime" \(did you mean "plan study runtime"\?\)\n$/);
});

test('a flag the chosen solver would ignore is refused: --time-limit without a MILP, --bound-time-limit with the MILP, --encoding without one', () => {
  const gen = ['--generate', '3,3,3'];
  for (const solver of ['gh', 'agh', 'agh-a2', 'dvr']) {
    refused([...gen, '--solver', solver, '--time-limit', '5'], new RegExp(`^llmfleet: --time-limit: only for the solvers that run a MILP \\(milp, lpr, hf\\), not --solver ${solver} `));
    refused([...gen, '--solver', solver, '--encoding', 'compact'], new RegExp(`^llmfleet: --encoding: only for --solver milp and --write-lp .*, not --solver ${solver}\\n$`));
  }
  refused([...gen, '--solver', 'milp', '--bound-time-limit', '5'], /^llmfleet: --bound-time-limit: only for the heuristics and baselines .*, not --solver milp\n$/);
});
