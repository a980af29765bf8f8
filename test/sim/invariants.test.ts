import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Engine } from '../../src/engine/engine.ts';
import type { SimRequest } from '../../src/engine/request.ts';
import { RequestLog } from '../../src/metrics/collector.ts';
import { summarize, type Summary } from '../../src/metrics/summary.ts';
import { BUILTIN_CATALOG } from '../../src/model/catalog.ts';
import type { PerfModel } from '../../src/perf/types.ts';
import { ROUTER_NAMES, type RouterName } from '../../src/policy/routing/registry.ts';
import { scenarioSchema, type Scenario } from '../../src/scenario/schema.ts';
import { simulate, type SimResult } from '../../src/sim/simulator.ts';
import { linearPerf, outcomes } from '../helpers/sim.ts';

/*
 * Property-based invariants of the whole simulator: random small fleets (pools of two models, TP 1/2, PP 1/2,
 * tiny KV, three batch builders, every router incl. Llumnix's migration, SageServe's and PreServe's held
 * requests, no / reactive / scheduled scaling, regions with network delay, tier queue orders, optional endS)
 * over random traces with prompts that overflow KV or the context. Every run is checked for conservation,
 * per-request sanity, KV bounds, accounting and timeline sums; fast mode must equal step mode, a rerun must
 * equal itself, and a run cut at endS must be a prefix of the full run. The shrunk counterexamples that found
 * simulator bugs are kept as plain regression tests at the end.
 */

// ---- spies: every finish/drop the log records, and the engine's KV after every boundary ------------------

interface Spy {
  /** finish + drop records per request id (must end ≤ 1, = 1 when the run was not cut). */
  ends: Map<number, number>;
  problems: string[];
}
const spies = new WeakMap<RequestLog, Spy>();
let current: Spy | null = null;
const origArrive = RequestLog.prototype.arrive;
const origFinish = RequestLog.prototype.finish;
const origDrop = RequestLog.prototype.drop;
const origBoundary = Engine.prototype.onBoundary;
RequestLog.prototype.arrive = function (this: RequestLog, r: SimRequest) {
  if (current && !spies.has(this)) spies.set(this, current);
  return origArrive.call(this, r);
};
const spyOf = (log: RequestLog): Spy | undefined => spies.get(log);
RequestLog.prototype.finish = function (this: RequestLog, r: SimRequest) {
  const s = spyOf(this);
  if (s) {
    s.ends.set(r.id, (s.ends.get(r.id) ?? 0) + 1);
    if (r.generated !== r.outputTokens) s.problems.push(`request ${r.id} finished with ${r.generated} of ${r.outputTokens} tokens`);
    if (r.status !== 'done') s.problems.push(`request ${r.id} finished with status ${r.status}`);
  }
  return origFinish.call(this, r);
};
RequestLog.prototype.drop = function (this: RequestLog, r: SimRequest, reason: string) {
  const s = spyOf(this);
  if (s) s.ends.set(r.id, (s.ends.get(r.id) ?? 0) + 1);
  return origDrop.call(this, r, reason);
};
Engine.prototype.onBoundary = function (this: Engine, now: number) {
  const next = origBoundary.call(this, now);
  const s = current;
  if (s && s.problems.length < 5) {
    const { kvBlocks, scheduler } = this.cfg;
    if (this.reservedTokens < 0) s.problems.push(`engine ${this.id} at ${now}: ${this.reservedTokens} tokens reserved`);
    if (this.usedBlocks < 0 || this.usedBlocks > kvBlocks) s.problems.push(`engine ${this.id} at ${now}: ${this.usedBlocks} of ${kvBlocks} blocks used`);
    if (scheduler === 'splitwise') {
      // Reservations may overrun the capacity only by the documented deadlock breaker (scheduler-splitwise.ts: when
      // admitted prompts hold all KV, the oldest decode runs over its reservation); they must add up, though.
      let held = 0;
      for (const r of this.running) held += r.reservedTokens;
      if (held !== this.reservedTokens) s.problems.push(`engine ${this.id} at ${now}: requests reserve ${held} tokens, reservedTokens ${this.reservedTokens}`);
      if (this.usedBlocks !== 0) s.problems.push(`engine ${this.id} at ${now}: splitwise engine uses ${this.usedBlocks} blocks`);
    } else {
      // Blocks shared through the prefix cache are counted once, by the engine; each request holds its own besides.
      let held = this.migrationBlocks + this.sharedBlocks;
      for (const r of this.running) {
        held += r.blocks;
        if (r.sharedTokens !== (r.heldHashes?.length ?? 0) * r.prefixBlockTokens) s.problems.push(`engine ${this.id} at ${now}: request ${r.id} shares ${r.sharedTokens} tokens in ${r.heldHashes?.length ?? 0} blocks`);
      }
      this.waiting.forEach((r) => {
        held += r.blocks;
        if (r.heldHashes !== null) s.problems.push(`engine ${this.id} at ${now}: waiting request ${r.id} holds shared blocks`);
      });
      // Every shared block has exactly as many holders as running requests that list it.
      const refs = new Map<number, number>();
      for (const r of this.running) for (const h of r.heldHashes ?? []) refs.set(h, (refs.get(h) ?? 0) + 1);
      let heldTokens = 0;
      for (const [h, n] of refs) {
        if (this.prefixCache?.holders(h) !== n) s.problems.push(`engine ${this.id} at ${now}: block ${h} has ${this.prefixCache?.holders(h)} holders, ${n} requests hold it`);
        heldTokens += this.running.find((r) => r.heldHashes?.includes(h))!.prefixBlockTokens;
      }
      if ((this.prefixCache?.heldTokens ?? 0) !== heldTokens) s.problems.push(`engine ${this.id} at ${now}: ${this.prefixCache?.heldTokens} held tokens, requests hold ${heldTokens}`);
      if (this.sharedBlocks !== Math.ceil((this.prefixCache?.heldTokens ?? 0) / this.cfg.blockTokens)) s.problems.push(`engine ${this.id} at ${now}: ${this.sharedBlocks} shared blocks for ${this.prefixCache?.heldTokens} held tokens`);
      if (held !== this.usedBlocks) s.problems.push(`engine ${this.id} at ${now}: requests hold ${held} blocks, usedBlocks ${this.usedBlocks}`);
    }
    if (this.pendingTokens < 0) s.problems.push(`engine ${this.id} at ${now}: pendingTokens ${this.pendingTokens}`);
  }
  return next;
};
after(() => {
  RequestLog.prototype.arrive = origArrive;
  RequestLog.prototype.finish = origFinish;
  RequestLog.prototype.drop = origDrop;
  Engine.prototype.onBoundary = origBoundary;
});

