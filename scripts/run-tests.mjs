// Node 20's test runner does not expand globs, so this finds test/**/*.test.ts itself and hands the
// list to `node --test` (through tsx). Extra arguments are passed on (e.g. a file or --test-name-pattern).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir) {
  return readdirSync(dir).sort().flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return find(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}
const extra = process.argv.slice(2);
const files = extra.some((a) => a.endsWith('.ts')) ? [] : find('test');
// Property tests run on a fixed fast-check seed (FC_SEED overrides it; see the helper).
const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', './test/helpers/fast-check-seed.mjs', '--test', ...extra, ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
