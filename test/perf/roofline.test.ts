import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getHardware, getModel } from '../../src/model/catalog.ts';
import { HARDWARE } from '../../src/model/hardware.ts';
import { MODELS } from '../../src/model/models.ts';
import { rooflinePerfModel } from '../../src/perf/roofline.ts';
import { efficiencyFor } from '../../src/perf/efficiency.ts';
import type { BatchShape, Deployment, PerfModel } from '../../src/perf/types.ts';

const model = (dep: Deployment): PerfModel => rooflinePerfModel(dep, efficiencyFor(dep.hardware));
const dep = (m: string, h: string, tp = 1, pp = 1): Deployment => ({ model: getModel(m), hardware: getHardware(h), tp, pp });

/** A batch of `n` whole prompts of `len` tokens each (no cached prefix). */
function prefill(len: number, n = 1): BatchShape {
  return { prefillTokens: len * n, prefillSeqs: n, prefillAttendTokens: n * len * ((len + 1) / 2), decodeSeqs: 0, decodeContextTokens: 0 };
}

test('a decode-only step costs exactly baseS + perContextTokenS × context for every model × hardware × tp × pp', () => {
  const models = Object.keys(MODELS);
  const hws = Object.keys(HARDWARE);
  fc.assert(
    fc.property(
      fc.constantFrom(...models),
      fc.constantFrom(...hws),
      fc.constantFrom(1, 2, 4, 8),
      fc.constantFrom(1, 2, 4),
      fc.integer({ min: 1, max: 1024 }),
      fc.integer({ min: 1, max: 4096 }),
      (m, h, tp, pp, k, avgCtx) => {
        const pm = model(dep(m, h, tp, pp));
        const c = pm.decodeStepCoeffs(k);
        const ctx = k * avgCtx;
        const direct = pm.stepTimeS({ prefillTokens: 0, prefillSeqs: 0, prefillAttendTokens: 0, decodeSeqs: k, decodeContextTokens: ctx });
        assert.equal(direct, c.baseS + c.perContextTokenS * ctx);
        assert.ok(c.baseS > 0 && c.perContextTokenS > 0 && Number.isFinite(c.baseS));
        // Linear: the slope does not depend on k.
        assert.equal(pm.decodeStepCoeffs(k + 1).perContextTokenS, c.perContextTokenS);
      },
    ),
    { numRuns: 400, seed: 42 },
  );
});

test('more tokens never make a step faster (prefill length, prefill batch, decode batch, context)', () => {
  for (const m of Object.keys(MODELS)) {
    for (const h of Object.keys(HARDWARE)) {
      const pm = model(dep(m, h, 8));
      let prev = 0;
      for (let len = 1; len <= 16384; len *= 2) {
        const t = pm.stepTimeS(prefill(len));
        assert.ok(t >= prev, `${m}@${h} prefill ${len}`);
        prev = t;
      }
      prev = 0;
      for (let k = 1; k <= 1024; k *= 2) {
        const t = pm.decodeStepCoeffs(k).baseS;
        assert.ok(t >= prev, `${m}@${h} decode ${k}`);
        prev = t;
      }
      // Adding decodes to a prefill batch costs more.
      const mixed = { ...prefill(512), decodeSeqs: 32, decodeContextTokens: 32 * 1000 };
      assert.ok(pm.stepTimeS(mixed) > pm.stepTimeS(prefill(512)));
    }
  }
});

test('long prefills are compute-bound: doubling a 8k prompt more than doubles the step (quadratic attention)', () => {
  const pm = model(dep('llama3.1-8b', 'h100-80gb'));
  const t8 = pm.stepTimeS(prefill(8192));
  const t16 = pm.stepTimeS(prefill(16384));
  assert.ok(t16 > 2 * t8 - pm.decodeStepCoeffs(1).baseS);
  assert.ok(pm.stepTimeS(prefill(8192)) > pm.stepTimeS(prefill(1024, 8)), 'one 8k prompt attends more than 8 × 1k');
});

test('more TP is faster for a 70B model on NVLink, and stops paying for a 1B model on PCIe beyond tp 4', () => {
  const t = (tp: number, b: BatchShape): number => model(dep('llama2-70b', 'h100-80gb', tp)).stepTimeS(b);
  const big = prefill(2048);
  assert.ok(t(2, big) > t(4, big) && t(4, big) > t(8, big));
  const d = (tp: number): number => model(dep('llama2-70b', 'h100-80gb', tp)).decodeStepCoeffs(16).baseS;
  assert.ok(d(2) > d(4));
  // 1B on PCIe: 2.5 GB of weights take < 1 ms at tp 4; the 2·16 all-reduces × 14 hops at tp 8 cost more.
  const small = (tp: number): number => model(dep('llama3.2-1b', 'rtx4090', tp)).decodeStepCoeffs(8).baseS;
  assert.ok(small(8) > small(4), `tp 8 ${small(8)} vs tp 4 ${small(4)}`);
});

