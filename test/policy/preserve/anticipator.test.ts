import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoadAnticipator, peak, peakWith, plannedLength, stepsAbove } from '../../../src/policy/preserve/anticipator.ts';
import { instance, prog } from './helpers.ts';

const close = (a: ArrayLike<number>, b: number[]) => {
  assert.equal(a.length, b.length);
  for (let i = 0; i < b.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) < 1e-12, `U[${i}] = ${a[i]}, expected ${b[i]}`);
};

/** The hand-worked examples below count single tokens (the paper's (P + i)/M read literally); blocks are tested apart. */
const TOKENS = { blockTokens: 1 };

// M = 1000 tokens, window N = 6.
//  A: P = 100, D̂ = 3, g = 1  → footprint 100 + j for j < 3 − 1 + 1 = 3 slots: 100, 101, 102
//  B: P = 50, D̂ = 10, g = 8  → 57 + j for 3 slots: 57, 58, 59
//  C: P = 200, D̂0 = 10, g = 12 (outran): e = 0.2·10 = 2, D̂ = 12 → 1 slot: 211
//  W: waiting, never prefilled: not in the map, 300 prompt tokens queued
const reqs = [
  prog({ inputTokens: 100, predicted: 3, generated: 1 }),
  prog({ inputTokens: 50, predicted: 10, generated: 8 }),
  prog({ inputTokens: 200, predicted: 10, generated: 12 }),
  prog({ inputTokens: 300, predicted: 40, generated: 0, status: 'waiting', prefillLeft: 300 }),
];

test('projects KV occupancy of three running requests by hand (add after prefill, extension, waiting left out)', () => {
  const ant = new LoadAnticipator({ horizonSteps: 6, ...TOKENS });
  const p = ant.project(instance(0, reqs, { kvCapacityTokens: 1000 }));
  close(p.u, [0.368, 0.159, 0.161, 0, 0, 0]);
  assert.equal(p.mapped, 3);
  assert.equal(p.queuedPrefillTokens, 300);
  // L_d over running requests: (3 − 1) + (10 − 8) + (12 − 12) = 4
  assert.equal(p.remainingDecodeTokens, 4);
  assert.equal(peak(p), 0.368);
  assert.equal(stepsAbove(p, 0.15), 3);
});

test('peakWith places the new request as starting now: P + j for j < D̂', () => {
  const ant = new LoadAnticipator({ horizonSteps: 6, ...TOKENS });
  const p = ant.project(instance(0, reqs, { kvCapacityTokens: 1000 }));
  // adds 20, 21, 22, 23 at j = 0..3 → 388, 180, 183, 23
  assert.ok(Math.abs(peakWith(p, 20, 4) - 0.388) < 1e-12);
  // a long request peaks late: 150 + 5 at j = 5 on top of 0 → max(0.368 + 0.15, ...) = 0.518
  assert.ok(Math.abs(peakWith(p, 150, 100) - 0.518) < 1e-12);
});

test('an early finish drops the rest of the projection: a finished request leaves the snapshot', () => {
  const ant = new LoadAnticipator({ horizonSteps: 6, ...TOKENS });
  const p = ant.project(instance(0, [reqs[1]!, reqs[2]!], { kvCapacityTokens: 1000 }));
  close(p.u, [0.268, 0.058, 0.059, 0, 0, 0]);
});

test('virtual extensions: fixed 0.2·D̂0 steps by default, compounding on request', () => {
  const fixed = { extensionFraction: 0.2, extensionMode: 'fixed' as const };
  const compound = { extensionFraction: 0.2, extensionMode: 'compound' as const };
  assert.equal(plannedLength(10, 10, fixed), 10, 'at its predicted length a request is not extended yet');
  assert.equal(plannedLength(10, 11, fixed), 12);
  assert.equal(plannedLength(10, 15, fixed), 16); // 10 + ⌈5/2⌉·2
  assert.equal(plannedLength(10, 15, compound), 17); // 10 → 12 → 14 → 17 (round(2.8) = 3)
  assert.equal(plannedLength(2, 5, fixed), 5); // e = max(1, round(0.4)) = 1
  assert.equal(plannedLength(100, 130, fixed), 140);
});

test('preempted requests stay in the map by default (the paper ignores preemption) and can be left out', () => {
  const pre = prog({ inputTokens: 100, predicted: 20, generated: 5, status: 'waiting' });
  const keep = new LoadAnticipator({ horizonSteps: 3, ...TOKENS }).project(instance(0, [pre], { kvCapacityTokens: 1000 }));
  close(keep.u, [0.104, 0.105, 0.106]);
  const drop = new LoadAnticipator({ horizonSteps: 3, includePreempted: false, ...TOKENS }).project(instance(0, [pre], { kvCapacityTokens: 1000 }));
  close(drop.u, [0, 0, 0]);
});

test('a request whose prompt is still being prefilled is not in the map but its prompt is queued work', () => {
  const mid = prog({ inputTokens: 400, predicted: 20, generated: 0, prefillLeft: 150 });
  const p = new LoadAnticipator({ horizonSteps: 2 }).project(instance(0, [mid], { kvCapacityTokens: 1000 }));
  close(p.u, [0, 0]);
  assert.equal(p.queuedPrefillTokens, 150);
  assert.equal(p.remainingDecodeTokens, 20);
});

test('by default footprints are whole 16-token KV blocks, as the engine allocates them (blockTokens: 1 counts tokens)', () => {
  // The three running requests above: A 100, 101, 102 → 112 each; B 57, 58, 59 → 64 each; C 211 → 224.
  const p = new LoadAnticipator({ horizonSteps: 6 }).project(instance(0, reqs, { kvCapacityTokens: 1000 }));
  close(p.u, [0.4, 0.176, 0.176, 0, 0, 0]);
  // A footprint crossing a block boundary: P = 30, g = 1, D̂ = 5 → 30..34 tokens → 32, 32, 32, 48, 48.
  const crossing = new LoadAnticipator({ horizonSteps: 6 }).project(instance(0, [prog({ inputTokens: 30, predicted: 5, generated: 1 })], { kvCapacityTokens: 1000 }));
  close(crossing.u, [0.032, 0.032, 0.032, 0.048, 0.048, 0]);
  // U[0] is then what the engine holds: KV used = Σ ceil(kvTokens / 16) blocks.
  const held = reqs.slice(0, 3).reduce((s, r) => s + Math.ceil(r.kvTokens / 16) * 16, 0);
  assert.equal(p.u[0], held / 1000);
  // The new request of peakWith is rounded too: 20..23 tokens → 32 at j = 0 → 0.4 + 0.032.
  assert.ok(Math.abs(peakWith(p, 20, 4) - 0.432) < 1e-12);
  const tokens = new LoadAnticipator({ horizonSteps: 6, ...TOKENS }).project(instance(0, [prog({ inputTokens: 30, predicted: 5, generated: 1 })], { kvCapacityTokens: 1000 }));
  close(tokens.u, [0.03, 0.031, 0.032, 0.033, 0.034, 0]);
});
