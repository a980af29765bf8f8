import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineConfig } from '../../src/engine/engine.ts';
import { SimRequest } from '../../src/engine/request.ts';
import type { BatchShape, PerfModel } from '../../src/perf/types.ts';
import { fcfs } from '../../src/policy/scheduling/fcfs.ts';
import { Fleet, type Instance, type PoolRuntime } from '../../src/sim/fleet.ts';
import { Migrations, type MigrationSettings } from '../../src/sim/migration.ts';

// The KV a live migration copies, stage by stage, counted to the token. Two instances of one pool; one request
// decoding on instance 0 is moved to instance 1. Times are chosen so that nothing coincides:
// - the prompt (100 tokens) is prefilled by t = 0.002 s, then every decode iteration takes exactly 0.01 s, so at
//   t ∈ [0.002 + 0.01·j, 0.002 + 0.01·(j + 1)) the request holds 100 + j KV tokens;
// - the migration starts at 0.1255 s (j = 12: 112 tokens); a stage copying n tokens takes n · bytesPerToken / 1 GB/s.
// Stage k copies what the request holds at its start minus what is already copied; once at most
// lastStageMaxBlocks · 16 tokens are left the request leaves at the next iteration boundary and the rest is copied
// while it is suspended (downtime = that last copy + stallS).

const perf: PerfModel = {
  name: 'linear',
  stepTimeS: (b: BatchShape) => 0.001 + 1e-5 * b.prefillTokens + (b.decodeSeqs > 0 ? 0.01 : 0),
  decodeStepCoeffs: () => ({ baseS: 0.01, perContextTokenS: 0 }),
};

function pool(kvBytesPerToken: number): PoolRuntime {
  const engine: EngineConfig = { scheduler: 'vllm', maxNumSeqs: 8, maxBatchedTokens: 512, chunkedPrefill: true, blockTokens: 16, kvBlocks: 200, mode: 'step' };
  return {
    name: 'p', model: 'm', hardware: 'h100-80gb', tp: 1, pp: 1, region: '', devices: 1, priceUsdPerDeviceHour: 0, perf, engine,
    queueOrder: () => fcfs(), provisioning: { vmAcquireS: 0, modelLoadS: 0 } as unknown as PoolRuntime['provisioning'],
    contextLength: 4096, kvBytesPerToken,
  };
}

type EvBody = { kind: 'boundary'; t: number; inst: Instance; gen: number } | { kind: 'timer'; t: number; req: number };
type Ev = EvBody & { seq: number };

interface Outcome {
  summary: ReturnType<Migrations['summary']>;
  r: SimRequest;
  /** Times of the migration's timed steps (copy stages ending, the arrival). */
  timers: number[];
  /** Instance 1's blocks right after the migration started (its reservation). */
  reservedOnDest: number;
  /** KV tokens of the request when it left instance 0 (NaN if it never did). */
  kvAtHandOver: number;
  handOverS: number;
}

