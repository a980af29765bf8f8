import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';

// Bad flag values and bad input files for simulate, compare and forecast: exit 2 with one line `llmfleet: …` naming
// the flag or the file, nothing written. The timeout only stops a hung run (the test then fails on its exit status).
const CONV = resolve('data/azure-llm/AzureLLMInferenceTrace_conv.csv');
const cli = runCli;
const tmp = () => realpathSync(mkdtempSync(join(tmpdir(), 'llmfleet-badflags-')));
/** The refusal's message, without the `llmfleet: ` prefix and the newline. */
const oneLine = (r: ReturnType<typeof cli>, what: string): string => refusedInOneLine(r, what).slice('llmfleet: '.length, -1);

/** A 50-request slice of the Azure conversation trace. */
function smallTrace(dir: string): string {
  const p = join(dir, 'small.csv');
  writeFileSync(p, readFileSync(CONV, 'utf8').split('\r\n').slice(0, 51).join('\r\n') + '\r\n');
  return p;
}

test('an empty --scenario, --trace, --variant, --series or --out is refused naming the flag, and nothing is written to the working folder', () => {
  const cwd = tmp();
  const out = join(tmp(), 'o');
  const trace = smallTrace(tmp());
  const cases: [string[], string][] = [
    [['simulate', '--scenario', '', '--out', out], "--scenario: expected a non-empty scenario file (leave the flag out for the bundled one), got ''"],
    [['simulate', '--trace', '', '--out', out], "--trace: expected a non-empty trace file, got ''"],
    [['simulate', '--trace', '  ', '--out', out], "--trace: expected a non-empty trace file, got '  '"],
    [['simulate', '--variant', '', '--out', out], "--variant: expected a non-empty variant name, got ''"],
    [['simulate', '--trace', trace, '--out', ''], "--out: expected a non-empty output folder, got ''"],
    [['compare', '--scenario', '', '--out', out], "--scenario: expected a non-empty scenario file (leave the flag out for the bundled one), got ''"],
    [['compare', '--trace', '', '--out', out], "--trace: expected a non-empty trace file, got ''"],
    [['compare', '--trace', trace, '--out', ''], "--out: expected a non-empty output folder, got ''"],
    [['compare', '--trace', trace, '--seeds', '2', '--baseline', '', '--out', out], "--baseline: expected a non-empty variant name, got ''"],
    [['forecast', '--trace', trace, '--granularity', '', '--horizon', '2', '--out', out], '--granularity: expected a duration like 1m, 10m, 1h or 60 (seconds), got ""'],
    [['forecast', '--trace', '', '--granularity', '1', '--horizon', '2', '--out', out], "--trace: expected a non-empty trace file, got ''"],
    [['forecast', '--series', '', '--horizon', '2', '--out', out], "--series: expected a non-empty series file, got ''"],
    [['forecast', '--trace', trace, '--granularity', '1', '--horizon', '2', '--out', ''], "--out: expected a non-empty output folder, got ''"],
  ];
  for (const [args, msg] of cases) assert.equal(oneLine(cli(args, cwd), args.join(' ')), msg);
  assert.deepEqual(readdirSync(cwd), [], 'nothing written to the working folder');
});

