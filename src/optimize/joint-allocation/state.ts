import { delayOf, kvPerGpu, type Coefficients } from './coefficients.ts';
import type { Allocation } from './evaluate.ts';

/**
 * Running state shared by GH, AGH's local search and consolidation (digest §3.1): the allocation plus the
 * aggregates every move needs in O(1) — per type error/delay used, per pair KV and compute load, storage and
 * budget spent, and the objective (8a) kept incrementally. `evaluate()` re-scores the final plan from scratch.
 */
export const EPS = 1e-9;

export class State {
  readonly I: number;
  readonly J: number;
  readonly K: number;
  cfg: Int32Array;
  x: Float64Array;
  z: Uint8Array;
  u: Float64Array;
  E: Float64Array; // Σ ē x per type
  D: Float64Array; // Σ D x per type
  kv: Float64Array; // KV GB per GPU per pair (under its config)
  load: Float64Array; // TFLOP/h per pair
  nTypes: Int32Array; // admitted types per pair
  storType: Float64Array;
  storPair: Float64Array;
  storGlobal = 0;
  c1 = 0; c2 = 0; c3 = 0;

  constructor(readonly c: Coefficients) {
    this.I = c.I; this.J = c.J; this.K = c.K;
    const JK = c.J * c.K, N = c.I * JK;
    this.cfg = new Int32Array(JK).fill(-1);
    this.x = new Float64Array(N);
    this.z = new Uint8Array(N);
    this.u = new Float64Array(c.I).fill(1);
    this.E = new Float64Array(c.I);
    this.D = new Float64Array(c.I);
    this.kv = new Float64Array(JK);
    this.load = new Float64Array(JK);
    this.nTypes = new Int32Array(JK);
    this.storType = new Float64Array(c.I);
    this.storPair = new Float64Array(JK);
  }

  clone(): State {
    const s = new State(this.c);
    s.cfg = this.cfg.slice(); s.x = this.x.slice(); s.z = this.z.slice(); s.u = this.u.slice();
    s.E = this.E.slice(); s.D = this.D.slice(); s.kv = this.kv.slice(); s.load = this.load.slice();
    s.nTypes = this.nTypes.slice(); s.storType = this.storType.slice(); s.storPair = this.storPair.slice();
    s.storGlobal = this.storGlobal; s.c1 = this.c1; s.c2 = this.c2; s.c3 = this.c3;
    return s;
  }

  t(i: number, pr: number): number {
    return i * this.J * this.K + pr;
  }

  gpus(pr: number): number {
    const cf = this.cfg[pr]!;
    return cf < 0 ? 0 : this.c.configs[cf]!.gpus;
  }

  budgetUsed(): number {
    return this.c1 + this.c2 + this.c3;
  }

  objective(): number {
    let o = this.c1 + this.c2 + this.c3;
    for (let i = 0; i < this.I; i++) o += this.c.delayCostPerS[i]! * this.D[i]! + this.c.unmetCost[i]! * this.u[i]!;
    return o;
  }

  toAllocation(): Allocation {
    return { cfg: this.cfg.slice(), x: this.x.slice(), z: this.z.slice(), u: this.u.slice() };
  }

  static fromAllocation(c: Coefficients, a: Allocation): State {
    const s = new State(c);
    for (let pr = 0; pr < c.J * c.K; pr++) if (a.cfg[pr]! >= 0) s.setConfig(pr, a.cfg[pr]!);
    for (let i = 0; i < c.I; i++) for (let pr = 0; pr < c.J * c.K; pr++) if (a.x[s.t(i, pr)]! > 0) s.add(i, pr, a.x[s.t(i, pr)]!);
    return s;
  }

  /** Storage room left for type i on pair pr under the configured scope (GB). */
  storageRoom(i: number, pr: number): number {
    const cap = this.c.p.storageCapGb;
    switch (this.c.p.options.storageScope) {
      case 'global': return cap - this.storGlobal;
      case 'per-type': return cap - this.storType[i]!;
      default: return cap - this.storPair[pr]!;
    }
  }

  /** Sets (activates / upgrades) a pair's config; updates rental, D of routed types and KV. */
  setConfig(pr: number, cf: number): void {
    const old = this.cfg[pr]!;
    if (old === cf) return;
    const c = this.c;
    this.c1 += c.rentalPerGpu[pr]! * ((cf < 0 ? 0 : c.configs[cf]!.gpus) - (old < 0 ? 0 : c.configs[old]!.gpus));
    const j = Math.floor(pr / this.K), k = pr % this.K;
    let kv = 0;
    for (let i = 0; i < this.I; i++) {
      const t = this.t(i, pr);
      const x = this.x[t]!;
      if (x <= 0) continue;
      if (old >= 0) this.D[i] -= delayOf(c, t, i, old) * x;
      if (cf >= 0) { this.D[i] += delayOf(c, t, i, cf) * x; kv += kvPerGpu(c, t, i, j, k, cf) * x; }
    }
    this.kv[pr] = kv;
    this.cfg[pr] = cf;
  }