/** Runs the two-instance fleet until idle, ordering the migration at `startS`. */
function migrate(settings: Partial<MigrationSettings>, opts: { kvBytesPerToken?: number; startS?: number; outputTokens?: number } = {}): Outcome {
  const full: MigrationSettings = { bandwidthGBps: 1, stallS: 0.02, lastStageMaxBlocks: 16, maxStages: 3, ...settings };
  const fleet = new Fleet({ onFinish: () => {} });
  const p = pool(opts.kvBytesPerToken ?? 5e6);
  const a = fleet.add(p, 0, true);
  const b = fleet.add(p, 0, true);
  const events: Ev[] = [];
  let seq = 0;
  const push = (e: EvBody) => events.push({ ...e, seq: seq++ });
  const boundary = (inst: Instance, t: number) => {
    if (!Number.isNaN(t)) push({ kind: 'boundary', t, inst, gen: inst.engine.gen });
  };
  const timers: number[] = [];
  const m = new Migrations(full, fleet, {
    at: (t, req) => {
      timers.push(t);
      push({ kind: 'timer', t, req });
    },
    boundary,
    reroute: () => assert.fail('no reroute expected'),
  });
  const r = new SimRequest({ id: 7, arrivalS: 0, inputTokens: 100, outputTokens: opts.outputTokens ?? 1000 }, 'm');
  boundary(a, a.engine.enqueue(r, 0));
  const startS = opts.startS ?? 0.1255;
  let started = false;
  let reservedOnDest = NaN;
  let kvAtHandOver = NaN;
  let handOverS = NaN;
  for (let n = 0; n < 1_000_000; n++) {
    events.sort((x, y) => x.t - y.t || x.seq - y.seq);
    const next = events[0];
    if (!started && (next === undefined || next.t > startS)) {
      started = true;
      fleet.now = startS;
      m.start({ request: 7, from: 0, to: 1, reason: 'test' }, startS);
      reservedOnDest = b.engine.usedBlocks;
      continue;
    }
    if (next === undefined) break;
    events.shift();
    fleet.now = next.t;
    if (next.kind === 'timer') {
      m.onTimer(next.req, next.t);
      continue;
    }
    const inst = next.inst;
    if (next.gen !== inst.engine.gen) continue;
    const detaching = m.detaching(inst);
    boundary(inst, inst.engine.onBoundary(next.t));
    if (detaching) {
      if (r.status === 'migrating') {
        kvAtHandOver = r.kvTokens;
        handOverS = next.t;
      }
      m.afterBoundary(inst, next.t);
    }
  }
  m.settle(fleet.now);
  return { summary: m.summary(), r, timers, reservedOnDest, kvAtHandOver, handOverS };
}

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a}, expected ${b}`);

test('migration copies 112, then 56, then 28 tokens live and the last 15 while suspended: 211 in all', () => {
  // 5 ms a token, last stage at most 1 block (16 tokens). Stage 1: 112 tokens, 0.56 s → ends at 0.6855 (j = 68: 168 held, 56 left). Stage 2: 56 → 0.9655
  // (j = 96: 196 held, 28 left). Stage 3: 28 → 1.1055 (j = 110: 210 held, 14 left ≤ 16): the request
  // leaves at the boundary 1.112 holding 211 tokens; the last 15 take 0.075 s, + 0.02 s stall → arrives at 1.207.
  const o = migrate({ lastStageMaxBlocks: 1 });
  assert.deepEqual({ ...o.summary, meanDowntimeS: 0 }, { ordered: 1, completed: 1, refused: 0, dropped: 0, inFlight: 0, copiedTokens: 211, meanDowntimeS: 0 });
  close(o.summary.meanDowntimeS, 15 * 0.005 + 0.02, 'downtime');
  assert.equal(o.timers.length, 4, 'three live stages and the arrival');
  close(o.timers[0]!, 0.1255 + 112 * 0.005, 'stage 1 ends');
  close(o.timers[1]!, 0.6855 + 56 * 0.005, 'stage 2 ends');
  close(o.timers[2]!, 0.9655 + 28 * 0.005, 'stage 3 ends');
  close(o.handOverS, 1.112, 'hand-over boundary');
  assert.equal(o.kvAtHandOver, 211);
  close(o.timers[3]!, 1.112 + 15 * 0.005 + 0.02, 'arrival');
  // The destination held ceil((112 + 1) / 16) = 8 blocks from the start: the request's KV and its next token.
  assert.equal(o.reservedOnDest, 8);
  assert.equal(o.r.status, 'done');
  assert.equal(o.r.instance, 1);
  assert.equal(o.r.generated, 1000);
});

test('migration: with the default 16-block last stage the request leaves after one live stage', () => {
  // Stage 1 as above ends at 0.6855 with 56 left ≤ 256: it leaves at the boundary 0.692 holding 169 tokens.
  const o = migrate({});
  assert.equal(o.summary.completed, 1);
  assert.equal(o.summary.copiedTokens, 169);
  close(o.handOverS, 0.692, 'hand-over boundary');
  close(o.summary.meanDowntimeS, 57 * 0.005 + 0.02, 'downtime');
});

test('migration: a request exactly lastStageMaxBlocks · blockTokens short is suspended at once (≤, not <)', () => {
  // 1.44 ms a token, last stage at most 1 block (16 tokens). Stage 1: 112 tokens → ends at 0.1255 + 0.16128 =
  // 0.28678 (j = 28: 128 held): exactly 16 left, so no second live stage: the request leaves at the boundary 0.292
  // holding 129 tokens and the last 17 are copied while it is suspended.
  const o = migrate({ lastStageMaxBlocks: 1 }, { kvBytesPerToken: 1.44e6 });
  assert.equal(o.summary.completed, 1);
  assert.equal(o.summary.copiedTokens, 129);
  assert.equal(o.timers.length, 2, 'one live stage and the arrival');
  close(o.handOverS, 0.292, 'hand-over boundary');
  close(o.summary.meanDowntimeS, 17 * 0.00144 + 0.02, 'downtime');
});

test('migration: after maxStages live stages with too much left it is dropped, having copied each stage exactly', () => {
  // maxStages 2: the timeline of the first test up to stage 2 (112 + 56 copied); at 0.9655 28 tokens are left,
  // more than one block, and 2 live stages are done: dropped, the destination's blocks released.
  const o = migrate({ maxStages: 2, lastStageMaxBlocks: 1 });
  assert.deepEqual({ ...o.summary }, { ordered: 1, completed: 0, refused: 0, dropped: 1, inFlight: 0, copiedTokens: 168, meanDowntimeS: 0 });
  assert.equal(o.timers.length, 2);
  close(o.timers[1]!, 0.6855 + 56 * 0.005, 'stage 2 ends');
  assert.equal(o.r.instance, 0, 'the request stays where it was');
  assert.equal(o.r.status, 'done');
});
