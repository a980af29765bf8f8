import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { LAYER_OPS, checkVidurProfiles } from '../../src/perf/vidur-check.ts';

const run = promisify(execFile);
const SHAPE_COLS = 'n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers';
const MEDIANS = LAYER_OPS.map((op) => `time_stats.${op}.median`).join(',');

/** A Vidur tree with one Llama-2-7B-shaped layer file on h100 and one h100_dgx all-reduce file (each only if it has rows). */
function fixture(layerRows: [tokens: number, tp: number, ms: number][], allReduceRows: [workers: number, perNode: number, bytes: number, ms: number][]): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-vidur-'));
  mkdirSync(join(dir, 'compute/h100/meta-llama/Llama-2-7b-hf'), { recursive: true });
  mkdirSync(join(dir, 'network/h100_dgx'), { recursive: true });
  // The whole layer time in one operator, the other eight 0 (they are summed).
  const layer = layerRows.map(([t, tp, ms]) => `${[ms, ...Array(LAYER_OPS.length - 1).fill(0)].join(',')},32,32,4096,11008,32768,True,${t},${tp}`);
  if (layer.length > 0) writeFileSync(join(dir, 'compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv'), [`${MEDIANS},${SHAPE_COLS}`, ...layer].join('\n') + '\n');
  const ar = allReduceRows.map(([w, d, b, ms], i) => `${i},${ms},0,${w},${b},all_reduce,${d},8`);
  if (ar.length > 0) writeFileSync(join(dir, 'network/h100_dgx/all_reduce.csv'), [',time_stats.all_reduce.median,rank,num_workers,size,collective,devices_per_node,max_devices_per_node', ...ar].join('\r\n') + '\r\n');
  return dir;
}

// The roofline's formulas with the h100-80gb datasheet and its default factors (compute 0.6, memory 0.8, comm 0.6,
// hop 2 µs), written out here so the check is tested against them, not against itself.
const LAYER_PARAMS = 4096 * (32 + 2 * 32) * 128 + 32 * 128 * 4096 + 3 * 4096 * 11008;
/** The roofline of one layer under the default factors, without and with their 40 µs fixed latency per layer. */
const roofMs = (tokens: number, tp: number) =>
  Math.max((2 * (LAYER_PARAMS / tp) * tokens) / (989e12 * 0.6), ((LAYER_PARAMS / tp) * 2) / (3350e9 * 0.8)) * 1e3;
const layerMs = (tokens: number, tp: number) => roofMs(tokens, tp) + 0.04;
const allReduceMs = (workers: number, bytes: number) => (((2 * (workers - 1)) / workers) * bytes / (450e9 * 0.6) + 2 * (workers - 1) * 2e-6) * 1e3;

