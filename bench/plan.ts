// Joint-allocation planner timings (seed 002, Table VI shape): GH, AGH and the HiGHS MILP per size.
// Run: node --import tsx bench/plan.ts [--milp-time-limit S] [--sizes "5,5,5;10,10,10"]
import { runtimeStudy, runtimeTable } from '../src/optimize/joint-allocation/studies.ts';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const tl = Number(arg('--milp-time-limit') ?? 30);
const sizes = arg('--sizes')?.split(';').map((s) => s.split(',').map(Number) as [number, number, number]);
const rows = await runtimeStudy({ milpTimeLimitS: tl, ...(sizes ? { sizes } : {}), progress: (m) => process.stderr.write(m + '\n') });
process.stdout.write(runtimeTable(rows));
