import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';
import { parseSeriesCsv } from '../../src/forecast/series-csv.ts';

// Bad-input leftovers (exit 2, one line naming the flag or file:line, before any work). Each case ran on, hung or
// named the wrong problem with the old code; the runCli timeout turns a hang into a failure (status null).
const tmp = () => realpathSync(mkdtempSync(join(tmpdir(), 'llmfleet-leftovers-')));
const oneLine = (r: ReturnType<typeof runCli>, what: string): string => refusedInOneLine(r, what).slice('llmfleet: '.length, -1);

test('plan --time-limit and --bound-time-limit are at most one week (HiGHS read 1e300 as no limit and ran on)', () => {
  const out = join(tmp(), 'o');
  for (const [flag, v] of [['--time-limit', '1e300'], ['--time-limit', '604801'], ['--bound-time-limit', '1e300'], ['--bound-time-limit', 'Infinity'], ['--time-limit', '-1'], ['--time-limit', 'NaN']]) {
    const r = runCli(['plan', '--problem', 'scenarios/plan-example.yaml', flag!, v!, '--out', out]);
    const msg = oneLine(r, `${flag} ${v}`);
    assert.match(msg, new RegExp(`^${flag}: expected a number ≥ (0\\.1|0) and ≤ 604800 \\(seconds per HiGHS solve: at most one week\\), got "${v}"$`), msg);
    assert.equal(r.stdout, '', 'no plan printed');
  }
  // Studies read --time-limit too.
  assert.match(oneLine(runCli(['plan', 'study', 'runtime', '--sizes', '2,2,2', '--time-limit', '1e9', '--out', out]), 'study'), /^--time-limit: expected a number ≥ 0\.1 and ≤ 604800/);
});

test('emulate and replay --time-scale are in [0.001, 1000] (emulate --time-scale 1e-300 never answered a request)', () => {
  const cases: [string[], string][] = [
    [['emulate', '--model', 'llama3.1-8b', '--hardware', 'h100-80gb', '--port', '0'], 'emulate'],
    [['replay', '--url', 'http://127.0.0.1:1', '--out', join(tmp(), 'o')], 'replay'],
  ];
  for (const [args, what] of cases) {
    for (const v of ['1e-300', '0.0009', '1e300', '1001', '5e-324']) {
      assert.equal(oneLine(runCli([...args, '--time-scale', v]), `${what} ${v}`), `--time-scale: expected a number ≥ 0.001 and ≤ 1000 (modelled seconds per wall second; beyond these a run waits for days or measures only jitter), got '${v}'`);
    }
    for (const v of ['0', '-1', 'NaN', '', '0x10', 'Infinity']) {
      assert.equal(oneLine(runCli([...args, '--time-scale', v]), `${what} ${v}`), `--time-scale: expected a number > 0, got '${v}'`);
    }
  }
});

test('forecast --series: a timestamp past 2^53 s is out of range, not "off the grid" or "1.7e298 steps missing"', () => {
  const dir = tmp();
  const big = 'timestamp_s,value\n1e300,1\n2e300,2\n3.5e300,3\n4e300,4\n';
  const expected = '|t| ≤ 9007199254740991 s (timestamp out of range: past 2^53 − 1 consecutive doubles are more than 1 s apart, so no step grid holds; write times relative to the series start)';
  assert.throws(() => parseSeriesCsv(big, 'x.csv'), (e: Error) => e.message === `x.csv:2 timestamp_s: expected ${expected}, got "1e300"`);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n0,1\n60,2\n1e300,3\n', 'x.csv', 'zero'), (e: Error) => e.message === `x.csv:4 timestamp_s: expected ${expected}, got "1e300"`);
  assert.throws(() => parseSeriesCsv('timestamp_s,value\n-1e300,1\n0,2\n1e300,3\n', 'x.csv'), (e: Error) => e.message.startsWith('x.csv:2 timestamp_s: expected |t| ≤ 9007199254740991 s (timestamp out of range'));
  // The largest whole seconds still work.
  assert.equal(parseSeriesCsv('timestamp_s,value\n9007199254740000,1\n9007199254740060,2\n', 'x.csv').stepS, 60);
  const p = join(dir, 'big.csv');
  writeFileSync(p, big);
  assert.equal(oneLine(runCli(['forecast', '--series', p, '--horizon', '2', '--out', join(dir, 'o')]), 'forecast'), `${p}:2 timestamp_s: expected ${expected}, got "1e300"`);
});

