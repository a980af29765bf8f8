import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = (args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', 'plan', ...args], { encoding: 'utf8', timeout: 60_000 });

// Each case also carries a bad --sizes, so that without the check the command fails fast on that instead of
// running a study: the assertion is on which flag the one-line error names.
test('plan study refuses the flags only one plan reads (it would ignore them) with exit 2 and one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-flags-'));
  const cases: [string[], RegExp][] = [
    [['study', 'sensitivity', '--problem', 'scenarios/plan-example.yaml', '--sizes', '0,1,1'], /^llmfleet: --problem: only for plan \(one plan\), not plan study sensitivity\n$/],
    [['study', 'runtime', '--solver', 'milp', '--sizes', '0,1,1'], /^llmfleet: --solver: only for plan \(one plan\), not plan study runtime\n$/],
    [['study', 'optimality', '--encoding', 'compact', '--sizes', '0,1,1'], /^llmfleet: --encoding: only for plan \(one plan\), not plan study optimality\n$/],
    [['study', 'runtime', '--seeds', '3', '--sizes', '0,1,1'], /^llmfleet: --seeds: only for plan study optimality, not plan study runtime\n$/],
    [['study', 'sensitivity', '--time-limit', '5', '--sizes', '0,1,1'], /^llmfleet: --time-limit: only where a MILP is solved, not plan study sensitivity \(AGH only\)\n$/],
    [['study', 'runtime', '--write-lp', join(dir, 'sub', 'm.lp'), '--sizes', '0,1,1'], /^llmfleet: --write-lp: only for plan \(one plan\), not plan study runtime\n$/],
  ];
  for (const [args, err] of cases) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, err, args.join(' '));
  }
  // Refused before any output folder is made.
  assert.equal(existsSync(join(dir, 'sub')), false);
});

test('one plan refuses the study-only flags --sizes and --seeds instead of ignoring them', () => {
  for (const flag of ['--sizes', '--seeds']) {
    const r = cli(['--problem', 'scenarios/plan-example.yaml', '--solver', 'dvr', '--bound-time-limit', '0', flag, flag === '--sizes' ? '2,2,2' : '3']);
    assert.equal(r.status, 2, `${flag}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, `llmfleet: ${flag}: only for plan study, not plan (one plan)\n`);
  }
  // Defaults (--solver agh, --encoding paper, --bound-time-limit 10) are not given flags: a study gets past them.
  const s = cli(['study', 'runtime', '--sizes', '0,1,1']);
  assert.equal(s.status, 2);
  assert.match(s.stderr, /--sizes: expected an integer ≥ 1, got "0"/);
});

test('plan --quiet prints nothing and still writes its files; the same plan without it prints the summary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plan-quiet-'));
  const quiet = cli(['--generate', '3,3,3', '--bound-time-limit', '0', '--quiet', '--out', join(dir, 'q')]);
  assert.equal(quiet.status, 0, quiet.stderr);
  assert.equal(quiet.stdout + quiet.stderr, '');
  for (const f of ['plan.json', 'fleet.yaml', 'problem.json']) assert.ok(existsSync(join(dir, 'q', f)), f);
  const loud = cli(['--generate', '3,3,3', '--bound-time-limit', '0', '--out', join(dir, 'l')]);
  assert.equal(loud.status, 0, loud.stderr);
  assert.match(loud.stdout, /^solver agh {2}status /);
  // Bad input still says why.
  const bad = cli(['--generate', '3,3', '--quiet']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^llmfleet: --generate/);
});