test('decode is memory-bound: at small batches its time is close to weights / bandwidth', () => {
  const d = dep('llama2-70b', 'h100-80gb', 8);
  const eff = { ...efficiencyFor(d.hardware), stepOverheadS: 0, perSeqOverheadS: 0, allReduceHopLatencyS: 0, perLayerOverheadS: 0 };
  const pm = rooflinePerfModel(d, eff);
  // Every weight but the embedding table (a gather of one row) is read: the body and the LM head.
  const weightsS = ((68.977e9 - 32000 * 8192) * 2) / 8 / (3.35e12 * eff.memory);
  const base = pm.decodeStepCoeffs(1).baseS;
  assert.ok(base >= weightsS && base < weightsS * 1.05, `${base} vs ${weightsS}`);
});

test('the embedding is a gather and the LM head runs once per sequence: a prompt pays the body per token, the head once', () => {
  // Llama-3.1-8B: embedding and head are 128256 × 4096 each (13 % of the parameters); at TP 1 on an H100.
  const d = dep('llama3.1-8b', 'h100-80gb');
  const eff = { ...efficiencyFor(d.hardware), stepOverheadS: 0, prefillOverheadS: 0, perSeqOverheadS: 0, perLayerOverheadS: 0 };
  const pm = rooflinePerfModel(d, eff);
  const [flops, bw] = [989e12 * eff.compute, 3.35e12 * eff.memory];
  const head = 128256 * 4096;
  const body = 8.03e9 - 2 * head;
  const attention = (4 * 32 * 32 * 128 * ((4096 * 4097) / 2)) / flops;
  const expected = (2 * body * 4096) / flops + Math.max((2 * head) / flops, (2 * head) / bw) + attention;
  assert.ok(Math.abs(pm.stepTimeS(prefill(4096)) / expected - 1) < 1e-12, `${pm.stepTimeS(prefill(4096))} vs ${expected}`);
  // Four prompts of 1,024: the same body and attention-free work, four heads.
  const four = pm.stepTimeS(prefill(1024, 4)) - (4 * 32 * 32 * 128 * 4 * ((1024 * 1025) / 2)) / flops;
  assert.ok(Math.abs(four / ((2 * body * 4096) / flops + Math.max((8 * head) / flops, (2 * head) / bw)) - 1) < 1e-12);
});

test('a tied embedding (Llama-3.2-1B) is one matrix: decode reads all parameters once, as the head', () => {
  const d = dep('llama3.2-1b', 'h100-80gb');
  const eff = { ...efficiencyFor(d.hardware), stepOverheadS: 0, perSeqOverheadS: 0, perLayerOverheadS: 0 };
  const base = rooflinePerfModel(d, eff).decodeStepCoeffs(1).baseS;
  assert.ok(Math.abs(base / ((1.236e9 * 2) / (3.35e12 * eff.memory)) - 1) < 1e-12, `${base}`);
});

test('a mixture of experts reads only the experts its tokens touch at small batches', () => {
  const moe = dep('mixtral-8x7b', 'h100-80gb', 2);
  const dense = { ...moe, model: { ...moe.model, activeParams: moe.model.params } };
  assert.ok(model(moe).decodeStepCoeffs(1).baseS < model(dense).decodeStepCoeffs(1).baseS);
  // With many tokens every expert is read: the weight traffic converges to the dense model's.
  const moeBig = model(moe).decodeStepCoeffs(512).baseS;
  assert.ok(moeBig <= model(dense).decodeStepCoeffs(512).baseS);
});

test('pipeline parallelism adds point-to-point transfers to each iteration and never makes one faster', () => {
  for (const k of [1, 64]) {
    assert.ok(model(dep('llama2-70b', 'a100-80gb', 4, 2)).decodeStepCoeffs(k).baseS >= model(dep('llama2-70b', 'a100-80gb', 4, 1)).decodeStepCoeffs(k).baseS);
  }
});

test('the CPU socket runs the same formulas with its own factors and is slower than an H100', () => {
  const cpu = model(dep('llama2-7b', 'xeon-amx'));
  const gpu = model(dep('llama2-7b', 'h100-80gb'));
  assert.ok(cpu.decodeStepCoeffs(8).baseS > 2 * gpu.decodeStepCoeffs(8).baseS);
  assert.ok(cpu.stepTimeS(prefill(1024)) > 2 * gpu.stepTimeS(prefill(1024)));
  assert.match(cpu.name, /xeon-amx/);
});

test('efficiency overrides change the step time in the expected direction', () => {
  const d = dep('llama2-13b', 'a100-80gb', 2);
  const slow = rooflinePerfModel(d, efficiencyFor(d.hardware, { compute: 0.1 }));
  const fast = rooflinePerfModel(d, efficiencyFor(d.hardware, { compute: 0.9 }));
  assert.ok(slow.stepTimeS(prefill(4096)) > fast.stepTimeS(prefill(4096)));
  const noOverhead = rooflinePerfModel(d, efficiencyFor(d.hardware, { stepOverheadS: 0 }));
  const overhead = rooflinePerfModel(d, efficiencyFor(d.hardware, { stepOverheadS: 0.01 }));
  assert.ok(Math.abs(overhead.decodeStepCoeffs(4).baseS - noOverhead.decodeStepCoeffs(4).baseS - 0.01) < 1e-12);
});

