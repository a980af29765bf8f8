import { UserError } from '../util/errors.ts';
import { EndpointMemoryBins } from '../policy/sageserve/stats.ts';
import type { Fleet } from './fleet.ts';

/** Most timeline rows a run keeps (about 100 bytes each in memory, more in timeline.csv). */
const MAX_TIMELINE_ROWS = 5_000_000;

export interface TimelineRow {
  tS: number;
  /** Counts since the previous row. */
  arrivals: number;
  completions: number;
  drops: number;
  /** State at tS. */
  provisioning: number;
  ready: number;
  draining: number;
  running: number;
  waiting: number;
  deferred: number;
  /** Mean KV utilisation over instances that are ready or draining. */
  kvUtilization: number;
}

/** Per-interval rows: counts since the last row and a snapshot of the fleet at the row's time. */
export class Timeline {
  readonly rows: TimelineRow[] = [];
  arrived = 0;
  completed = 0;
  dropped = 0;
  /** SageServe's memory statistic (summary.json `sageserve.memoryUtil`): each endpoint's busiest instance per sample. */
  readonly endpointMemory = new EndpointMemoryBins();

  constructor(readonly intervalS: number) {}

  sample(t: number, fleet: Fleet, deferred: number): void {
    if (this.rows.length >= MAX_TIMELINE_ROWS) {
      throw new UserError(
        `output.timelineIntervalS: ${this.intervalS} s gives more than ${MAX_TIMELINE_ROWS.toLocaleString('en-US')} timeline rows by t = ${t.toFixed(0)} s; use a longer interval for a run this long`,
      );
    }
    let provisioning = 0;
    let ready = 0;
    let draining = 0;
    let running = 0;
    let waiting = 0;
    let kv = 0;
    for (const inst of fleet.instances) {
      if (inst.state === 'stopped') continue;
      if (inst.state === 'provisioning') {
        provisioning++;
        continue;
      }
      if (inst.state === 'ready') ready++;
      else draining++;
      inst.engine.sync(t, true);
      running += inst.numRunning;
      waiting += inst.numWaiting;
      kv += inst.kvUsedFraction;
      this.endpointMemory.note(inst.model, inst.region, inst.kvUsedFraction);
    }
    this.endpointMemory.sampled(t);
    const serving = ready + draining;
    this.rows.push({
      tS: t,
      arrivals: this.arrived,
      completions: this.completed,
      drops: this.dropped,
      provisioning,
      ready,
      draining,
      running,
      waiting,
      deferred,
      kvUtilization: serving ? kv / serving : 0,
    });
    this.arrived = 0;
    this.completed = 0;
    this.dropped = 0;
  }

  /**
   * A last row at the end of the run when the last sample was earlier. When a sample was already taken at `t`,
   * what was counted after it (a drop by a control tick at `t`, requests still deferred when the run ends) goes
   * into that row, so the rows' counts always add up to the run's.
   */
  finish(t: number, fleet: Fleet, deferred: number): void {
    const last = this.rows[this.rows.length - 1];
    if (!last || last.tS < t) {
      this.sample(t, fleet, deferred);
      return;
    }
    last.arrivals += this.arrived;
    last.completions += this.completed;
    last.drops += this.dropped;
    this.arrived = 0;
    this.completed = 0;
    this.dropped = 0;
  }
}
