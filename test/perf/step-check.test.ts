import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { BUNDLED_STEPS, checkMeasuredSteps } from '../../src/perf/step-check.ts';
import { BUILTIN_CATALOG } from '../../src/model/catalog.ts';
import { efficiencyFor } from '../../src/perf/efficiency.ts';
import { rooflinePerfModel } from '../../src/perf/roofline.ts';
import { ConfigError } from '../../src/util/errors.ts';

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

  it('a prefix row is a prompt chunk after C cached tokens: P · (C + (P + 1)/2) attended pairs, compared, never fitted', () => {
    const prefixMs = (chunk: number, cached: number) => {
      const linear = linearS(BODY_7B, HEAD_7B, chunk, 1);
      const attention = (PAIR_FLOP * chunk * (cached + (chunk + 1) / 2)) / (FLOPS * 0.6);
      return (linear + attention + 32 * LAYER_S) * 1e3;
    };
    const shapes = [512, 2048].flatMap((p) => [0, 2048, 8192, 32768].map((c) => [p, c] as const));
    const path = file([]);
    writeFileSync(path, [`${HEADER},chunk_tokens`, ...shapes.map(([p, c]) => `h100-80gb,llama2-7b,32,prefix,1,${c},fused-eager,${prefixMs(p, c)},0,0,${p}`)].join('\n') + '\n');
    const r = checkMeasuredSteps(path);
    assert.deepEqual(r.keys.map((k) => k.key), ['h100-80gb/llama2-7b/prefix (fused-eager)'], 'prefix rows are compared, never fitted');
    assert.equal(r.keys[0]!.kind, 'prefix');
    assert.equal(r.keys[0]!.test.default.n, 4);
    assert.ok(r.keys[0]!.test.default.mape < 1e-6, JSON.stringify(r.keys[0]!.test));
    // Sorted by chunk, then cached tokens.
    assert.deepEqual(r.keys[0]!.samples.map((x) => x.label), ['512@0', '2048@0', '2048@32768']);
    assert.ok(Math.abs(r.keys[0]!.samples[2]!.defaultMs - prefixMs(2048, 32768)) < 1e-9, JSON.stringify(r.keys[0]!.samples));
  });

  it('a prefix row predicts what the roofline gives the chunk shape: linear in the cached tokens, B sequences each with the chunk', () => {
    const { models, hardware } = BUILTIN_CATALOG;
    const roofline = rooflinePerfModel(
      { model: models['llama3.1-8b']!, hardware: hardware['h200']!, tp: 1, pp: 1 },
      { ...efficiencyFor(hardware['h200']!), stepOverheadS: 0, prefillOverheadS: 0, perSeqOverheadS: 0 },
    );
    const predictedMs = (batch: number, chunk: number, cached: number): number => {
      const path = file([]);
      writeFileSync(path, [`${HEADER},chunk_tokens`, `h200,llama3.1-8b,32,prefix,${batch},${cached},fused-eager,100,0,0,${chunk}`].join('\n') + '\n');
      const [key] = checkMeasuredSteps(path).keys;
      assert.equal(key!.samples[0]!.label, `${batch > 1 ? `${batch}×` : ''}${chunk}@${cached}`);
      return key!.samples[0]!.defaultMs;
    };
    const cachedTokens = [0, 2048, 8192, 16384, 32768];
    for (const chunk of [512, 2048]) {
      const ms = cachedTokens.map((c) => predictedMs(1, chunk, c));
      cachedTokens.forEach((c, i) => {
        const shape = { prefillTokens: chunk, prefillSeqs: 1, prefillAttendTokens: chunk * (c + (chunk + 1) / 2), decodeSeqs: 0, decodeContextTokens: 0 };
        assert.ok(Math.abs(ms[i]! - roofline.stepTimeS(shape) * 1e3) < 1e-9, `P=${chunk} C=${c}: ${ms[i]} vs ${roofline.stepTimeS(shape) * 1e3}`);
        if (i > 0) assert.ok(ms[i]! > ms[i - 1]!, `P=${chunk}: ${ms.join(', ')} increases with the cached tokens`);
      });
      // Linear in C, with slope P × (seconds per attended pair): the cost of the chunk × cached term.
      const slopes = ms.slice(1).map((m, i) => (m - ms[i]!) / (cachedTokens[i + 1]! - cachedTokens[i]!));
      for (const s of slopes) assert.ok(Math.abs(s / slopes[0]! - 1) < 1e-9, JSON.stringify(slopes));
      const perPairMs = (roofline.stepTimeS({ prefillTokens: 1, prefillSeqs: 1, prefillAttendTokens: 2, decodeSeqs: 0, decodeContextTokens: 0 }) - roofline.stepTimeS({ prefillTokens: 1, prefillSeqs: 1, prefillAttendTokens: 1, decodeSeqs: 0, decodeContextTokens: 0 })) * 1e3;
      assert.ok(Math.abs(slopes[0]! / (chunk * perPairMs) - 1) < 1e-6, `slope ${slopes[0]} vs ${chunk * perPairMs}`);
    }
    // B sequences each with the same chunk after the same prefix: B · P tokens, B logits, B · P · (C + (P + 1)/2) pairs.
    const b3 = { prefillTokens: 3 * 512, prefillSeqs: 3, prefillAttendTokens: 3 * 512 * (2048 + 513 / 2), decodeSeqs: 0, decodeContextTokens: 0 };
    assert.ok(Math.abs(predictedMs(3, 512, 2048) - roofline.stepTimeS(b3) * 1e3) < 1e-9);
  });

  it('bad prefix rows are named with their line and column (exit 2); tokens_per_seq 0 stays an error for prefill and decode', async () => {
    const head = `${HEADER},chunk_tokens`;
    const good = 'h200,llama3.1-8b,32,prefix,1,2048,fused-eager,50,0,0,512';
    const bad = (row: string, header = head) => {
      const path = file([]);
      writeFileSync(path, [header, good, row].join('\n') + '\n');
      return path;
    };
    const rejects = (path: string, re: RegExp) =>
      assert.throws(() => checkMeasuredSteps(path), (e: unknown) => e instanceof ConfigError && re.test(e.message), re.source);
    const noChunk = file([]);
    writeFileSync(noChunk, [HEADER, good.replace(/,512$/, '')].join('\n') + '\n');
    rejects(noChunk, /steps\.csv:2 chunk_tokens: expected a column chunk_tokens for 'prefix' rows, got "none"/);
    rejects(bad(good.replace(/,512$/, ',0')), /steps\.csv:3 chunk_tokens: expected a positive integer \(the prompt chunk after the cached prefix\), got "0"/);
    rejects(bad(good.replace(/,512$/, ',-512')), /steps\.csv:3 chunk_tokens: expected a non-negative integer ≤ 1e9, got "-512"/);
    rejects(bad(good.replace(/,512$/, ',51.2')), /steps\.csv:3 chunk_tokens: expected a non-negative integer ≤ 1e9, got "51\.2"/);
    rejects(bad(good.replace(/,512$/, ',')), /steps\.csv:3 chunk_tokens: expected a non-negative integer ≤ 1e9, got ""/);
    rejects(bad(good.replace(',2048,', ',-2048,')), /steps\.csv:3 tokens_per_seq: expected a non-negative integer ≤ 1e9, got "-2048"/);
    rejects(bad(good.replace(',prefix,1,', ',prefix,0,')), /steps\.csv:3 batch: expected a positive integer, got "0"/);
    // 1e300 and hex were read as numbers (a batch of 1e300, a median of 16 ms).
    rejects(bad(good.replace(',prefix,1,', ',prefix,1e300,')), /steps\.csv:3 batch: expected a non-negative integer ≤ 1e9, got "1e300"/);
    rejects(bad(good.replace(',fused-eager,50,', ',fused-eager,0x10,')), /steps\.csv:3 median_ms: expected a non-negative number ≤ 1e9, got "0x10"/);
    // An empty cached prefix is a prefix row's C = 0, never a prompt or a context of 0 tokens.
    assert.equal(checkMeasuredSteps(bad(good.replace(',2048,', ',0,'))).keys[0]!.samples[0]!.label, '512@0');
    rejects(bad('h200,llama3.1-8b,32,prefill,1,0,fused-eager,50,0,0,0'), /steps\.csv:3 tokens_per_seq: expected a positive integer, got "0"/);
    rejects(bad('h200,llama3.1-8b,32,decode,1,0,compiled-graph,5,0,0,0'), /steps\.csv:3 tokens_per_seq: expected a positive integer, got "0"/);
    rejects(bad('h200,llama3.1-8b,32,mixed,4,0,fused-graph,5,0,0,128'), /steps\.csv:3 tokens_per_seq: expected a positive integer, got "0"/);
    try {
      await run(process.execPath, ['bin/llmfleet.js', 'calibrate', '--steps', bad(good.replace(/,512$/, ',0')), '--out', mkdtempSync(join(tmpdir(), 'llmfleet-steps-out-'))]);
      assert.fail('expected exit 2');
    } catch (e) {
      const x = e as { code: number; stderr: string };
      assert.equal(x.code, 2, x.stderr);
      assert.match(x.stderr, /steps\.csv:3 chunk_tokens: expected a positive integer/);
      assert.equal(x.stderr.trim().split('\n').length, 1, x.stderr);
    }
  });

  it('llmfleet calibrate --steps prints a prefix key with its chunk@cached samples', async () => {
    const out = mkdtempSync(join(tmpdir(), 'llmfleet-steps-out-'));
    const path = file([]);
    const rows = [512, 2048].flatMap((p) => [0, 8192, 32768].map((c) => `h200,llama3.1-8b,32,prefix,1,${c},fused-eager,${p / 20 + (p * c) / 4e6},0,0,${p}`));
    writeFileSync(path, [`${HEADER},chunk_tokens`, ...rows].join('\n') + '\n');
    const r = await run(process.execPath, ['bin/llmfleet.js', 'calibrate', '--steps', path, '--out', out]);
    assert.match(r.stdout, /^h200\/llama3\.1-8b\/prefix \(fused-eager\) .* 512@0 chunk@cached: [0-9.]+ \/ [0-9.]+ +2048@32768 chunk@cached: [0-9.]+ \/ [0-9.]+$/m);
    const j = JSON.parse(readFileSync(join(out, 'step-check.json'), 'utf8'));
    assert.deepEqual(j.keys.map((k: { key: string; kind: string }) => [k.key, k.kind]), [['h200/llama3.1-8b/prefix (fused-eager)', 'prefix']]);
  });

  // The defaults carry the measured 40 µs per layer (the GPU work here): graph-replayed decode within 3.6-10.1 %
  // on both GPUs, 1B to a 70B slice (docs/fidelity/perf.md); the fitted factors 1.9-7.3 %.
  it('the bundled H100 (pure, mixed, long, small models) and H200 (also mixed, long prompts and prefix chunks) measurements: every variant a key, one fit per device, graph-replayed decode within 12 % (defaults) and 8 % (fitted)', () => {
    const files = BUNDLED_STEPS.map((f) => relative(process.cwd(), f));
    const r = checkMeasuredSteps(files);
    assert.equal(r.keys.filter((k) => k.hardware === 'h100-80gb').length, 41, '5 models × (3 prefill + 4 decode variants + mixed), HF prefill for one');
    assert.equal(r.keys.filter((k) => k.hardware === 'h200').length, 36, '3 models × fused and compiled, prefill and decode, and mixed; 8B long prompts (mini variants) and prefix chunks; 2 small models × every variant and mixed; MoE prefill and decode');
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
    assert.throws(() => checkMeasuredSteps(file([good.replace('decode', 'verify')])), /steps\.csv:2 kind: expected 'prefill', 'decode', 'mixed' or 'prefix'/);
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