// ---- traces -----------------------------------------------------------------------------------------------

interface TReq {
  t: number;
  in: number;
  out: number;
  model: string;
  tier: string;
  region: string;
  /** Prompt prefix group (0–3): requests of a group share their first ≤ 256 tokens' block hashes. */
  group: number;
}
const dir = mkdtempSync(join(tmpdir(), 'llmfleet-inv-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let traceNo = 0;
/** Canonical JSONL with block hashes (16 tokens a block): a group's shared blocks, then blocks of the request's own. */
function writeTrace(reqs: readonly TReq[]): string {
  const path = join(dir, `t${traceNo++}.jsonl`);
  const rows = reqs.map((r, i) => {
    const shared = Math.floor(Math.min(r.in, 256) / 16);
    const hashes = Array.from({ length: Math.min(Math.ceil(r.in / 16), 64) }, (_, k) => (k < shared ? r.group * 1000 + k : -(i * 1000 + k + 1)));
    return JSON.stringify({ arrival_s: r.t, input_tokens: r.in, output_tokens: r.out, model: r.model, tier: r.tier, region: r.region, hash_ids: hashes, hash_block_tokens: 16 });
  });
  writeFileSync(path, rows.join('\n') + '\n');
  return path;
}

const MODELS = ['llama3.1-8b', 'llama2-7b'] as const; // contexts 131,072 and 4,096; both have 32 heads (TP 1 or 2)
const UNSERVED = 'mistral-7b';

const tokensIn = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 300 }) },
  { weight: 4, arbitrary: fc.integer({ min: 300, max: 1500 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1500, max: 12000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 200_000 }) }, // beyond every KV here, and llama2's context
);
const tokensOut = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 100 }) },
  { weight: 3, arbitrary: fc.integer({ min: 100, max: 600 }) },
  { weight: 1, arbitrary: fc.integer({ min: 600, max: 2000 }) },
);

/** Requests with a model pick: 0–23 one of the pools' models (see `traceFor`), 24 a model no pool serves. */
const traceArb = (maxLength: number) =>
  fc
    .array(
      fc.record({
        gap: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.05, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
        in: tokensIn,
        out: tokensOut,
        pick: fc.oneof({ weight: 30, arbitrary: fc.integer({ min: 0, max: 23 }) }, { weight: 1, arbitrary: fc.constant(24) }),
        tier: fc.constantFrom('', '', 'iw-f', 'niw'),
        region: fc.constantFrom('', 'east', 'west'),
        group: fc.integer({ min: 0, max: 3 }),
      }),
      { minLength: 1, maxLength, size: 'max' },
    )
    .map((rs) => {
      let t = 0;
      return rs.map(({ gap, ...r }) => ({ ...r, t: (t += gap) }));
    });
type PickedReq = Omit<TReq, 'model'> & { pick: number };

/** The requests of a generated trace, each for the model of the pool its pick names (or an unserved one). */
function traceFor(rs: readonly PickedReq[], c: Cfg): TReq[] {
  return rs.map(({ pick, ...r }) => ({ ...r, model: pick === 24 ? UNSERVED : c.pools[pick % c.pools.length]!.model }));
}

const poolArb = fc.record({
  model: fc.constantFrom(...MODELS),
  hardware: fc.constantFrom('h100-80gb', 'a100-80gb'),
  tp: fc.constantFrom(1, 2),
  pp: fc.constantFrom(1, 1, 2),
  count: fc.integer({ min: 0, max: 2 }),
  /** KV capacity in tokens (whole blocks of the scenario's blockTokens): tight, moderate or roomy. */
  kvTokens: fc.oneof(fc.integer({ min: 64, max: 1000 }), fc.integer({ min: 1000, max: 6400 }), fc.integer({ min: 6400, max: 48_000 })),
  contextLength: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.integer({ min: 256, max: 8192 }) }),
  region: fc.constantFrom('', 'east', 'west'),
});