test('a YAML alias bomb as --scenario or --catalog is one line naming the file, not a ReferenceError stack', () => {
  const dir = tmp();
  let s = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let i = 1, prev = 'a'; i <= 11; prev = `b${i}`, i++) s += `b${i}: &b${i} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
  const bomb = join(dir, 'bomb.yaml');
  writeFileSync(bomb, s + 'fleet:\n  pools:\n    - { model: llama3.1-8b, hardware: h100-80gb, count: 1 }\n');
  const expected = `${bomb}:2: expected valid YAML with at most 100 alias (*name) expansions (nested aliases multiply), got "too many alias expansions"`;
  assert.equal(oneLine(cli(['simulate', '--scenario', bomb, '--out', join(dir, 'o')]), 'simulate'), expected);
  assert.equal(oneLine(cli(['compare', '--scenario', bomb, '--out', join(dir, 'o')]), 'compare'), expected);
  assert.equal(oneLine(cli(['calibrate', '--catalog', bomb, '--out', join(dir, 'o')]), 'calibrate'), expected);
});

test('compare --seeds N refuses seeds past 2^53 − 1, and --seed names the integer typed, not its rounded double', () => {
  const dir = tmp();
  const err = oneLine(cli(['compare', '--seeds', '3', '--seed', '9007199254740991', '--workers', '0', '--out', join(dir, 'o')]), 'compare');
  assert.ok(err.startsWith('--seeds 3: seeds 9007199254740991 to 9007199254740991 + 2 go past 9007199254740991'), err);
  assert.equal(
    oneLine(cli(['simulate', '--seed', '9007199254740993', '--out', join(dir, 'o')]), 'simulate'),
    "--seed: expected an integer from -9007199254740991 to 9007199254740991 (2^53 − 1), got '9007199254740993'",
  );
});

test('a catalog price of 1e308 is refused at its line instead of printing $Infinity', () => {
  const dir = tmp();
  writeFileSync(join(dir, 'cat.yaml'), 'hardware:\n  h100-80gb: { priceUsdPerHour: 1e308 }\n');
  writeFileSync(
    join(dir, 's.yaml'),
    `catalog: cat.yaml\nworkload:\n  trace: { path: ${smallTrace(dir)}, format: azure }\nfleet:\n  pools:\n    - { model: llama3.1-8b, hardware: h100-80gb, count: 1 }\n`,
  );
  assert.equal(oneLine(cli(['simulate', '--scenario', join(dir, 's.yaml'), '--out', join(dir, 'o'), '--no-report']), 'simulate'), `${join(dir, 'cat.yaml')}:2 hardware.h100-80gb.priceUsdPerHour: expected ≤ 1000000, got 1e+308`);
});

test('forecast --types out of range names --types; timestamps that collapse to one double are a precision error, not a sorting one', () => {
  const dir = tmp();
  const trace = smallTrace(dir);
  const f = (...args: string[]) => cli(['forecast', '--trace', trace, '--granularity', '1', '--key', 'type', '--horizon', '2', '--out', join(dir, 'o'), ...args]);
  assert.equal(oneLine(f('--types', '0'), 'types 0'), '--types: expected an integer from 1 to 1000 (k-means workload types), got 0');
  assert.equal(oneLine(f('--types', '1001'), 'types 1001'), '--types: expected an integer from 1 to 1000 (k-means workload types), got 1001');
  const bogus = cli(['forecast', '--trace', trace, '--granularity', '1', '--key', 'bogus', '--horizon', '2', '--out', join(dir, 'o')]);
  assert.equal(oneLine(bogus, 'key bogus'), '--key: unknown field "bogus"; valid: model, region, tier, app, type');
  assert.equal(oneLine(f('--types', '100'), 'types 100'), `--types 100: expected at most as many workload types as ${trace} has requests (50)`);

  // Times past 2^53 s are out of range (see the series timestamp test below); below it, sub-second digits can still
  // collapse: at 1e15 doubles are 0.125 s apart.
  const big = join(dir, 'big.csv');
  writeFileSync(big, `timestamp_s,value\n1e15,1\n1000000000000000.01,2\n1000000000000060,3\n`);
  const err = oneLine(cli(['forecast', '--series', big, '--horizon', '2', '--out', join(dir, 'o')]), 'big');
  assert.ok(err.startsWith(`${big}:3 timestamp_s: expected a time that stays distinct from the row before as a number (both read as 1000000000000000: doubles at that magnitude are 0.125 s apart)`), err);
  // A real duplicate is still reported as one.
  const dup = join(dir, 'dup.csv');
  writeFileSync(dup, 'timestamp_s,value\n60,1\n60.0,2\n');
  assert.equal(oneLine(cli(['forecast', '--series', dup, '--horizon', '2', '--out', join(dir, 'o')]), 'dup'), `${dup}:3 timestamp_s: expected a timestamp after 60 (rows must be sorted, no duplicates), got 60`);
});

test('a one-value flag given twice is refused (commander kept the last: --trace a --trace b replayed only b); repeatable flags may repeat', () => {
  const out = join(tmp(), 'o');
  const cases: [string[], string][] = [
    [['simulate', '--trace', CONV, '--trace', CONV, '--out', out], '--trace: given 2 times; it takes one value (the run would use only the last)'],
    [['simulate', '--seed', '1', '--seed=2', '--out', out], '--seed: given 2 times; it takes one value (the run would use only the last)'],
    [['plan', '--generate', '3,3,3', '--solver', 'agh', '--solver', 'gh'], '--solver: given 2 times; it takes one value (the run would use only the last)'],
  ];
  for (const [args, msg] of cases) assert.equal(oneLine(cli(args), args.join(' ')), msg);
  const ok = cli(['simulate', '--set', 'workload.transforms.limit=20', '--set', 'seed=3', '--no-report', '--quiet', '--out', out]);
  assert.equal(ok.status, 0, ok.stderr);
});

test('two inputs that set the same thing are refused (the run used one and ignored the other): --trace with --set workload…, --seed with --set seed, --seed with a --seeds list, a variant seed under --seeds', () => {
  const out = join(tmp(), 'o');
  const trace = smallTrace(tmp());
  const cases: [string[], string][] = [
    [['simulate', '--trace', trace, '--set', 'workload.trace.path=other.csv', '--out', out], "--set workload.trace.path=other.csv: --trace replaces the workload's source; give one of the two (--set workload.transforms.… still applies with --trace)"],
    [['simulate', '--trace', trace, '--set', 'workload={synthetic: {}}', '--out', out], "--set workload={synthetic: {}}: --trace replaces the workload's source; give one of the two (--set workload.transforms.… still applies with --trace)"],
    [['compare', '--trace', trace, '--set', 'workload.trace.format=azure', '--out', out], "--set workload.trace.format=azure: --trace replaces the workload's source; give one of the two (--set workload.transforms.… still applies with --trace)"],
    [['simulate', '--seed', '3', '--set', 'seed=4', '--out', out], '--set seed=4: --seed sets it too; give one of the two'],
    [['compare', '--seed', '5', '--seeds', '1,2', '--out', out], '--seed 5: --seeds 1,2 lists every seed; give one of the two (or --seeds N, N seeds from --seed)'],
    [['compare', '--seeds', '2', '--variant', 'a:seed=9', '--variant', 'b:routing.policy=jsq', '--out', out], "variant 'a' sets its own seed (9): --seeds runs every variant on each seed of its list; remove the variant's seed or --seeds"],
  ];
  for (const [args, message] of cases) assert.equal(oneLine(cli(args), args.join(' ')), message);
  // What stays allowed: --trace with the workload's transforms, --seeds N counted from --seed.
  const ok = cli(['simulate', '--trace', trace, '--set', 'workload.transforms.limit=5', '--no-report', '--quiet', '--out', out]);
  assert.equal(ok.status, 0, ok.stderr);
});

test('compare --variant NAME that the scenario does not list says so (a typo ran the base scenario without a word)', () => {
  const trace = smallTrace(tmp());
  const r = cli(['compare', '--trace', trace, '--variant', 'jsk', '--variant', 'jsq', '--out', join(tmp(), 'o')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^note: --variant jsk: not one of the scenario's variants \(round-robin, least-requests, jsq\): it runs the base scenario under that name\n/);
  assert.doesNotMatch(r.stderr, /--variant jsq/);
});
