import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refusedInOneLine, runCli } from '../helpers/cli.ts';

const LIVE_HEAD = 'id,arrival_s,input_tokens,output_tokens,model,status,ttft_s,e2e_s,tokens_received,backend,late_s,error';

/** A small simulate run, and a replay file made from it: every latency × `factor`, rows changed by `edit`. */
function simAndLive(factor: number, edit: (cells: Record<string, string>, i: number) => void = () => {}): { dir: string; sim: string; live: string } {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-simlive-'));
  const sim = join(dir, 'sim');
  const r = runCli(['simulate', '--quiet', '--no-report', '--out', sim, '--set', 'workload.transforms.window={startS: 0, endS: 60}']);
  assert.equal(r.status, 0, r.stderr);
  const [head, ...rows] = readFileSync(join(sim, 'requests.csv'), 'utf8').trimEnd().split('\n');
  const cols = head!.split(',');
  const live = rows.map((row, i) => {
    const c = Object.fromEntries(row.split(',').map((v, j) => [cols[j]!, v]));
    const out: Record<string, string> = {
      id: c.id!, arrival_s: c.arrival_s!, input_tokens: c.input_tokens!, output_tokens: c.output_tokens!, model: c.model!,
      status: '200', ttft_s: String(Number(c.ttft_s) * factor), e2e_s: String(Number(c.e2e_s) * factor),
      tokens_received: c.output_tokens!, backend: 'http://127.0.0.1:8001', late_s: '0', error: '',
    };
    edit(out, i);
    return LIVE_HEAD.split(',').map((k) => out[k]).join(',');
  });
  const livePath = join(dir, 'live.csv');
  writeFileSync(livePath, [LIVE_HEAD, ...live].join('\n') + '\n');
  return { dir, sim, live: livePath };
}

test('calibrate --sim --replay: per-request MAPE, bias and Pearson r of TTFT and E2E, in sim-live-check.json', () => {
  // Live 10 % slower on every request: MAPE = 0.1/1.1, bias = 1/1.1 − 1, r = 1.
  const { dir, sim, live } = simAndLive(1.1, (c, i) => {
    if (i === 0) c.tokens_received = String(Number(c.output_tokens) - 1); // stopped early live: not in E2E
    if (i === 1) c.error = 'timeout';
  });
  const out = join(dir, 'check');
  const r = runCli(['calibrate', '--sim', sim, '--replay', live, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const check = JSON.parse(readFileSync(join(out, 'sim-live-check.json'), 'utf8'));
  const n = readFileSync(live, 'utf8').trimEnd().split('\n').length - 1;
  assert.equal(check.requests.matched, n);
  assert.equal(check.requests.bothCompleted, n - 1);
  assert.equal(check.requests.liveLengthDiffers, 1);
  assert.equal(check.ttft.n, n - 1);
  assert.equal(check.e2e.n, n - 2);
  for (const k of ['ttft', 'e2e']) {
    assert.ok(Math.abs(check[k].mape - 0.1 / 1.1) < 1e-6, `${k} MAPE ${check[k].mape}`);
    assert.ok(Math.abs(check[k].bias - (1 / 1.1 - 1)) < 1e-6, `${k} bias ${check[k].bias}`);
    assert.ok(Math.abs(check[k].pearson - 1) < 1e-9, `${k} r ${check[k].pearson}`);
    assert.ok(Math.abs(check[k].live.p99 / check[k].sim.p99 - 1.1) < 1e-6);
  }
  assert.match(r.stdout, /^TTFT +\d+ .* 9\.1% +-9\.1% +1\.000$/m);
});

test('calibrate --sim --replay refuses two different workloads, swapped files and a missing half, in one line', () => {
  const { sim, live } = simAndLive(1, (c, i) => {
    if (i === 3) c.input_tokens = String(Number(c.input_tokens) + 1);
  });
  assert.match(refusedInOneLine(runCli(['calibrate', '--sim', sim, '--replay', live]), 'other workload'), /request 3 has .* not the same workload/);
  assert.match(refusedInOneLine(runCli(['calibrate', '--sim', live, '--replay', sim]), 'swapped'), /swap the two/);
  assert.match(refusedInOneLine(runCli(['calibrate', '--replay', live]), 'no --sim'), /--replay needs --sim/);
  assert.match(refusedInOneLine(runCli(['calibrate', '--sim', sim, '--replay', live, '--steps']), 'two checks'), /--steps and --replay: give one check at a time/);
});