const cfgArb = fc.record({
  pools: fc.array(poolArb, { minLength: 1, maxLength: 3 }),
  scheduler: fc.constantFrom('vllm', 'vllm-v0', 'splitwise'),
  chunkedPrefill: fc.boolean(),
  maxNumSeqs: fc.oneof(fc.integer({ min: 1, max: 32 }), fc.constant(256)),
  blockTokens: fc.constantFrom(16, 16, 1, 8, 32),
  maxBatchedTokens: fc.integer({ min: 16, max: 4096 }),
  router: fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...ROUTER_NAMES) }, { weight: 2, arbitrary: fc.constant<RouterName>('llumnix') }),
  routerVariant: fc.integer({ min: 0, max: 2 }),
  scaling: fc.constantFrom('none', 'reactive', 'scheduled'),
  intervalS: fc.constantFrom(0.5, 1, 5),
  provisionS: fc.constantFrom(0, 0.5, 3),
  actions: fc.array(fc.record({ atS: fc.double({ min: 0, max: 8, noNaN: true }), add: fc.boolean(), pool: fc.nat(2), count: fc.integer({ min: 1, max: 2 }) }), { maxLength: 3 }),
  endS: fc.option(fc.constantFrom(0.5, 1, 2, 3.7, 10), { nil: undefined }),
  timelineIntervalS: fc.constantFrom(0.25, 0.5, 1, 2),
  prediction: fc.constantFrom('oracle', 'noisy-oracle', 'key-quantiles', 'online-regressor'),
  seed: fc.integer({ min: 0, max: 1000 }),
  roofline: fc.boolean(),
  /** Seconds between two different regions (`network.crossRegionS`), or no network section. */
  crossRegionS: fc.option(fc.constantFrom(0.01, 0.3), { nil: undefined }),
  queueOrder: fc.constantFrom('fcfs', 'fcfs', 'edf', 'pf', 'dpa'),
  drainOrder: fc.constantFrom('newest', 'least-loaded'),
  prefixCache: fc.boolean(),
});
type Cfg = typeof cfgArb extends fc.Arbitrary<infer T> ? T : never;

function routingFor(router: RouterName, variant: number, scheduler: string): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (router === 'preserve') options.admission = (['always', 'queue', 'defer'] as const)[variant];
  if (router === 'llumnix' && variant > 0 && scheduler !== 'splitwise') options.migration = { enabled: true };
  if (router === 'sageserve') options.holdNiw = variant !== 2;
  return { policy: router, options };
}

function scenarioOf(path: string, c: Cfg): Scenario {
  const names = c.pools.map((_, i) => `p${i}`);
  const anyServing = c.pools.some((p) => p.count > 0);
  return scenarioSchema.parse({
    name: 'inv',
    seed: c.seed,
    workload: { trace: { path, format: 'jsonl' } },
    fleet: {
      pools: c.pools.map((p, i) => ({
        name: names[i],
        model: p.model,
        hardware: p.hardware,
        tp: p.tp,
        pp: p.pp,
        // Something must serve without a scaler; a reactive scaler starts pools from zero by itself.
        count: !anyServing && c.scaling !== 'reactive' && i === 0 ? 1 : p.count,
        minCount: 0,
        maxCount: 3,
        region: p.region,
        ...(p.contextLength ? { contextLength: p.contextLength } : {}),
        engine: { kvBlocks: Math.max(1, Math.floor(p.kvTokens / c.blockTokens)) },
      })),
      provisioning: { vmAcquireS: c.provisionS, modelLoadS: 0 },
    },
    engine: {
      scheduler: c.scheduler,
      chunkedPrefill: c.scheduler === 'vllm' && c.chunkedPrefill,
      maxNumSeqs: c.maxNumSeqs,
      maxBatchedTokens: c.maxBatchedTokens,
      blockTokens: c.blockTokens,
      prefixCache: c.prefixCache && c.scheduler !== 'splitwise',
    },
    routing: routingFor(c.router, c.routerVariant, c.scheduler),
    scaling: {
      policy: c.scaling,
      intervalS: c.intervalS,
      downCooldownS: 1,
      drainOrder: c.drainOrder,
      actions:
        c.scaling === 'scheduled'
          ? c.actions.map((a) => ({ atS: a.atS, action: a.add ? 'add' : 'drain', pool: names[a.pool % names.length], count: a.count }))
          : [],
    },
    prediction: { length: c.prediction },
    // Tier deadlines short enough that DPA's expiry and urgency and the NIW promotion all happen in a run.
    scheduling: { policy: c.queueOrder, options: { ttftS: { 'iw-f': 0.5, niw: 5 }, tauNS: 1, tauPS: 0.2, promoteAfterS: 2 } },
    ...(c.crossRegionS !== undefined ? { network: { crossRegionS: c.crossRegionS } } : {}),
    output: { timelineIntervalS: c.timelineIntervalS },
    maxDeferS: 20,
    ...(c.endS !== undefined ? { endS: c.endS } : {}),
  });
}

// ---- the invariants of one run ---------------------------------------------------------------------------

const DROP_REASONS = new Set(['context-length', 'exceeds-kv-capacity', 'unknown-model', 'no-instance', 'held']);

