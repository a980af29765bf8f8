// Joint-allocation planner timings (seed 002, Table VI shape): GH, AGH and the HiGHS MILP per size.
// Run: node --import tsx bench/plan.ts [--milp-time-limit S] [--sizes "5,5,5;10,10,10"]
import { runtimeStudy } from '../src/optimize/joint-allocation/studies.ts';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const tl = Number(arg('--milp-time-limit') ?? 30);
const sizes = arg('--sizes')?.split(';').map((s) => s.split(',').map(Number) as [number, number, number]);
const rows = await runtimeStudy({ milpTimeLimitS: tl, ...(sizes ? { sizes } : {}), progress: (m) => process.stderr.write(m + '\n') });
console.log('(I,J,K)       GH s     AGH s  compact s     status   vars     rows   paper s     status     AGH $     MILP $    bound $');
for (const r of rows) {
  console.log(
    `(${r.size.join(',')})`.padEnd(12),
    r.ghS.toFixed(4).padStart(8), r.aghS.toFixed(3).padStart(8), r.milpS.toFixed(2).padStart(10), r.milpStatus.padStart(10),
    String(r.milpVars).padStart(7), String(r.milpRows).padStart(8), (r.paperS?.toFixed(2) ?? '-').padStart(9), (r.paperStatus ?? '-').padStart(10),
    r.aghObj.toFixed(2).padStart(9),
    (r.milpObj?.toFixed(2) ?? '-').padStart(10), (r.milpBound?.toFixed(2) ?? '-').padStart(10),
  );
}