test('a per-layer latency costs layers × itself per step, decode and prefill alike, at any tp and pp', () => {
  for (const [tp, pp] of [[1, 1], [2, 1], [2, 2]] as const) {
    const d = dep('llama2-13b', 'a100-80gb', tp, pp);
    const without = rooflinePerfModel(d, efficiencyFor(d.hardware, { perLayerOverheadS: 0 }));
    const withLayers = rooflinePerfModel(d, efficiencyFor(d.hardware, { perLayerOverheadS: 35e-6 }));
    const extra = 40 * 35e-6; // Llama-2-13B has 40 layers
    assert.ok(Math.abs(withLayers.decodeStepCoeffs(8).baseS - without.decodeStepCoeffs(8).baseS - extra) < 1e-12);
    assert.equal(withLayers.decodeStepCoeffs(8).perContextTokenS, without.decodeStepCoeffs(8).perContextTokenS);
    assert.ok(Math.abs(withLayers.stepTimeS(prefill(512)) - without.stepTimeS(prefill(512)) - extra) < 1e-12);
  }
});

test('tensor-parallel traffic past the knee moves at the large-step rate (convex in prefill tokens); decode stays linear in context', () => {
  const dep = { model: getModel('llama2-70b'), hardware: getHardware('h100-80gb'), tp: 8, pp: 1 };
  const base = { compute: 0.6, memory: 0.8, comm: 0.6, stepOverheadS: 0, prefillOverheadS: 0, perSeqOverheadS: 0, allReduceHopLatencyS: 0 };
  const flat = rooflinePerfModel(dep, base);
  const knee = rooflinePerfModel(dep, { ...base, commKneeTokens: 2048, largeStepComm: 0.1 });
  const shape = (tokens: number) => ({ prefillTokens: tokens, prefillSeqs: 1, prefillAttendTokens: 0, decodeSeqs: 0, decodeContextTokens: 0 });
  // Below the knee both agree; past it each token's all-reduce traffic costs comm / largeStepComm = 6 times more.
  assert.equal(knee.stepTimeS(shape(2048)), flat.stepTimeS(shape(2048)));
  // Per token: 2 all-reduces × 80 layers × 2·7/8 ring factor × 8192 hidden × 2 bytes over 0.6 of the 450 GB/s link.
  const commPerToken = (2 * 80 * ((2 * 7) / 8) * 8192 * 2) / (0.6 * getHardware('h100-80gb').interconnectBytesPerS);
  const extra = knee.stepTimeS(shape(6144)) - flat.stepTimeS(shape(6144));
  assert.ok(Math.abs(extra - 4096 * commPerToken * 5) < 1e-9, `extra ${extra}`);
  const co = knee.decodeStepCoeffs(16);
  const d = knee.stepTimeS({ prefillTokens: 0, prefillSeqs: 0, prefillAttendTokens: 0, decodeSeqs: 16, decodeContextTokens: 40000 });
  assert.ok(Math.abs(co.baseS + co.perContextTokenS * 40000 - d) < 1e-12);
});

test('quantised weights (weightBytesPerParam) shrink weight reads, not KV reads or FLOPs', () => {
  const bf16 = dep('llama3.1-8b', 'rtx4090');
  const int4: Deployment = { ...bf16, model: { ...bf16.model, weightBytesPerParam: 0.5 } };
  const eff = { ...efficiencyFor(bf16.hardware), stepOverheadS: 0, perSeqOverheadS: 0, perLayerOverheadS: 0 };
  const [a, b] = [rooflinePerfModel(bf16, eff), rooflinePerfModel(int4, eff)];
  // Small decode batch: weight-bound; the body reads 4× fewer bytes, the LM head (kept 16-bit) as many.
  const head = 128256 * 4096;
  const body = 8.03e9 - 2 * head;
  const expected = (body * 2 + head * 2) / (body * 0.5 + head * 2);
  const ratio = a.decodeStepCoeffs(1).baseS / b.decodeStepCoeffs(1).baseS;
  assert.ok(Math.abs(ratio / expected - 1) < 1e-9, `${ratio} vs ${expected}`);
  assert.equal(a.decodeStepCoeffs(1).perContextTokenS, b.decodeStepCoeffs(1).perContextTokenS);
  // A long prefill is compute-bound (and the head reads the same 16-bit matrix): the same time.
  assert.equal(a.stepTimeS(prefill(8192)), b.stepTimeS(prefill(8192)));
});

test('a GPU the defaults do not list gets NVLink-class factors with ≥ 100 GB/s of interconnect, PCIe-class below', () => {
  const b200 = { ...getHardware('h100-80gb'), name: 'b200', interconnectBytesPerS: 900e9 };
  const pcie = { ...b200, name: 'pcie-card', interconnectBytesPerS: 64e9 };
  assert.deepEqual(efficiencyFor(b200), efficiencyFor(getHardware('h100-80gb')));
  assert.deepEqual(efficiencyFor(pcie), efficiencyFor(getHardware('l4')));
});