interface Checked {
  res: SimResult;
  summary: Summary;
}

/** Runs a scenario with the spies on and checks every per-run invariant; returns the result for comparisons. */
function runChecked(sc: Scenario, reqs: readonly TReq[] | null, mode: 'fast' | 'step', perf: PerfModel | undefined = linearPerf): Checked {
  const spy: Spy = { ends: new Map(), problems: [] };
  current = spy;
  let res: SimResult;
  try {
    res = simulate(sc, '.', { mode, perf });
  } finally {
    current = null;
  }
  const summary = summarize(res, 0);
  const log = res.log;
  const cut = sc.endS !== undefined && res.endS === sc.endS;
  const migrating = res.migrations !== undefined;
  const where = (i: number) => `request ${i} (${mode})`;
  const close = (x: number, y: number, what: string) => assert.ok(Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y)), `${what}: ${x} vs ${y}`);

  assert.deepEqual(spy.problems, []);
  // Conservation: every arrival is in the log and ends at most once; exactly once unless the run was cut at endS.
  if (reqs !== null) {
    const expected = sc.endS === undefined ? reqs.length : reqs.filter((r) => r.t <= sc.endS!).length;
    assert.equal(log.n, expected, 'arrivals in the request log');
  }
  assert.equal(summary.requests.total, log.n);
  assert.equal(summary.requests.total, summary.requests.completed + summary.requests.dropped + summary.requests.unfinished);
  for (let i = 0; i < log.n; i++) {
    const ends = spy.ends.get(i) ?? 0;
    assert.ok(ends <= 1, `${where(i)} recorded ${ends} times`);
    if (!cut) assert.equal(ends, 1, `${where(i)} neither completed nor dropped`);
    assert.equal(ends === 1, log.isDone(i) || log.isDropped(i), `${where(i)}: log status vs records`);
  }
  if (!cut) assert.equal(summary.requests.unfinished, 0);
  const dropSum = Object.values(summary.requests.dropReasons).reduce((a, b) => a + b, 0);
  assert.equal(dropSum, summary.requests.dropped);

  // Per request: drop reasons as documented, completed requests with ordered, finite times.
  const poolByName = new Map(res.pools.map((p, i) => [p.name, { rt: p, spec: sc.fleet.pools[i]! }]));
  const context = new Map<string, number>();
  for (const p of sc.fleet.pools) {
    const limit = p.contextLength ?? BUILTIN_CATALOG.models[p.model]!.contextLength;
    context.set(p.model, Math.max(limit, context.get(p.model) ?? 0));
  }
  const contextOf = (pool: string) => {
    const spec = poolByName.get(pool)!.spec;
    return spec.contextLength ?? BUILTIN_CATALOG.models[spec.model]!.contextLength;
  };
  for (let i = 0; i < log.n; i++) {
    const model = log.models[log.modelIdx[i]!]!;
    const total = log.input[i]! + log.output[i]!;
    const inst = log.instance[i]! >= 0 ? res.fleet.instances[log.instance[i]!] : undefined;
    if (log.isDropped(i)) {
      const reason = log.dropReasons[log.dropIdx[i]!]!;
      assert.ok(DROP_REASONS.has(reason), `${where(i)}: unknown drop reason ${reason}`);
      assert.equal(reason === 'unknown-model', !context.has(model), `${where(i)}: ${reason} for model ${model}`);
      // Too long for every pool of the model: dropped on arrival; too long for the pool routed to: dropped there.
      if (context.has(model) && total > context.get(model)!) assert.equal(reason, 'context-length', `${where(i)}: ${total} tokens`);
      if (reason === 'context-length' && inst) assert.ok(total > contextOf(inst.pool), `${where(i)}: ${reason} with ${total} tokens on pool ${inst.pool}`);
      if (reason === 'context-length' && !inst) assert.ok(total > context.get(model)!, `${where(i)}: ${reason} with ${total} tokens`);
      if (reason === 'exceeds-kv-capacity') {
        assert.ok(inst, `${where(i)}: dropped at an instance without one`);
        const e = inst.engine.cfg;
        assert.ok(Math.ceil(total / e.blockTokens) > e.kvBlocks, `${where(i)}: ${total} tokens fit ${e.kvBlocks} blocks`);
      }
      continue;
    }
    if (!log.isDone(i)) continue;
    const a = log.arrival[i]!;
    const q = log.queue[i]!;
    const ttft = log.ttft[i]!;
    const e2e = log.e2e[i]!;
    for (const [k, v] of [['queue', q], ['ttft', ttft], ['e2e', e2e], ['tpot', log.tpot(i)]] as const) {
      assert.ok(Number.isFinite(v) && v >= 0, `${where(i)}: ${k} = ${v}`);
    }
    assert.ok(q <= ttft && ttft <= e2e, `${where(i)}: queue ${q} ttft ${ttft} e2e ${e2e}`);
    if (cut) assert.ok(a + e2e <= res.endS, `${where(i)} completed after the end`);
    assert.ok(inst, `${where(i)} completed without an instance`);
    assert.equal(inst.model, model, `${where(i)} served by a ${inst.model} instance`);
    const e = inst.engine.cfg;
    assert.ok(Math.ceil(total / e.blockTokens) <= e.kvBlocks, `${where(i)}: ${total} tokens completed in ${e.kvBlocks} blocks`);
    const limit = contextOf(inst.pool);
    assert.ok(total <= limit, `${where(i)}: ${total} tokens served by pool ${inst.pool} whose context is ${limit}`);
    // A migrated request records its last instance but its first scheduling (on another one).
    const since = migrating ? a + e2e : a + q;
    assert.ok(inst.readyS <= since + 1e-9, `${where(i)} scheduled at ${a + q}, done at ${a + e2e} on instance ${inst.id} ready at ${inst.readyS}`);
    if (inst.stoppedS >= 0) assert.ok(a + e2e <= inst.stoppedS + 1e-9, `${where(i)} finished at ${a + e2e} on instance ${inst.id} stopped at ${inst.stoppedS}`);
  }

  if (res.migrations) {
    const m = res.migrations;
    assert.equal(m.ordered, m.completed + m.refused + m.dropped + m.inFlight, `migrations ${JSON.stringify(m)}`);
    if (!cut) assert.equal(m.inFlight, 0, 'a finished run leaves no migration under way');
  }

  // Nothing in the summary is NaN or infinite.
  const walk = (o: unknown, path: string): void => {
    if (typeof o === 'number') assert.ok(Number.isFinite(o), `summary ${path} = ${o}`);
    else if (o !== null && typeof o === 'object') for (const [k, v] of Object.entries(o)) walk(v, `${path}.${k}`);
  };
  walk(summary, 'summary');

  // Summary blocks agree with each other: attainments are fractions bounded by the completions, percentiles are
  // ordered, and per request queue ≤ TTFT ≤ E2E carries over to every order statistic.
  const { slo, requests } = summary;
  for (const k of ['attainment', 'ttftAttainment', 'tpotAttainment'] as const) assert.ok(slo[k] >= 0 && slo[k] <= 1, `slo.${k} = ${slo[k]}`);
  assert.ok(slo.attainment <= Math.min(slo.ttftAttainment, slo.tpotAttainment) + 1e-12);
  assert.ok(slo.ttftAttainment * requests.total <= requests.completed + 1e-9);
  for (const k of ['ttft', 'tpot', 'tbt', 'e2e', 'queue', 'normalizedE2e'] as const) {
    const d = summary[k];
    assert.ok(d.p50 <= d.p90 && d.p90 <= d.p95 && d.p95 <= d.p99, `${k} percentiles ${JSON.stringify(d)}`);
  }
  for (const p of ['p50', 'p90', 'p95', 'p99', 'mean'] as const) {
    assert.ok(summary.queue[p] <= summary.ttft[p] + 1e-12 && summary.ttft[p] <= summary.e2e[p] + 1e-12, `${p}: queue ${summary.queue[p]} ttft ${summary.ttft[p]} e2e ${summary.e2e[p]}`);
  }
  if (res.endS > 0) close(summary.throughput.requestsPerSecond * res.endS, requests.completed, 'throughput × time');
  if (summary.tiers) {
    const untiered = log.tiers.indexOf('');
    let rest = 0;
    for (let i = 0; i < log.n; i++) if (log.tierIdx[i] === untiered) rest++;
    for (const k of ['total', 'completed', 'dropped', 'unfinished'] as const) {
      const inTiers: number = Object.values(summary.tiers).reduce((a: number, b) => a + b.requests[k], 0);
      if (k === 'total') assert.equal(inTiers + rest, requests.total, 'tier totals');
      else assert.ok(inTiers <= requests[k], `tier ${k}`);
    }
  }

  // Timeline: counts add up to the summary's, KV utilisation within [0, 1], times increasing to the end.
  const rows = res.timeline.rows;
  const sum = (k: 'arrivals' | 'completions' | 'drops') => rows.reduce((s, r) => s + r[k], 0);
  assert.equal(sum('arrivals'), summary.requests.total, 'timeline arrivals');
  assert.equal(sum('completions'), summary.requests.completed, 'timeline completions');
  assert.equal(sum('drops'), summary.requests.dropped, 'timeline drops');
  const seats = res.fleet.instances.reduce((a, i) => a + i.engine.cfg.maxNumSeqs, 0);
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!;
    for (const [key, v] of Object.entries(r)) assert.ok(Number.isFinite(v) && v >= 0, `timeline ${key} = ${v} at ${r.tS}`);
    assert.ok(r.provisioning + r.ready + r.draining <= res.fleet.instances.length, `timeline instances at ${r.tS}`);
    // vLLM admits no more than maxNumSeqs; SplitwiseSim's limit is per batch (paused decodes stay resident), and a
    // migrated request joins the destination's running set whatever its size (as in Llumnix's vLLM backend).
    if (sc.engine.scheduler !== 'splitwise' && !migrating) assert.ok(r.running <= seats, `timeline running ${r.running} > ${seats} seats at ${r.tS}`);
    assert.ok(r.kvUtilization >= 0, `timeline kvUtilization ${r.kvUtilization} at ${r.tS}`);
    if (sc.engine.scheduler !== 'splitwise') assert.ok(r.kvUtilization <= 1 + 1e-12, `timeline kvUtilization ${r.kvUtilization} at ${r.tS}`);
    if (k > 0) assert.ok(r.tS > rows[k - 1]!.tS, `timeline rows out of order at ${r.tS}`);
  }
  assert.equal(rows[rows.length - 1]!.tS, res.endS, 'last timeline row at the end');

  // Accounting: instance-hours, GPU-hours and cost from the instances' own lifetimes.
  let instH = 0;
  let gpuH = 0;
  let cost = 0;
  for (const inst of res.fleet.instances) {
    const lead = inst.readyS - inst.createdS;
    const prov = inst.poolRt.provisioning;
    const fixed = typeof prov.vmAcquireS === 'number' && typeof prov.modelLoadS === 'number' ? prov.vmAcquireS + prov.modelLoadS : NaN;
    assert.ok(lead === 0 || Number.isNaN(fixed) || Math.abs(lead - fixed) < 1e-9, `instance ${inst.id} ready ${lead} s after its start`);
    assert.ok(inst.createdS <= res.endS, `instance ${inst.id} created after the end`);
    if (inst.stoppedS >= 0) assert.ok(inst.createdS <= inst.stoppedS && inst.stoppedS <= res.endS, `instance ${inst.id} stopped at ${inst.stoppedS}`);
    const h = ((inst.stoppedS >= 0 ? inst.stoppedS : res.endS) - inst.createdS) / 3600;
    instH += h;
    gpuH += h * inst.poolRt.devices;
    cost += h * inst.poolRt.devices * inst.poolRt.priceUsdPerDeviceHour;
  }
  close(summary.fleet.instanceHours, instH, 'instance-hours');
  close(summary.fleet.gpuHours, gpuH, 'GPU-hours');
  close(summary.fleet.costUsd, cost, 'cost');
  assert.ok(summary.fleet.wastedGpuHours <= summary.fleet.gpuHours + 1e-12);
  assert.ok(summary.fleet.peakInstances <= summary.fleet.instances);
  if (sc.scaling.policy === 'none' && sc.scaling.actions.length === 0) {
    const count = sc.fleet.pools.reduce((s, p) => s + p.count, 0);
    close(summary.fleet.instanceHours, (count * res.endS) / 3600, 'static fleet instance-hours');
    assert.equal(summary.fleet.wastedGpuHours, 0);
  }

  // A finished run leaves every engine empty with its KV returned, and no instance draining for ever.
  if (!cut) {
    for (const inst of res.fleet.instances) {
      const e = inst.engine;
      assert.equal(e.numRunning + e.numWaiting, 0, `instance ${inst.id} still holds requests`);
      // A migration whose request finished before its next copy stage is settled at the end, its blocks released.
      assert.equal(e.usedBlocks, 0, `instance ${inst.id} still holds KV blocks`);
      assert.equal(e.reservedTokens, 0, `instance ${inst.id} still holds reserved tokens`);
      assert.equal(e.pendingTokens, 0, `instance ${inst.id} pendingTokens`);
      assert.equal(e.isBusy, false, `instance ${inst.id} busy at the end`);
      assert.notEqual(inst.state, 'draining', `instance ${inst.id} draining at the end with nothing left`);
    }
  }
  return { res, summary };
}

