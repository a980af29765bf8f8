import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/llmfleet.js', ...args], { encoding: 'utf8' });

test('calibrate --map names an unknown catalog model or a key the profile does not have (exit 2, one line)', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'llmfleet-cal-')), 'o');
  for (const [map, message] of [
    ['llama2-70b=gpt-9', /--map llama2-70b=gpt-9: unknown model 'gpt-9'; valid: .*llama2-70b/],
    ['nokey=llama3.1-8b', /--map nokey=llama3\.1-8b: 'nokey' is not a model of .*splitwise_perf_model\.csv \(its models: bloom-176b, llama2-70b\)/],
  ] as const) {
    const r = cli('calibrate', '--map', map, '--out', out);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
});
