// `npm run bench [name]`: runs every benchmark script in bench/ (or only bench/<name>.ts), one after another.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

// sim-case.ts is a child of sim.ts; splitwisesim-compare.ts is a tool driven by splitwisesim-compare.sh (needs SplitwiseSim).
const skip = new Set(['run.ts', 'sim-case.ts', 'splitwisesim-compare.ts']);
const only = process.argv[2];
const files = readdirSync('bench')
  .filter((f) => f.endsWith('.ts') && !skip.has(f) && (!only || f === `${only}.ts`))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== bench/${f} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${f}`, ...process.argv.slice(3)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