test('compare/simulate --trace with a bad row: the refusal is the only line on stderr (the kept-transforms note came first)', () => {
  const dir = tmp();
  const bad = join(dir, 'bad.csv');
  writeFileSync(bad, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,NaN,44\n');
  // scenarios/compare-routers.yaml keeps workload.transforms (compress) under --trace: the note was printed before the run.
  assert.equal(oneLine(runCli(['compare', '--trace', bad, '--out', join(dir, 'o')]), 'compare'), `variant 'round-robin': ${bad}:2 ContextTokens: expected an integer ≥ 1 and ≤ 1e9, got "NaN"`);
  assert.equal(oneLine(runCli(['compare', '--trace', bad, '--seeds', '2', '--out', join(dir, 'o')]), 'compare --seeds').endsWith(`${bad}:2 ContextTokens: expected an integer ≥ 1 and ≤ 1e9, got "NaN"`), true);
  assert.equal(oneLine(runCli(['compare', '--trace', bad, '--workers', 'NaN', '--out', join(dir, 'o')]), 'compare --workers'), "--workers: expected an integer, got 'NaN'");
  assert.equal(oneLine(runCli(['simulate', '--scenario', 'scenarios/compare-routers.yaml', '--variant', 'jsq', '--trace', bad, '--out', join(dir, 'o'), '--no-report']), 'simulate'), `${bad}:2 ContextTokens: expected an integer ≥ 1 and ≤ 1e9, got "NaN"`);
  // On success the note is still there.
  const ok = join(dir, 'ok.csv');
  writeFileSync(ok, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n');
  const r = runCli(['compare', '--trace', ok, '--workers', '0', '--out', join(dir, 'o')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^note: --trace keeps the scenario's workload\.transforms \(compress: 6\)/m);
});

test('forecast --key with a field twice is refused (it ran, keying every series "model=-,model=-")', () => {
  const dir = tmp();
  const trace = join(dir, 't.csv');
  writeFileSync(trace, 'TIMESTAMP,ContextTokens,GeneratedTokens\n' + Array.from({ length: 20 }, (_, i) => `2023-11-16 18:15:${String(10 + i).padStart(2, '0')}.0000000,100,10`).join('\n') + '\n');
  assert.equal(oneLine(runCli(['forecast', '--trace', trace, '--granularity', '1', '--key', 'model, model', '--horizon', '2', '--out', join(dir, 'o')]), 'key'), '--key: field "model" is given twice; expected distinct fields from model, region, tier, app, type');
});

test('serve: flags are checked before any backend is asked (a bad --port hid behind "cannot read its model"); --model with --config and an empty --model/--config are refused', () => {
  const dir = tmp();
  const gw = join(dir, 'gw.yaml');
  writeFileSync(gw, 'pools:\n  - model: m\n    backends: ["http://127.0.0.1:1"]\n');
  const cases: [string[], string][] = [
    [['--backend', 'http://127.0.0.1:1', '--port', '99999'], '--port: expected 0..65535, got 99999'],
    [['--backend', 'http://127.0.0.1:1', '--chat-output-tokens', '0'], '--chat-output-tokens: expected a positive integer, got 0'],
    [['--backend', 'http://127.0.0.1:1', '--routing', 'fastest'], /^--routing: unknown policy 'fastest'/.source],
    [['--backend', 'http://127.0.0.1:1', '--model', ''], "--model: expected a non-empty model name, got ''"],
    [['--backend', 'http://127.0.0.1:1', '--model', 'm', '--config', ''], "--config: expected a non-empty gateway config file, got ''"],
    // The gateway started and served the config's model, ignoring --model.
    [['--config', gw, '--model', 'x'], "--model: only with --backend (a --config file names each pool's model in pools[].model)"],
  ];
  for (const [args, msg] of cases) {
    const got = oneLine(runCli(['serve', ...args]), args.join(' '));
    if (msg.startsWith('^')) assert.match(got, new RegExp(msg));
    else assert.equal(got, msg);
  }
});

test('forecast --folds is at most 1000 (9007199254740991 looped for ever)', () => {
  const dir = tmp();
  const s = join(dir, 's.csv');
  writeFileSync(s, 'timestamp_s,value\n' + Array.from({ length: 60 }, (_, i) => `${i * 60},${(i % 24) + 1}`).join('\n') + '\n');
  for (const v of ['9007199254740991', '1001', '0']) {
    assert.equal(oneLine(runCli(['forecast', '--series', s, '--horizon', '2', '--folds', v, '--out', join(dir, 'o')]), v), `--folds: expected an integer from 1 to 1000 (each fold refits every candidate model), got ${v}`);
  }
});

test('a FIFO with no writer or /dev/zero as an input file is one line, not a run that never ends', { skip: process.platform === 'win32' }, () => {
  const dir = tmp();
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const o = join(dir, 'o');
  // Each hung (status null after the 30-s timeout): readFileSync waited for a writer, or read /dev/zero for ever.
  const cases: [string[], string][] = [
    [['simulate', '--scenario', fifo, '--out', o, '--no-report'], `${fifo} workload: expected a workload: block (trace or synthetic) in the file, or --trace FILE (the field is missing)`],
    [['simulate', '--scenario', '/dev/zero', '--out', o, '--no-report'], '/dev/zero: cannot read the file (a pipe or device giving more than 64 MiB; expected a file)'],
    [['forecast', '--series', fifo, '--horizon', '2', '--out', o], `${fifo}: expected at least 2 data rows "timestamp_s,value", got 0`],
    [['forecast', '--series', '/dev/zero', '--horizon', '2', '--out', o], '/dev/zero: cannot read series file (a pipe or device giving more than 64 MiB; expected a file)'],
    [['plan', '--problem', '/dev/zero', '--out', o], '/dev/zero: cannot read the file (a pipe or device giving more than 64 MiB; expected a file)'],
    [['serve', '--config', '/dev/zero'], '/dev/zero: cannot read the file (a pipe or device giving more than 64 MiB; expected a file)'],
    [['calibrate', '--profile', fifo, '--out', o], `--profile ${fifo}: expected a file, got a pipe or device`],
    [['calibrate', '--catalog', '/dev/zero', '--out', o], '/dev/zero: expected a readable catalog YAML file, got "a pipe or device giving more than 64 MiB; expected a file"'],
    [['emulate', '--model', 'llama3.1-8b', '--hardware', 'h100-80gb', '--port', '0', '--catalog', '/dev/zero'], '/dev/zero: expected a readable catalog YAML file, got "a pipe or device giving more than 64 MiB; expected a file"'],
    [['plan', '--generate', '2,2,2', '--bound-time-limit', '0', '--write-lp', fifo], `--write-lp ${fifo}: a pipe that nothing reads; expected a file to write (or a pipe with a reader)`],
  ];
  for (const [args, msg] of cases) assert.equal(oneLine(runCli(args), args.join(' ')), msg);
  // A scenario's own catalog: path is read the same way (a FIFO there reads as an empty catalog, not a hang).
  const trace = join(dir, 't.csv');
  writeFileSync(trace, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n');
  const scenario = (catalog: string) => {
    const p = join(dir, `s-${catalog.replace(/\W/g, '')}.yaml`);
    writeFileSync(p, `catalog: ${catalog}\nworkload:\n  trace: { path: ${trace}, format: azure }\nfleet:\n  pools:\n    - { model: llama3.1-8b, hardware: h100-80gb, count: 1 }\n`);
    return p;
  };
  assert.equal(oneLine(runCli(['simulate', '--scenario', scenario('/dev/zero'), '--out', o, '--no-report']), 'catalog /dev/zero'), '/dev/zero: expected a readable catalog YAML file, got "a pipe or device giving more than 64 MiB; expected a file"');
  const r = runCli(['simulate', '--scenario', scenario(fifo), '--out', o, '--no-report', '--quiet']);
  assert.equal(r.status, 0, `catalog fifo: exit ${r.status} (signal ${r.signal}): ${r.stderr}`);
});

test('replay --model "" is refused (every request went out for model \'\' and replay exited 0)', () => {
  const dir = tmp();
  const trace = join(dir, 't.csv');
  writeFileSync(trace, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n');
  assert.equal(oneLine(runCli(['replay', '--url', 'http://127.0.0.1:1', '--trace', trace, '--model', '', '--out', join(dir, 'o')]), 'replay'), "--model: expected a non-empty model name (leave the flag out to ask the server), got ''");
});

test('forecast --series from a pipe with a bad timestamp is one line (it re-read the drained pipe and crashed with a TypeError)', { skip: process.platform === 'win32' }, () => {
  const dir = tmp();
  // A shell pipe (Node's own `input` is a socket, not a pipe): `printf … | llmfleet forecast --series /dev/stdin`.
  const viaStdin = (text: string) =>
    spawnSync('sh', ['-c', 'printf "$1" | "$2" "$3" forecast --series /dev/stdin --horizon 1 --out "$4"', 'sh', text, process.execPath, resolve('bin/llmfleet.js'), join(dir, 'o')], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(oneLine(viaStdin('timestamp_s,value\n60,1\n60.0,2\n'), 'dup'), '/dev/stdin:3 timestamp_s: expected a timestamp after 60 (rows must be sorted, no duplicates), got 60');
  assert.match(oneLine(viaStdin('timestamp_s,value\n1e15,1\n1000000000000000.01,2\n'), 'collapse'), /^\/dev\/stdin:3 timestamp_s: expected a time that stays distinct from the row before as a number/);
  // A good series through a pipe still forecasts.
  const ok = viaStdin('timestamp_s,value\n0,1\n60,2\n120,3\n180,4\n');
  assert.equal(ok.status, 0, ok.stderr);
});

test('calibrate --out "" is refused like every other --out (it failed with an unclear ENOENT)', () => {
  for (const extra of [[], ['--steps'], ['--vidur']]) {
    assert.equal(oneLine(runCli(['calibrate', ...extra, '--out', '']), 'calibrate'), "--out: expected a non-empty output folder, got ''");
  }
});

test('number flags read decimal notation only, like plan and the trace readers (--error-rate 0x0 ran as 0, --startup-delay 0x10 as 16 s)', () => {
  const emulate = (flag: string, v: string) => oneLine(runCli(['emulate', '--model', 'llama3.1-8b', '--hardware', 'h100-80gb', flag, v]), 'emulate');
  assert.match(emulate('--error-rate', '0x0'), /^--error-rate: expected a fraction in \[0, 1\], got '0x0'/);
  assert.match(emulate('--startup-delay', '0x10'), /^--startup-delay: expected a number of seconds/);
  assert.match(emulate('--time-scale', '0x10'), /^--time-scale: expected a number > 0/);
});

test('routing.dispatchDelayS is at most a day (1e300 ran: TPOT 0, 6.8e297 USD; 1e9 blamed output.timelineIntervalS)', () => {
  const out = join(tmp(), 'o');
  for (const v of ['1e300', '1e9']) {
    const r = runCli(['simulate', '--set', 'workload.transforms.limit=20', '--set', `routing.dispatchDelayS=${v}`, '--no-report', '--quiet', '--out', out]);
    assert.equal(oneLine(r, v), `--set routing.dispatchDelayS=${v} routing.dispatchDelayS: expected ≤ 86400 s (one day; far past any gateway, network or migration delay), got ${Number(v) === 1e300 ? '1e+300' : '1000000000'}`);
  }
  const r = runCli(['simulate', '--set', 'workload.transforms.limit=20', '--set', 'fleet.provisioning.vmAcquireS=1e300', '--no-report', '--quiet', '--out', out]);
  assert.match(oneLine(r, 'vmAcquireS'), /^--set fleet\.provisioning\.vmAcquireS=1e300 fleet\.provisioning\.vmAcquireS: expected ≤ 604800 s \(one week;/);
});

test('integer flags past 2^53 − 1 give the flag\'s own range (they all said "from -9007199254740991")', () => {
  const dir = tmp();
  const s = join(dir, 's.csv');
  writeFileSync(s, 'timestamp_s,value\n' + Array.from({ length: 60 }, (_, i) => `${i * 60},${(i % 24) + 1}`).join('\n') + '\n');
  const big = '99999999999999999999';
  const emulate = (flag: string, v: string) => oneLine(runCli(['emulate', '--model', 'llama3.1-8b', '--hardware', 'h100-80gb', flag, v]), `${flag} ${v}`);
  assert.equal(emulate('--kv-blocks', big), `--kv-blocks: expected an integer from 1 to 9007199254740991 (2^53 − 1), got '${big}'`);
  assert.equal(emulate('--stall-after-tokens', big), `--stall-after-tokens: expected an integer from 0 to 9007199254740991 (2^53 − 1), got '${big}'`);
  assert.equal(emulate('--stall-after-tokens', `-${big}`), `--stall-after-tokens: expected an integer from 0 to 9007199254740991 (2^53 − 1), got '-${big}'`);
  assert.equal(emulate('--port', big), `--port: expected an integer from 0 to 65535, got '${big}'`);
  assert.equal(emulate('--seed', big), `--seed: expected an integer from -9007199254740991 to 9007199254740991 (2^53 − 1), got '${big}'`);
  const forecast = (...args: string[]) => oneLine(runCli(['forecast', '--series', s, '--horizon', '2', ...args, '--out', join(dir, 'o')]), args.join(' '));
  assert.equal(forecast('--holdout', big), `--holdout: expected an integer from 0 to 9007199254740991 (2^53 − 1), got '${big}'`);
  assert.equal(forecast('--folds', big), `--folds: expected an integer from 1 to 1000, got '${big}'`);
  assert.equal(oneLine(runCli(['forecast', '--series', s, '--horizon', big, '--out', join(dir, 'o')]), 'horizon'), `--horizon: expected an integer from 1 to 1000000, got '${big}'`);
});

test('forecast --holdout longer than --horizon is refused (the points past the horizon were neither fitted nor scored, silently)', () => {
  const dir = tmp();
  const s = join(dir, 's.csv');
  writeFileSync(s, 'timestamp_s,value\n' + Array.from({ length: 300 }, (_, i) => `${i * 60},${(i % 24) + 1}`).join('\n') + '\n');
  const run = (...args: string[]) => runCli(['forecast', '--series', s, '--model', 'seasonal-naive', '--period', '24', ...args, '--out', join(dir, 'o')]);
  assert.equal(oneLine(run('--horizon', '1', '--holdout', '100'), '100 > 1'), '--holdout 100: more than --horizon 1; the last 99 points would be neither fitted nor scored (use --holdout ≤ --horizon)');
  assert.equal(oneLine(run('--horizon', '5', '--holdout', '6', '--folds', '3'), '6 > 5'), '--holdout 6: more than --horizon 5; the last 1 point would be neither fitted nor scored (use --holdout ≤ --horizon)');
  // Equal, or shorter (the forecast runs past the series' end), still run.
  for (const [h, k] of [['5', '5'], ['5', '2']]) assert.equal(run('--horizon', h!, '--holdout', k!).status, 0, `horizon ${h} holdout ${k}`);
});