  /**
   * Largest amount of type i that pair pr can take under config cf (its current one, an upgrade, or an
   * activation), respecting u, error (8j), delay (8i), compute (8g), memory with KV (8f), storage (8h)
   * and budget (8c). Returns 0 when nothing fits.
   */
  maxAdd(i: number, pr: number, cf: number): number {
    const c = this.c, p = c.p, t = this.t(i, pr);
    const j = Math.floor(pr / this.K), k = pr % this.K;
    const g = c.configs[cf]!.gpus;
    let a = this.u[i]!;
    const e = c.ebar[t]!;
    if (e > 0) a = Math.min(a, (p.types[i]!.errorSlo - this.E[i]!) / e);
    const d = delayOf(c, t, i, cf);
    const cur = this.cfg[pr]!;
    // A config change moves the delay of the type's existing routes on this pair too (not for a fresh type).
    const dUsed = this.D[i]! + (cur >= 0 && cur !== cf ? (delayOf(c, t, i, cf) - delayOf(c, t, i, cur)) * this.x[t]! : 0);
    if (d > 0) a = Math.min(a, (p.types[i]!.delaySloS - dUsed) / d);
    const cl = c.computeLoad[t]!;
    if (cl > 0) a = Math.min(a, (c.gpuTflopPerHour[pr]! * g - this.load[pr]!) / cl);
    let kvNow = this.kv[pr]!;
    if (cur >= 0 && cur !== cf) {
      kvNow = 0;
      for (let i2 = 0; i2 < this.I; i2++) {
        const t2 = this.t(i2, pr);
        if (this.x[t2]! > 0) kvNow += kvPerGpu(c, t2, i2, j, k, cf) * this.x[t2]!;
      }
    }
    const kvc = kvPerGpu(c, t, i, j, k, cf);
    const memRoom = p.tiers[k]!.memoryGb - c.weightsGb[pr]! / g - kvNow;
    if (memRoom < -1e-9) return 0;
    if (kvc > 0) a = Math.min(a, memRoom / kvc);
    const newZ = this.z[t] ? 0 : 1;
    const sRoom = this.storageRoom(i, pr) - newZ * p.models[j]!.weightsGb;
    if (sRoom < -1e-9) return 0;
    if (c.dataGb[t]! > 0) a = Math.min(a, sRoom / c.dataGb[t]!);
    const rentInc = c.rentalPerGpu[pr]! * Math.max(0, g - this.gpus(pr));
    const bRoom = p.budgetUsd - this.budgetUsed() - rentInc - newZ * c.modelStorageCost[t]!;
    if (bRoom < -1e-9) return 0;
    if (c.dataStorageCost[t]! > 0) a = Math.min(a, bRoom / c.dataStorageCost[t]!);
    return a > EPS ? a : 0;
  }

  /** Adds amount a of type i to pair pr (config must already be set). */
  add(i: number, pr: number, a: number): void {
    const c = this.c, t = this.t(i, pr), cf = this.cfg[pr]!;
    const j = Math.floor(pr / this.K), k = pr % this.K;
    if (!this.z[t]) {
      this.z[t] = 1;
      this.nTypes[pr]! += 1;
      this.c2 += c.modelStorageCost[t]!;
      const b = c.p.models[j]!.weightsGb;
      this.storGlobal += b; this.storType[i] += b; this.storPair[pr] += b;
    }
    this.x[t] += a;
    this.u[i] = Math.max(0, this.u[i]! - a);
    this.E[i] += c.ebar[t]! * a;
    this.D[i] += delayOf(c, t, i, cf) * a;
    this.load[pr] += c.computeLoad[t]! * a;
    this.kv[pr] += kvPerGpu(c, t, i, j, k, cf) * a;
    const s = c.dataGb[t]! * a;
    this.storGlobal += s; this.storType[i] += s; this.storPair[pr] += s;
    this.c3 += c.dataStorageCost[t]! * a;
  }

  /** Removes all of type i from pair pr (drops z; deactivates the pair when it empties). Returns the amount. */
  removeRoute(i: number, pr: number): number {
    const c = this.c, t = this.t(i, pr), cf = this.cfg[pr]!;
    const j = Math.floor(pr / this.K), k = pr % this.K;
    const a = this.x[t]!;
    if (a > 0) {
      this.x[t] = 0;
      this.u[i] += a;
      this.E[i] -= c.ebar[t]! * a;
      this.D[i] -= delayOf(c, t, i, cf) * a;
      this.load[pr] -= c.computeLoad[t]! * a;
      this.kv[pr] -= kvPerGpu(c, t, i, j, k, cf) * a;
      const s = c.dataGb[t]! * a;
      this.storGlobal -= s; this.storType[i] -= s; this.storPair[pr] -= s;
      this.c3 -= c.dataStorageCost[t]! * a;
    }
    if (this.z[t]) {
      this.z[t] = 0;
      this.nTypes[pr]! -= 1;
      this.c2 -= c.modelStorageCost[t]!;
      const b = c.p.models[j]!.weightsGb;
      this.storGlobal -= b; this.storType[i] -= b; this.storPair[pr] -= b;
    }
    if (this.nTypes[pr] === 0 && cf >= 0) {
      this.setConfig(pr, -1);
      this.load[pr] = 0; this.kv[pr] = 0;
    }
    return a;
  }
}
