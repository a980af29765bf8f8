import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, realpathSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';

// Bad input exits 2 with one line `llmfleet: …` naming the file (as an absolute path) or the flag; never a stack
// trace, never a hang. The timeout only stops a hung run (the test then fails on its exit status), it times nothing.
const cli = runCli;
const tmp = () => realpathSync(mkdtempSync(join(tmpdir(), 'llmfleet-errors-')));
const oneLine = refusedInOneLine;

test('an --out under /proc exits 2 with one line instead of looping forever in mkdir', { skip: !existsSync('/proc/self') && 'no /proc' }, () => {
  const cases: [string[], string][] = [
    [['simulate', '--set', 'workload.transforms.limit=100', '--no-report', '--quiet'], '/proc/llmfleet-test-x/y'],
    [['plan', '--generate', '2,2,2', '--solver', 'gh', '--bound-time-limit', '0'], '/proc/llmfleet-test-x'],
  ];
  for (const [args, out] of cases) {
    const err = oneLine(cli([...args, '--out', out]), args[0]!);
    assert.ok(err.startsWith(`llmfleet: --out ${out}: cannot write there: `), err);
  }
});

// Root passes access(W_OK) everywhere; sysfs still refuses new files. As root, the old check let calibrate run its
// whole fit, print it, and fail on calibration.json without naming --out (simulate on summary.json alike).
test('an --out that passes access(W_OK) but takes no files (/sys/kernel) is refused up front, before any work or output', { skip: !existsSync('/sys/kernel') && 'no /sys' }, () => {
  const cases: string[][] = [['calibrate'], ['calibrate', '--steps'], ['simulate', '--set', 'workload.transforms.limit=50', '--no-report', '--quiet']];
  for (const args of cases) {
    const r = cli([...args, '--out', '/sys/kernel']);
    assert.equal(oneLine(r, args.join(' ')), 'llmfleet: --out /sys/kernel: cannot write there: permission denied\n');
    assert.equal(r.stdout, '', `${args.join(' ')}: nothing printed before the refusal`);
  }
});

test('the --out write check leaves nothing behind in the folder', () => {
  const out = tmp();
  const r = cli(['calibrate', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(readdirSync(out), ['calibration.json']);
});

test('an --out several levels below an existing folder is made level by level', () => {
  const out = join(tmp(), 'a', 'b', 'c');
  const r = cli(['simulate', '--set', 'workload.transforms.limit=50', '--no-report', '--quiet', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(statSync(join(out, 'summary.json')).isFile());
});

test('argument-parser errors are one line with the llmfleet: prefix and exit 2', () => {
  const r = cli(['simulate', '--sede', '7']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, "llmfleet: unknown option '--sede' (did you mean --seed?); run with --help for usage\n");
  assert.equal(r.stdout, '');
  const cases: [string[], RegExp][] = [
    [['bogus'], /^llmfleet: unknown command 'bogus'; run with --help for usage\n$/],
    [['simulate', 'extra-arg'], /^llmfleet: too many arguments for 'simulate'\. Expected 0 arguments but got 1; run with --help for usage\n$/],
    [['simulate', '--engine', 'bogus'], /^llmfleet: option '--engine <mode>' argument 'bogus' is invalid\. Allowed choices are fast, step; run with --help for usage\n$/],
    [['simulate', '--trace-format', 'bogus'], /^llmfleet: option '--trace-format <format>' argument 'bogus' is invalid\. Allowed choices are .*; run with --help for usage\n$/],
    [['plan', '--seed'], /^llmfleet: option '--seed <n>' argument missing; run with --help for usage\n$/],
  ];
  for (const [args, err] of cases) assert.match(oneLine(cli(args), args.join(' ')), err);
});

test('--help still prints the usage on stdout and exits 0', () => {
  for (const args of [['--help'], ['simulate', '--help'], ['help', 'plan']]) {
    const r = cli(args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /^Usage: llmfleet/, args.join(' '));
    assert.equal(r.stderr, '');
  }
});

test('files given by a relative path are named by their absolute path in errors', () => {
  const dir = tmp();
  copyFileSync('scenarios/default.yaml', join(dir, 'not-a-problem.yaml'));
  assert.equal(oneLine(cli(['simulate', '--scenario', 'nope.yaml'], dir), 'scenario'), `llmfleet: ${dir}/nope.yaml: no such scenario file\n`);
  assert.equal(oneLine(cli(['compare', '--scenario', 'nope.yaml'], dir), 'compare'), `llmfleet: ${dir}/nope.yaml: no such scenario file\n`);
  const problem = oneLine(cli(['plan', '--problem', 'not-a-problem.yaml'], dir), 'problem');
  assert.ok(problem.startsWith(`llmfleet: ${dir}/not-a-problem.yaml budgetUsd: `), problem);
  assert.ok(oneLine(cli(['plan', '--problem', 'nope.yaml'], dir), 'missing problem').startsWith(`llmfleet: ${dir}/nope.yaml: `));
  assert.equal(oneLine(cli(['plan', 'study', 'robustness', '--trace', 'nope.csv'], dir), 'robustness trace'), `llmfleet: ${dir}/nope.csv: file not found\n`);
  assert.ok(oneLine(cli(['forecast', '--series', 'nope.csv', '--horizon', '3', '--out', join(dir, 'f')], dir), 'series').startsWith(`llmfleet: ${dir}/nope.csv: `));
  assert.equal(oneLine(cli(['calibrate', '--steps', 'nope.csv', '--out', join(dir, 'c')], dir), 'steps'), `llmfleet: --steps ${dir}/nope.csv: file not found\n`);
  assert.ok(oneLine(cli(['serve', '--config', 'nope.yaml'], dir), 'serve').startsWith(`llmfleet: ${dir}/nope.yaml: `));
});

test('llmfleet --version prints the package version and exits 0 (it was an unknown option, exit 2)', () => {
  const r = cli(['--version']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
});

test('a trace that is a symbolic link to nowhere (a loop, a dangling link) is named as such, not "file not found"', () => {
  const dir = tmp();
  symlinkSync(join(dir, 'b'), join(dir, 'a'));
  symlinkSync(join(dir, 'a'), join(dir, 'b'));
  symlinkSync(join(dir, 'gone.csv'), join(dir, 'dangling'));
  for (const name of ['a', 'dangling']) {
    assert.equal(oneLine(cli(['simulate', '--trace', join(dir, name), '--out', join(dir, 'o')], dir), name), `llmfleet: workload.trace.path: ${join(dir, name)}: a symbolic link that leads to no file (dangling, or a loop)\n`);
  }
});
