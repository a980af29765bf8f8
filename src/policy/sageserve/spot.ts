import type { z } from 'zod';
import type { spotSchema } from '../../scenario/schema.ts';
import { Rng } from '../../util/rng.ts';
import { sampleLeadTime } from './lead-time.ts';
import { own } from '../../util/own.ts';

export type SpotOptions = z.output<typeof spotSchema>;

/** What a donated VM can be reused for: its region and shape, and the model whose weights it still holds. */
export interface SpotVm {
  region: string;
  hardware: string;
  tp: number;
  pp: number;
  model: string;
}

/** Where a scale-out's capacity came from. */
export type SpotSource = 'same-model' | 'other-model' | 'new-vm';

/** The `spot` block of summary.json. */
export interface SpotSummary {
  /** Instances given to the spot market (scale-ins; the initial inventory not counted). */
  donations: number;
  /**
   * Scale-outs by source, and the instance-hours they spent provisioning: until ready, or until a scale-in cancelled
   * them or the run ended (the fleet's wasted hours of those instances, `instanceHours` in sim/fleet.ts).
   */
  reclaims: Record<SpotSource, number>;
  provisioningInstanceHours: Record<SpotSource, number>;
  /** Instance-hours spent in the spot market, and what they earned at `revenueUsdPerInstanceHour`. */
  instanceHours: number;
  revenueUsd: number;
  /** Per region: spot instance-hours and revenue. */
  regions: Record<string, { instanceHours: number; revenueUsd: number }>;
  /** Instances in the spot pool at the end, and at most at once. */
  atEnd: number;
  peak: number;
}

interface Entry extends SpotVm {
  sinceS: number;
}

/**
 * SageServe's spot pool (§6.4, digest §2.1 and §3.9), one per region and VM shape: a scale-in donates the
 * instance (it keeps its weights); a scale-out reclaims, in this order, a donated instance of the same model
 * (`sameModelS`, ≈ 1 min; fixed or drawn per reclaim, `lead-time.ts`), one of another model of the same shape (`otherModelS`, ≈ 10 min: weights are loaded
 * again; `remoteWeightsS`, ≈ 2 h, when the region holds no copy of the weights, `weightsRegions`), else a fresh VM
 * (the pool's own `fleet.provisioning`, its model load taking the remote time instead of the local one when the
 * weights are remote). Among several candidates the one donated
 * longest ago goes first (the released code picks the other model at random). A donated instance earns
 * `revenueUsdPerInstanceHour` while it sits in the pool; it is not counted in the fleet's instance-hours.
 */
export class SpotPool {
  private readonly entries: Entry[] = [];
  private readonly stats: SpotSummary = {
    donations: 0,
    reclaims: { 'same-model': 0, 'other-model': 0, 'new-vm': 0 },
    provisioningInstanceHours: { 'same-model': 0, 'other-model': 0, 'new-vm': 0 },
    instanceHours: 0,
    revenueUsd: 0,
    regions: {},
    atEnd: 0,
    peak: 0,
  };

  /**
   * `rng` draws the lead times given as distributions (the simulator passes `rng.fork('spot-lead')`); fixed
   * lead times never draw.
   */
  constructor(
    readonly opts: SpotOptions,
    private readonly rng: Rng = new Rng(0).fork('spot-lead'),
  ) {
    for (const e of opts.initial) for (let i = 0; i < e.count; i++) this.put({ region: e.region, hardware: e.hardware, tp: e.tp, pp: e.pp, model: e.model }, 0);
  }

  get size(): number {
    return this.entries.length;
  }

  /** A stopped instance joins the spot market at `now`. */
  donate(vm: SpotVm, now: number): void {
    this.stats.donations++;
    this.put(vm, now);
  }

  /**
   * Capacity for one new instance of `want`: the source and its lead time (`newVm`: a fresh VM's acquisition and
   * local model load, `fleet.provisioning`). The reclaimed entry leaves the pool at `now`; the time the instance
   * then spends provisioning is booked with `provisioned` (the lead time unless cancelled or cut by the run's end).
   */
  reclaim(want: SpotVm, now: number, newVm: { acquireS: number; loadS: number }): { source: SpotSource; leadS: number } {
    let other = -1;
    let same = -1;
    for (let i = 0; i < this.entries.length && same < 0; i++) {
      const e = this.entries[i]!;
      if (e.region !== want.region || e.hardware !== want.hardware || e.tp !== want.tp || e.pp !== want.pp) continue;
      if (e.model === want.model) same = i;
      else if (other < 0) other = i;
    }
    const at = same >= 0 ? same : other;
    const source: SpotSource = same >= 0 ? 'same-model' : other >= 0 ? 'other-model' : 'new-vm';
    if (at >= 0) this.take(at, now);
    // The weights come from another region when this one has none of them (then loading takes remoteWeightsS).
    const regions = own(this.opts.weightsRegions, want.model);
    const local = regions === undefined || regions.includes(want.region);
    const leadS =
      source === 'same-model'
        ? sampleLeadTime(this.opts.sameModelS, this.rng)
        : source === 'other-model'
          ? local ? sampleLeadTime(this.opts.otherModelS, this.rng) : this.opts.remoteWeightsS
          : newVm.acquireS + (local ? newVm.loadS : this.opts.remoteWeightsS);
    this.stats.reclaims[source]++;
    return { source, leadS };
  }

  /** Books `hours` an instance started from `source` spent provisioning. */
  provisioned(source: SpotSource, hours: number): void {
    this.stats.provisioningInstanceHours[source] += hours;
  }

  /** Closes the accounts at the end of the run (the entries still donated earn up to `endS`). */
  summary(endS: number): SpotSummary {
    const s = structuredClone(this.stats);
    s.atEnd = this.entries.length;
    for (const e of this.entries) accrue(s, e, Math.max(0, endS - e.sinceS) / 3600, this.opts.revenueUsdPerInstanceHour);
    s.regions = Object.fromEntries(Object.keys(s.regions).sort().map((k) => [k, s.regions[k]!]));
    return s;
  }

  private put(vm: SpotVm, now: number): void {
    this.entries.push({ region: vm.region, hardware: vm.hardware, tp: vm.tp, pp: vm.pp, model: vm.model, sinceS: now });
    this.stats.peak = Math.max(this.stats.peak, this.entries.length);
  }

  private take(i: number, now: number): void {
    const e = this.entries.splice(i, 1)[0]!;
    accrue(this.stats, e, Math.max(0, now - e.sinceS) / 3600, this.opts.revenueUsdPerInstanceHour);
  }
}

function accrue(s: SpotSummary, e: Entry, hours: number, price: number): void {
  s.instanceHours += hours;
  s.revenueUsd += hours * price;
  const r = own(s.regions, e.region) ?? (s.regions[e.region] = { instanceHours: 0, revenueUsd: 0 });
  r.instanceHours += hours;
  r.revenueUsd += hours * price;
}
