import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { checkMeasuredSteps } from '../../src/perf/step-check.ts';

const run = promisify(execFile);
const HEADER = 'hardware,model,layers,kind,batch,tokens_per_seq,impl,median_ms,p10_ms,p90_ms';

// The roofline's formulas at TP 1 on the h100-80gb datasheet (989 TF, 3.35 TB/s), written out here so the check is
// tested against them, not against itself. Llama-2-7B: 6.738e9 params, of which the embedding and the LM head are
// 32000 × 4096 each; 32 layers × 32 heads × 128, MHA.
const FLOPS = 989e12;
const BW = 3350e9;
const PAIR_FLOP = 4 * 32 * 32 * 128;
const KV_BYTES_PER_TOKEN = 2 * 32 * 32 * 128 * 2;
const HEAD_7B = 32000 * 4096;
const BODY_7B = 6.738e9 - 2 * HEAD_7B;
/** The defaults' fixed latency per layer (kernel launches and tails), part of the GPU work compared. */
const LAYER_S = 40e-6;
/** The linear layers: the body over every new token, then the LM head over one token per sequence. */
function linearS(body: number, head: number, tokens: number, seqs: number, compute = 0.6, memory = 0.8): number {
  const bodyS = Math.max((2 * body * tokens) / (FLOPS * compute), (body * 2) / (BW * memory));
  return bodyS + Math.max((2 * head * seqs) / (FLOPS * compute), (head * 2) / (BW * memory));
}
function llama7bMs(kind: 'prefill' | 'decode', b: number, n: number, compute = 0.6, memory = 0.8, perLayerS = LAYER_S): number {
  const tokens = kind === 'prefill' ? b * n : b;
  const linear = linearS(BODY_7B, HEAD_7B, tokens, b, compute, memory);
  const attention =
    kind === 'prefill'
      ? (PAIR_FLOP * (b * n * (n + 1)) / 2) / (FLOPS * compute)
      : b * n * Math.max(PAIR_FLOP / (FLOPS * compute), KV_BYTES_PER_TOKEN / (BW * memory));
  return (linear + attention + 32 * perLayerS) * 1e3;
}

function file(rows: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-steps-'));
  const path = join(dir, 'steps.csv');
  writeFileSync(path, [HEADER, ...rows].join('\n') + '\n');
  return path;
}

const PREFILLS: [number, number][] = [[1, 128], [1, 512], [1, 2048], [1, 8192], [4, 256], [4, 1024], [16, 128]];
const DECODES: [number, number][] = [1, 4, 16, 64, 256].flatMap((b) => [256, 1024, 4096].map((c) => [b, c] as [number, number]));
const rowsAt = (ms: (kind: 'prefill' | 'decode', b: number, n: number) => number, impl = { prefill: 'fused-eager', decode: 'compiled-graph' }) => [
  ...PREFILLS.map(([b, n]) => `h100-80gb,llama2-7b,32,prefill,${b},${n},${impl.prefill},${ms('prefill', b, n)},0,0`),
  ...DECODES.map(([b, c]) => `h100-80gb,llama2-7b,32,decode,${b},${c},${impl.decode},${ms('decode', b, c)},0,0`),
];

