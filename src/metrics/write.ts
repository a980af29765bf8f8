import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestLog } from './collector.ts';
import type { Summary } from './summary.ts';
import type { TimelineRow } from '../sim/timeline.ts';
import type { SimResult } from '../sim/simulator.ts';
import { scalingCsv } from './scaling-log.ts';
import { csvCell } from '../util/csv.ts';

const f6 = (x: number) => x.toFixed(6);

/**
 * Writes summary.json, requests.csv (one row per request, by id), timeline.csv and, with a scaling policy,
 * scaling.csv into `dir`.
 */
export async function writeRunOutputs(dir: string, summary: Summary, res: Pick<SimResult, 'log' | 'timeline' | 'fleet' | 'scaling'>): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  await writeRequestsCsv(join(dir, 'requests.csv'), res.log, res.fleet.instances.map((i) => i.pool));
  writeFileSync(join(dir, 'timeline.csv'), timelineCsv(res.timeline.rows));
  if (res.scaling) writeFileSync(join(dir, 'scaling.csv'), scalingCsv(res.scaling));
}

export function timelineCsv(rows: readonly TimelineRow[]): string {
  const head = 't_s,arrivals,completions,drops,provisioning,ready,draining,running,waiting,deferred,kv_utilization\n';
  return (
    head +
    rows
      .map((r) =>
        [f6(r.tS), r.arrivals, r.completions, r.drops, r.provisioning, r.ready, r.draining, r.running, r.waiting, r.deferred, f6(r.kvUtilization)].join(','),
      )
      .join('\n') +
    '\n'
  );
}

async function writeRequestsCsv(path: string, log: RequestLog, instancePools: readonly string[]): Promise<void> {
  const out = createWriteStream(path);
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((res) => out.once('drain', () => res())));
  await write('id,arrival_s,model,tier,instance,input_tokens,output_tokens,status,drop_reason,queue_s,ttft_s,tpot_s,e2e_s,preemptions,pool\n');
  // Labels come from the trace: a comma or quote in one must not shift the row's columns.
  const models = log.models.map(csvCell);
  const tiers = log.tiers.map(csvCell);
  const dropReasons = log.dropReasons.map(csvCell);
  const pools = instancePools.map(csvCell);
  let buf = '';
  for (let i = 0; i < log.n; i++) {
    const done = log.isDone(i);
    const dropped = log.isDropped(i);
    const status = done ? 'completed' : dropped ? 'dropped' : 'unfinished';
    // Empty where there is no value: a one-token output has no TPOT; an unfinished request has no E2E, and a queue
    // time or TTFT only once scheduled or given its first token; a dropped request has none of them.
    const times = dropped
      ? ',,,,,'
      : `${log.hasQueue(i) ? f6(log.queue[i]!) : ''},${log.hasTtft(i) ? f6(log.ttft[i]!) : ''},${log.hasTpot(i) ? f6(log.tpot(i)) : ''},` +
        `${done ? f6(log.e2e[i]!) : ''},${log.preemptions[i]},`;
    const inst = log.instance[i]!;
    buf +=
      `${i},${f6(log.arrival[i]!)},${models[log.modelIdx[i]!]},${tiers[log.tierIdx[i]!]},${inst},` +
      `${log.input[i]},${log.output[i]},${status},${dropped ? dropReasons[log.dropIdx[i]!] : ''},${times}${inst >= 0 ? pools[inst] : ''}\n`;
    if (buf.length > 1 << 16) {
      await write(buf);
      buf = '';
    }
  }
  await write(buf);
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
}