const withoutWall = (s: Summary) => ({ ...s, sim: { ...s.sim, wallSeconds: 0 } });
const withoutEvents = (s: Summary) => ({ ...s, sim: { ...s.sim, wallSeconds: 0, events: 0 } });

// ---- properties -------------------------------------------------------------------------------------------

/**
 * fc.assert, with the failing assertion's own message in the report (the test runner prints no `cause`).
 * For a longer hunt: LLMFLEET_INV_SCALE=20 multiplies every numRuns, LLMFLEET_INV_SEED=n replaces every seed.
 */
const SCALE = Number(process.env.LLMFLEET_INV_SCALE ?? 1);
const SEED = process.env.LLMFLEET_INV_SEED;
function check<Ts extends [unknown, ...unknown[]]>(prop: fc.IProperty<Ts>, params: fc.Parameters<Ts>): void {
  const out = fc.check(prop, { ...params, numRuns: Math.round((params.numRuns ?? 100) * SCALE), ...(SEED !== undefined ? { seed: Number(SEED) } : {}) });
  if (out.failed) {
    const err = out.errorInstance;
    throw new Error(`${fc.defaultReportMessage(out)}\n${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Runs a generated case in both modes: every invariant in each, and the same requests, timeline and summary. */
function fastEqualsStep(picked: readonly PickedReq[], c: Cfg): void {
  const reqs = traceFor(picked, c);
  const sc = scenarioOf(writeTrace(reqs), c);
  const perf = c.roofline ? undefined : linearPerf;
  const fast = runChecked(sc, reqs, 'fast', perf);
  const step = runChecked(sc, reqs, 'step', perf);
  assert.deepEqual(outcomes(fast.res), outcomes(step.res));
  assert.deepEqual(fast.res.timeline.rows, step.res.timeline.rows);
  assert.deepEqual(withoutEvents(fast.summary), withoutEvents(step.summary));
}

test('random fleets and traces: conservation, per-request sanity, KV bounds, accounting; fast ≡ step', () => {
  check(fc.property(traceArb(60), cfgArb, fastEqualsStep), { numRuns: 200, seed: 20240501 });
});

test('a seeded synthetic workload gives the same summary twice (except wall time)', () => {
  check(
    fc.property(cfgArb, fc.integer({ min: 1, max: 200 }), fc.double({ min: 1, max: 50, noNaN: true }), (c, maxRequests, rate) => {
      const base = scenarioOf('unused.csv', { ...c, endS: undefined });
      const sc = scenarioSchema.parse({
        ...base,
        workload: {
          synthetic: {
            durationS: 30,
            maxRequests,
            arrivals: { kind: 'poisson', ratePerS: rate },
            lengths: { kind: 'lognormal', input: { mu: 6, sigma: 1.5, max: 200_000 }, output: { mu: 3.5, sigma: 1, max: 2000 } },
            labels: { model: Object.fromEntries(c.pools.map((p) => [p.model, 1])), tier: { 'iw-f': 1, niw: 1 } },
          },
        },
      });
      const a = runChecked(sc, null, 'fast');
      const b = runChecked(sc, null, 'fast');
      assert.deepEqual(withoutWall(a.summary), withoutWall(b.summary));
      assert.deepEqual(outcomes(a.res), outcomes(b.res));
    }),
    { numRuns: 40, seed: 99 },
  );
});

test('a run cut at endS is a prefix of the full run: the same outcomes, instances and timeline up to endS', () => {
  check(
    fc.property(traceArb(60), cfgArb, fc.double({ min: 0.05, max: 1, noNaN: true }), (picked, c0, frac) => {
      const reqs = traceFor(picked, c0);
      const path = writeTrace(reqs);
      const c = { ...c0, endS: undefined };
      const fullSc = scenarioOf(path, c);
      const full = runChecked(fullSc, reqs, 'fast');
      const endS = Math.max(0.01, frac * full.res.endS);
      const cut = runChecked({ ...fullSc, endS }, reqs, 'fast');
      const f = full.res.log;
      const k = cut.res.log;
      const row = (l: typeof f, i: number) => [l.status[i], l.instance[i], l.queue[i], l.ttft[i], l.e2e[i], l.preemptions[i]].join(' ');
      for (let i = 0; i < k.n; i++) {
        assert.equal(k.arrival[i], f.arrival[i]);
        if (k.isDone(i)) assert.equal(row(k, i), row(f, i), `request ${i}, done by ${endS}`);
        else if (f.isDone(i)) assert.ok(f.arrival[i]! + f.e2e[i]! > endS - 1e-9, `request ${i} done at ${f.arrival[i]! + f.e2e[i]!} in the full run, not by ${endS}`);
        if (k.isDropped(i)) {
          const reason = k.dropReasons[k.dropIdx[i]!]!;
          // Still waiting for an instance (or held) at the cut: dropped then, whatever came later.
          if (reason !== 'no-instance' && reason !== 'held') assert.equal(`${row(k, i)} ${reason}`, `${row(f, i)} ${f.dropReasons[f.dropIdx[i]!]}`, `request ${i} dropped`);
        }
      }
      for (const inst of cut.res.fleet.instances) {
        const g = full.res.fleet.instances[inst.id]!;
        assert.deepEqual([inst.pool, inst.createdS, inst.readyS], [g.pool, g.createdS, g.readyS], `instance ${inst.id}`);
        if (inst.stoppedS >= 0) assert.equal(inst.stoppedS, g.stoppedS, `instance ${inst.id} stop`);
      }
      const before = (rows: typeof full.res.timeline.rows) => rows.filter((r) => r.tS < endS);
      assert.deepEqual(before(cut.res.timeline.rows), before(full.res.timeline.rows));
    }),
    { numRuns: 80, seed: 4242 },
  );
});

test('traces of up to 200 requests on small fleets: every invariant, fast ≡ step', () => {
  check(fc.property(traceArb(200), cfgArb, fastEqualsStep), { numRuns: 40, seed: 777 });
});

// ---- regressions: the shrunk counterexamples of the properties above, with their concrete values ----------

/** A scenario over an in-test trace (each request 1 + 1 tokens at 0 s for llama3.1-8b unless it says otherwise). */
function regression(reqs: readonly Partial<TReq>[], raw: Record<string, unknown>): Scenario {
  const path = writeTrace(reqs.map((r) => ({ t: 0, in: 1, out: 1, model: 'llama3.1-8b', tier: '', region: '', group: 0, ...r })));
  return scenarioSchema.parse({ workload: { trace: { path, format: 'jsonl' } }, ...raw });
}

test('regression: drops counted after the last sample at the end time still reach the timeline; a cut at endS leaves the deferred unfinished', () => {
  // No instance until 3 s (or never). Cut at 0.5 s, exactly on a sample: the deferred request is unfinished, in the
  // last row's deferred count (it was dropped as 'no-instance', though it would have been served at 3 s). Without
  // a scaler the run ends on its own with the request never served: dropped, and the timeline's drop counts add
  // up to the summary's (they summed to 0 while the summary said 1).
  const fleet = { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 0, maxCount: 3 }], provisioning: { vmAcquireS: 3, modelLoadS: 0 } };
  const cut = regression([{ t: 0 }], { fleet, scaling: { policy: 'reactive', intervalS: 0.5 }, output: { timelineIntervalS: 0.25 }, endS: 0.5 });
  const never = regression([{ t: 0 }], { fleet, output: { timelineIntervalS: 0.25 } });
  for (const mode of ['fast', 'step'] as const) {
    const res = simulate(cut, '.', { mode, perf: linearPerf });
    const s = summarize(res, 0).requests;
    assert.deepEqual([s.dropped, s.unfinished, s.dropReasons], [0, 1, {}]);
    assert.deepEqual([res.timeline.rows.at(-1)!.tS, res.timeline.rows.at(-1)!.deferred], [0.5, 1]);
    assert.equal(res.timeline.rows.reduce((n, r) => n + r.drops, 0), 0);
    const ended = simulate(never, '.', { mode, perf: linearPerf });
    assert.deepEqual(summarize(ended, 0).requests.dropReasons, { 'no-instance': 1 });
    assert.equal(ended.timeline.rows.reduce((n, r) => n + r.drops, 0), 1);
  }
});

test("regression: a pool's contextLength holds for the requests routed to it, not only for the longest pool's", () => {
  // Two pools of one model, contexts 256 and 131,072: round-robin sent the second 260-token request to the
  // 256-token pool, which served it.
  const sc = regression([{ t: 0, in: 200, out: 60 }, { t: 0.1, in: 200, out: 60 }], {
    fleet: {
      pools: [
        { name: 'long', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 },
        { name: 'short', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1, contextLength: 256 },
      ],
    },
    routing: { policy: 'round-robin' },
  });
  for (const mode of ['fast', 'step'] as const) {
    const res = simulate(sc, '.', { mode, perf: linearPerf });
    assert.ok(res.log.isDone(0));
    assert.equal(res.log.instance[0], 0);
    assert.ok(res.log.isDropped(1));
    assert.equal(res.log.instance[1], 1);
    assert.equal(res.log.dropReasons[res.log.dropIdx[1]!], 'context-length');
  }
});

test('regression: a request held at the gateway with no instance left and nothing to bring one ends the run', () => {
  // SageServe holds NIW requests; the only instance is drained at 0 s and no scaler runs. The run sampled on
  // until endS (without one, until the 5 M-row timeline limit: about two minutes, then an error).
  const raw = {
    fleet: { pools: [{ name: 'p', model: 'llama3.1-8b', hardware: 'h100-80gb', count: 1 }] },
    routing: { policy: 'sageserve' },
    scaling: { policy: 'scheduled', actions: [{ atS: 0, action: 'drain', pool: 'p' }] },
    output: { timelineIntervalS: 1 },
    endS: 1e6,
  };
  const sc = regression([{ t: 1, in: 100, out: 10, tier: 'niw' }], raw);
  for (const mode of ['fast', 'step'] as const) {
    const res = simulate(sc, '.', { mode, perf: linearPerf });
    assert.deepEqual(summarize(res, 0).requests.dropReasons, { held: 1 });
    assert.equal(res.endS, 1);
  }
  const { endS: _endS, ...unbounded } = sc;
  assert.equal(simulate(unbounded as Scenario, '.', { mode: 'fast', perf: linearPerf }).endS, 1);
  // Cut at endS before the run could find it stuck: unfinished, not dropped (nothing said it could never be served).
  const early = summarize(simulate(regression([{ t: 0.2, in: 100, out: 10, tier: 'niw' }], { ...raw, endS: 0.5 }), '.', { mode: 'fast', perf: linearPerf }), 0).requests;
  assert.deepEqual([early.total, early.unfinished, early.dropped], [1, 1, 0]);
});

test('regression: a live migration never moves a request to an instance that can never hold it', () => {
  // Llumnix moved request 1 (1 + 33 tokens: 3 blocks) to the 2-block instance, where it preempted itself at its
  // 32nd token and was never readmitted: "instance 0 stalled idle with 1 requests". The same for a destination
  // whose pool's context is too short.
  const reqs = [{ t: 0 }, { t: 0, out: 33, region: 'west' }, { t: 0, in: 216, out: 93 }];
  const raw = (small: Record<string, unknown>) => ({
    fleet: {
      pools: [
        { name: 'small', model: 'llama2-7b', hardware: 'h100-80gb', count: 1, region: 'east', ...small },
        { name: 'big', model: 'llama2-7b', hardware: 'h100-80gb', count: 1, region: 'east', engine: { kvBlocks: 25 } },
      ],
    },
    engine: { scheduler: 'vllm-v0', maxNumSeqs: 4, maxBatchedTokens: 16 },
    routing: { policy: 'llumnix', options: { migration: { enabled: true } } },
    network: { crossRegionS: 0.3 },
    output: { timelineIntervalS: 0.25 },
  });
  for (const small of [{ engine: { kvBlocks: 2 } }, { engine: { kvBlocks: 25 }, contextLength: 32 }]) {
    const sc = regression(reqs.map((r) => ({ model: 'llama2-7b', ...r })), raw(small));
    for (const mode of ['fast', 'step'] as const) {
      const res = simulate(sc, '.', { mode, perf: linearPerf });
      for (let i = 0; i < 3; i++) assert.ok(res.log.isDone(i), `request ${i}`);
      assert.equal(res.log.instance[1], 1, 'request 1 stays on the instance that can hold it');
      assert.ok(res.migrations!.refused > 0);
    }
  }
});