describe('checkMeasuredSteps: the roofline against engine steps timed on a GPU', () => {
  it('a step measured at exactly the roofline of its shape has 0 % error; a slice of a big model is cut per layer', () => {
    // 10 of Llama-2-70B's 80 layers: embedding and head (32000 × 8192 each) whole, the body an eighth.
    const head = 32000 * 8192;
    const sliceBody = ((68.977e9 - 2 * head) * 10) / 80;
    // One sequence, one context token: its K and V (2 × 10 layers × 8 KV heads × 128 × 2 bytes) read once.
    const sliceDecodeMs = (linearS(sliceBody, head, 1, 1) + (2 * 10 * 8 * 128 * 2) / (BW * 0.8) + 10 * LAYER_S) * 1e3;
    const r = checkMeasuredSteps(file([...rowsAt(llama7bMs), `h100-80gb,llama2-70b,10,decode,1,1,compiled-graph,${sliceDecodeMs},0,0`]));
    assert.deepEqual(r.keys.map((k) => k.key), ['h100-80gb/llama2-70b[10L]/decode', 'h100-80gb/llama2-7b/decode', 'h100-80gb/llama2-7b/prefill']);
    const [, decode, prefill] = r.keys;
    // The slice's one row is a training row (alternate split), so only the 7B keys have held-out rows.
    assert.ok(decode!.test.default.mape < 1e-6 && prefill!.test.default.mape < 1e-6, JSON.stringify([decode!.test, prefill!.test]));
    assert.equal(prefill!.test.default.n, 3);
    assert.equal(prefill!.samples[0]!.label, '1×128');
    assert.ok(Math.abs(r.keys[0]!.samples[0]!.defaultMs - sliceDecodeMs) < 1e-9, JSON.stringify(r.keys[0]!.samples));
  });

  it('a mixed step is a prompt chunk plus decodes in one iteration: the linear layers over all tokens, attention apart', () => {
    const mixedMs = (chunk: number, decodes: number, context: number) => {
      const linear = linearS(BODY_7B, HEAD_7B, chunk + decodes, (chunk > 0 ? 1 : 0) + decodes);
      const attention = (PAIR_FLOP * (chunk * (chunk + 1)) / 2) / (FLOPS * 0.6) + decodes * context * Math.max(PAIR_FLOP / (FLOPS * 0.6), KV_BYTES_PER_TOKEN / (BW * 0.8));
      return (linear + attention + 32 * LAYER_S) * 1e3;
    };
    const head = `${HEADER},chunk_tokens`;
    const rows = [[0, 8], [128, 0], [128, 8], [512, 32], [2048, 64], [2048, 0]].map(([p, d]) => `h100-80gb,llama2-7b,32,mixed,${d},1024,fused-graph,${mixedMs(p!, d!, 1024)},0,0,${p}`);
    const path = file([]);
    writeFileSync(path, [head, ...rows].join('\n') + '\n');
    const r = checkMeasuredSteps(path);
    assert.deepEqual(r.keys.map((k) => k.key), ['h100-80gb/llama2-7b/mixed (fused-graph)'], 'mixed rows are compared, never fitted');
    assert.ok(r.keys[0]!.test.default.mape < 1e-6, JSON.stringify(r.keys[0]!.test));
    assert.deepEqual(r.keys[0]!.samples.map((x) => x.label), ['0+8×1024', '512+32×1024', '2048+64×1024']);
    writeFileSync(path, [HEADER, `h100-80gb,llama2-7b,32,mixed,8,1024,fused-graph,5,0,0`].join('\n') + '\n');
    assert.throws(() => checkMeasuredSteps(path), /steps\.csv:2 chunk_tokens: expected a column chunk_tokens for 'mixed' rows/);
    writeFileSync(path, [head, `h100-80gb,llama2-7b,32,mixed,0,1024,fused-graph,5,0,0,0`].join('\n') + '\n');
    assert.throws(() => checkMeasuredSteps(path), /steps\.csv:2 batch: expected decoding sequences or a prompt chunk/);
  });

  it('the fit recovers the factors and the per-layer latency the rows were made with; comparison-only rows are not fitted', () => {
    const made = (kind: 'prefill' | 'decode', b: number, n: number) => llama7bMs(kind, b, n, 0.5, 0.7, 20e-6);
    // An eager-decode variant 3× slower: a key of its own, which must not pull the fit.
    const eager = DECODES.map(([b, c]) => `h100-80gb,llama2-7b,32,decode,${b},${c},mini-eager,${3 * made('decode', b, c)},0,0`);
    const r = checkMeasuredSteps(file([...rowsAt(made), ...eager]));
    const f = r.fits[0]!.fitted;
    assert.ok(Math.abs(f.compute! - 0.5) < 0.01 && Math.abs(f.memory! - 0.7) < 0.01, JSON.stringify(f));
    assert.ok(Math.abs(f.perLayerOverheadS! - 20e-6) < 1e-6, JSON.stringify(f));
    const byKey = Object.fromEntries(r.keys.map((k) => [k.key, k.test]));
    assert.ok(byKey['h100-80gb/llama2-7b/decode']!.fitted.mape < 0.5);
    assert.ok(byKey['h100-80gb/llama2-7b/decode (mini-eager)']!.fitted.mape > 60);
  });

  // The defaults carry the measured 40 µs per layer (the GPU work here): graph-replayed decode within 3.6-10.1 %
  // on both GPUs, 1B to a 70B slice (docs/fidelity/perf.md); the fitted factors 1.9-7.3 %.
  it('the bundled H100 (pure, mixed, long, small models) and H200 measurements: every variant a key, one fit per device, graph-replayed decode within 12 % (defaults) and 8 % (fitted)', () => {
    const files = ['h100-steps', 'h100-mixed-steps', 'h100-long-steps', 'h100-small-steps', 'h100-small-mixed-steps', 'h200-steps', 'h200-small-steps', 'h200-small-mixed-steps', 'h200-moe-steps'].map(
      (f) => `data/profiles/measured/${f}.csv`,
    );
    const r = checkMeasuredSteps(files);
    assert.equal(r.keys.filter((k) => k.hardware === 'h100-80gb').length, 41, '5 models × (3 prefill + 4 decode variants + mixed), HF prefill for one');
    assert.equal(r.keys.filter((k) => k.hardware === 'h200').length, 30, '3 models × fused and compiled, prefill and decode; 2 small models × every variant and mixed; MoE prefill and decode');
    // The mixture of experts (grouped-GEMM experts) is compared only: its keys carry their variant's name.
    assert.ok(r.keys.some((k) => k.key === 'h200/mixtral-8x7b[4L]/decode (moe-grouped-graph)'));
    for (const gpu of ['h100-80gb', 'h200']) {
      for (const m of ['llama2-7b', 'llama3.1-8b', 'llama2-70b[10L]', 'llama3.2-1b', 'llama3.2-3b']) {
        const k = r.keys.find((x) => x.key === `${gpu}/${m}/decode`)!;
        assert.ok(k.test.default.mape < 12 && k.test.fitted.mape < 8, `${gpu} ${m}: ${JSON.stringify(k.test)}`);
      }
    }
    assert.deepEqual(r.fits.map((f) => f.group), ['h100-80gb', 'h200']);
    assert.deepEqual(r.sources, files);
    // The long prompts (8k-32k tokens) are rows of the fitted 8B prefill key.
    assert.equal(r.keys.find((k) => k.key === 'h100-80gb/llama3.1-8b/prefill')!.samples[2]!.label, '1×32768');
  });

  it('bad rows are named with their line and column; the CLI exits 2 with one line', async () => {
    const good = `h100-80gb,llama2-7b,32,decode,1,256,compiled-graph,5.5,0,0`;
    assert.throws(() => checkMeasuredSteps(file([good, good.replace('llama2-7b', 'llama9-7b')])), /steps\.csv:3 model: expected a catalog model \(llama2-7b, .*\), got "?llama9-7b"?/);
    assert.throws(() => checkMeasuredSteps(file([good.replace(',32,', ',33,')])), /steps\.csv:2 layers: expected 1 to 32/);
    assert.throws(() => checkMeasuredSteps(file([good.replace('decode', 'verify')])), /steps\.csv:2 kind: expected 'prefill', 'decode' or 'mixed'/);
    assert.throws(() => checkMeasuredSteps(file([good.replace(',5.5,', ',0,')])), /steps\.csv:2 median_ms: expected a positive time/);
    assert.throws(() => checkMeasuredSteps(file([good.replace('h100-80gb', 'h100')])), /steps\.csv:2 hardware: expected a catalog device/);
    const bad = file([good.replace(',5.5,', ',fast,')]);
    for (const args of [['--steps', bad], ['--steps', bad, '--vidur']]) {
      try {
        await run(process.execPath, ['bin/llmfleet.js', 'calibrate', ...args, '--out', mkdtempSync(join(tmpdir(), 'llmfleet-steps-out-'))]);
        assert.fail('expected exit 2');
      } catch (e) {
        const x = e as { code: number; stderr: string };
        assert.equal(x.code, 2, x.stderr);
        assert.match(x.stderr, args.length === 2 ? /steps\.csv:2 median_ms: expected a non-negative number/ : /--vidur and --steps/);
        assert.equal(x.stderr.trim().split('\n').length, 1, x.stderr);
      }
    }
  });

  it('llmfleet calibrate --steps writes step-check.json and prints one line per row group', async () => {
    const out = mkdtempSync(join(tmpdir(), 'llmfleet-steps-out-'));
    const r = await run(process.execPath, ['bin/llmfleet.js', 'calibrate', '--steps', file(rowsAt(llama7bMs)), '--out', out]);
    assert.match(r.stdout, /^h100-80gb\/llama2-7b\/prefill +0\.0% +[0-9.]+% +[0-9.]+% +3 +1×128 B×prompt: /m);
    assert.match(r.stdout, /h100-80gb: compute [0-9.]+, memory [0-9.]+, \+ [0-9.]+ µs per layer/);
    const j = JSON.parse(readFileSync(join(out, 'step-check.json'), 'utf8'));
    assert.match(j.command, /calibrate --steps/);
    assert.equal(j.keys.length, 2);
  });
});