describe('checkVidurProfiles: the roofline against Vidur operator and all-reduce profiles', () => {
  it('a layer is the roofline of its shape, an all-reduce the ring formula: rows measured at exactly those have 0 % error', () => {
    const sizes = [1, 8, 64, 512, 4096];
    const dir = fixture(
      sizes.flatMap((t) => [1, 2].map((tp) => [t, tp, layerMs(t, tp)] as [number, number, number])),
      [
        ...[2048, 65536, 1 << 20, 1 << 24].map((b) => [8, 8, b, allReduceMs(8, b)] as [number, number, number, number]),
        [8, 8, 2048, allReduceMs(8, 2048)], // the same measurement again (another pandas index): dropped
        [16, 8, 2048, 1], // two nodes: not a tensor-parallel group, ignored
      ],
    );
    const r = checkVidurProfiles(dir);
    assert.deepEqual(r.keys.map((k) => k.key), ['h100/Llama-2-7b-hf/tp1', 'h100/Llama-2-7b-hf/tp2', 'h100_dgx/tp8']);
    for (const k of r.keys) assert.ok(k.test.default.mape < 1e-9, `${k.key}: ${k.test.default.mape}`);
    assert.deepEqual(r.keys.map((k) => k.test.default.n), [2, 2, 2], 'alternate rows are held out; the duplicate is gone');
    const [layer1] = r.keys;
    assert.equal(layer1!.samples[0]!.x, 1);
    assert.ok(Math.abs(layer1!.samples[0]!.measuredMs - layerMs(1, 1)) < 1e-12);
    // calibrated.ts has h100 factors, which differ from the defaults.
    assert.ok(r.keys.every((k) => k.test.calibrated !== undefined && k.test.calibrated.mape > 1));
    assert.deepEqual(r.fits.map((f) => [f.group, f.kind]), [['h100', 'layer'], ['h100_dgx', 'all-reduce']]);
  });

  it('a fixed latency per layer is what the fit adds; the factors come back from rows made with them', () => {
    const sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
    const dir = fixture(sizes.map((t) => [t, 1, roofMs(t, 1) * 1.25 + 0.03] as [number, number, number]), []);
    const r = checkVidurProfiles(dir);
    const f = r.fits[0]!.fitted;
    assert.ok(Math.abs(f.compute! - 0.6 / 1.25) < 0.01 && Math.abs(f.memory! - 0.8 / 1.25) < 0.01, JSON.stringify(f));
    assert.ok(Math.abs(f.perLayerOverheadS! - 30e-6) < 1e-6, JSON.stringify(f));
    assert.ok(r.keys[0]!.test.fitted.mape < 0.5 && r.keys[0]!.test.default.mape > 10);
  });

  it('the bundled copy: every Llama shape and TP, every single-node all-reduce, and the sums Vidur documents', () => {
    const r = checkVidurProfiles('data/profiles/vidur');
    assert.equal(r.keys.filter((k) => k.kind === 'layer').length, 20, '5 model × GPU files × TP 1, 2, 4, 8');
    assert.equal(r.keys.filter((k) => k.kind === 'all-reduce').length, 10);
    const a100 = r.keys.find((k) => k.key === 'a100/Llama-2-7b-hf/tp1')!;
    // Vidur's README: about 0.29 ms per layer at 1 token for Llama-2-7B on A100 at TP 1.
    assert.ok(Math.abs(a100.samples[0]!.measuredMs - 0.29) < 0.005, JSON.stringify(a100.samples));
    assert.deepEqual(r.skipped, []);
  });

  it('bad files are named with their line and column; the CLI exits 2 with one line', async () => {
    const dir = fixture([[1, 1, 0.1]], []);
    const file = join(dir, 'compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv');
    writeFileSync(file, readFileSync(file, 'utf8').replace(',True,1,1', ',True,one,1'));
    assert.throws(() => checkVidurProfiles(dir), /mlp\.csv:2 num_tokens: expected a non-negative integer ≤ 1e9, got "one"/);
    assert.throws(() => checkVidurProfiles(join(dir, 'compute')), /expected a Vidur profiling folder with compute\/ and network\//);
    // A header alone (a file cut short) is an error, not a file whose rows silently vanish from the check.
    writeFileSync(file, `${MEDIANS},${SHAPE_COLS}\n`);
    assert.throws(() => checkVidurProfiles(dir), /mlp\.csv:2: expected at least one data row, got "?none"?/);
    writeFileSync(file, readFileSync(file, 'utf8') + `${[0.1, ...Array(LAYER_OPS.length - 1).fill(0)].join(',')},32,32,4096,11008,32768,True,one,1\n`);
    try {
      await run(process.execPath, ['bin/llmfleet.js', 'calibrate', '--vidur', dir, '--out', mkdtempSync(join(tmpdir(), 'llmfleet-vidur-out-'))]);
      assert.fail('expected exit 2');
    } catch (e) {
      const x = e as { code: number; stderr: string };
      assert.equal(x.code, 2, x.stderr);
      assert.match(x.stderr, /mlp\.csv:2 num_tokens: expected a non-negative integer/);
      assert.equal(x.stderr.trim().split('\n').length, 1, x.stderr);
    }
  });

  it('llmfleet calibrate --vidur writes vidur-check.json and prints one line per row group', async () => {
    const dir = fixture([[1, 1, 0.1], [64, 1, 0.2], [512, 1, 1]], [[2, 2, 2048, 0.01], [2, 2, 1 << 20, 0.02]]);
    const out = mkdtempSync(join(tmpdir(), 'llmfleet-vidur-out-'));
    const r = await run(process.execPath, ['bin/llmfleet.js', 'calibrate', '--vidur', dir, '--out', out]);
    assert.match(r.stdout, /^layer h100\/Llama-2-7b-hf\/tp1 +[0-9.]+% +[0-9.]+% +[0-9.]+% +1 +1 tok: 0\.100 \/ 0\.191 /m);
    assert.match(r.stdout, /^all-reduce h100_dgx\/tp2 /m);
    assert.match(r.stdout, /layers on h100 \(datasheet h100-80gb\): compute [0-9.]+, memory [0-9.]+, \+ [0-9.]+ µs per layer/);
    const j = JSON.parse(readFileSync(join(out, 'vidur-check.json'), 'utf8'));
    assert.match(j.command, /calibrate --vidur/);
    assert.equal(j.keys.length, 2);
  });
});
