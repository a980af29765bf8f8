import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG, CATALOG_LIMITS, getHardware, getModel, loadCatalogFile, parseCatalogYaml } from '../../src/model/catalog.ts';
import { HARDWARE } from '../../src/model/hardware.ts';
import { vocabParams } from '../../src/model/params.ts';
import { MODELS } from '../../src/model/models.ts';
import { ConfigError } from '../../src/util/errors.ts';

const HW_IDS = ['a100-40gb', 'a100-80gb', 'h100-80gb', 'h200', 'l4', 'a10g', 'a6000', 'rtx4090', 'mi300x', 'xeon-amx'];
const MODEL_IDS = [
  'llama2-7b', 'llama2-13b', 'llama2-70b', 'llama3.1-8b', 'llama3.1-70b', 'llama3.2-1b', 'llama3.2-3b',
  'mistral-7b', 'mixtral-8x7b', 'opt-30b', 'opt-66b', 'bloom-176b', 'llama3.2-11b-vision', 'codellama-34b',
];

test('every required hardware id is in the catalog with its own name and a source note', () => {
  for (const id of HW_IDS) {
    const hw = getHardware(id);
    assert.equal(hw.name, id);
    assert.ok(hw.source && hw.source.length > 10, id);
    assert.ok(hw.memoryBytes > 1e10 && hw.bf16Flops > 1e13 && hw.memBandwidthBytesPerS > 1e11, id);
  }
  assert.equal(getHardware('xeon-amx').kind, 'cpu');
  assert.deepEqual(Object.keys(HARDWARE).sort(), [...HW_IDS].sort());
});

test('every required model is in the catalog and its parameter count matches its architecture (with one vocab matrix if tied, two if not) within 0.1 %', () => {
  for (const id of MODEL_IDS) {
    const m = getModel(id);
    assert.equal(m.name, id);
    assert.ok(m.source, id);
    assert.equal(m.heads * m.headDim, m.name === 'llama3.2-3b' ? 3072 : m.hiddenSize, id);
    // Mixture of experts; vision model: params include the vision encoder the formula does not cover.
    if (id === 'mixtral-8x7b' || id === 'llama3.2-11b-vision') continue;
    // Dense transformer: attention 2·h·(heads+kvHeads)·hd, MLP 3·h·I (gated llama/mistral) or 2·h·I (OPT, BLOOM).
    const gated = !id.startsWith('opt') && !id.startsWith('bloom');
    const attn = 2 * m.hiddenSize * (m.heads + m.kvHeads) * m.headDim;
    const mlp = (gated ? 3 : 2) * m.hiddenSize * m.intermediateSize!;
    const body = m.layers * (attn + mlp);
    const est = body + vocabParams(m);
    assert.ok(Math.abs(est - m.params) / m.params < 0.001, `${id}: ${m.params} vs ${est}`);
  }
  assert.deepEqual(Object.keys(MODELS).sort(), [...MODEL_IDS].sort());
});

test('mixtral is a mixture of experts with about 12.9B of 46.7B parameters active', () => {
  const m = getModel('mixtral-8x7b');
  assert.ok(Math.abs(m.activeParams - 12.9e9) < 0.1e9);
  assert.ok(Math.abs(m.params - 46.7e9) < 0.1e9);
});

test('an unknown id throws a ConfigError that lists the valid ids', () => {
  assert.throws(() => getHardware('h1000'), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^unknown hardware 'h1000'; valid: a100-40gb, a100-80gb, .*xeon-amx$/);
    return true;
  });
  assert.throws(() => getModel('llama9'), /unknown model 'llama9'; valid: .*bloom-176b/);
  assert.throws(() => getModel('toString'), /unknown model/);
});

test('a catalog file overrides one field of a built-in and adds new entries', () => {
  const cat = parseCatalogYaml(
    [
      'hardware:',
      '  h100-80gb: { priceUsdPerHour: 2.5 }',
      '  b200:',
      '    kind: gpu',
      '    memoryBytes: 192e9',
      '    bf16Flops: 2.25e15',
      '    memBandwidthBytesPerS: 8e12',
      '    interconnectBytesPerS: 900e9',
      '    priceUsdPerHour: 9',
      '    devicesPerNode: 8',
      'models:',
      '  tiny: { layers: 2, hiddenSize: 64, heads: 4, kvHeads: 2, headDim: 16, intermediateSize: 128,',
      '          vocabSize: 100, params: 1e6, activeParams: 1e6, contextLength: 512, bytesPerParam: 2 }',
    ].join('\n'),
    'cat.yaml',
  );
  assert.equal(getHardware('h100-80gb', cat).priceUsdPerHour, 2.5);
  assert.equal(getHardware('h100-80gb', cat).bf16Flops, 989e12);
  assert.equal(getHardware('b200', cat).memoryBytes, 192e9);
  assert.equal(getModel('tiny', cat).kvHeads, 2);
  assert.equal(getModel('llama2-7b', cat).layers, 32);
  // The built-ins are untouched.
  assert.equal(getHardware('h100-80gb').priceUsdPerHour, 12.29);
  assert.throws(() => getHardware('b200', BUILTIN_CATALOG), /unknown hardware 'b200'/);
});

test('loadCatalogFile reads a file and names it, the line and the field in errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-cat-'));
  const good = join(dir, 'good.yaml');
  writeFileSync(good, 'models:\n  llama2-7b:\n    contextLength: 8192\n');
  assert.equal(getModel('llama2-7b', loadCatalogFile(good)).contextLength, 8192);

  const unknownKey = join(dir, 'bad1.yaml');
  writeFileSync(unknownKey, 'hardware:\n  h100-80gb:\n    priceUsd: 2\n');
  assert.throws(() => loadCatalogFile(unknownKey), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /bad1\.yaml:3 hardware\.h100-80gb\.priceUsd: expected no unknown key here \(found .priceUsd.\)/);
    return true;
  });

  const badValue = join(dir, 'bad2.yaml');
  writeFileSync(badValue, 'hardware:\n  h100-80gb:\n    memoryBytes: -5\n');
  assert.throws(() => loadCatalogFile(badValue), /bad2\.yaml:3 hardware\.h100-80gb\.memoryBytes: expected .*got -5/);

  const incomplete = join(dir, 'bad3.yaml');
  writeFileSync(incomplete, 'hardware:\n  newgpu:\n    kind: gpu\n');
  assert.throws(() => loadCatalogFile(incomplete), /bad3\.yaml:3 hardware\.newgpu\.memoryBytes: .*needs every field/);

  const kvHeads = join(dir, 'bad4.yaml');
  writeFileSync(kvHeads, 'models:\n  llama2-7b:\n    kvHeads: 64\n');
  assert.throws(() => loadCatalogFile(kvHeads), /bad4\.yaml:3 models\.llama2-7b\.kvHeads: expected a divisor of heads/);

  // A tiny model whose parameter count cannot hold its vocabulary matrices (2 × 32000 × 4096 = 262M).
  const tooSmall = join(dir, 'bad6.yaml');
  writeFileSync(tooSmall, 'models:\n  llama2-7b:\n    params: 2e8\n    activeParams: 2e8\n');
  assert.throws(() => loadCatalogFile(tooSmall), /bad6\.yaml:\d+ models\.llama2-7b\.activeParams: expected more than the embedding and LM-head parameters/);
  writeFileSync(tooSmall, 'models:\n  llama2-7b:\n    params: 2e8\n    activeParams: 2e8\n    tiedEmbeddings: true\n');
  assert.equal(loadCatalogFile(tooSmall).models['llama2-7b']!.params, 2e8);

  const notYaml = join(dir, 'bad5.yaml');
  writeFileSync(notYaml, 'hardware: [\n');
  assert.throws(() => loadCatalogFile(notYaml), /bad5\.yaml:\d+: expected valid YAML/);

  assert.throws(() => loadCatalogFile(join(dir, 'missing.yaml')), /missing\.yaml: expected a readable catalog YAML/);
});

test('catalog numbers have finite upper bounds: a price or size near the largest double is refused at its line, not turned into $Infinity', () => {
  const cases: [string, string, RegExp][] = [
    ['hardware:\n  h100-80gb: { priceUsdPerHour: 1e308 }\n', 'hardware.h100-80gb.priceUsdPerHour', /expected ≤ 1000000, got 1e\+308/],
    ['hardware:\n  h100-80gb: { memoryBytes: 1e300 }\n', 'hardware.h100-80gb.memoryBytes', /expected ≤ 1000000000000000, got 1e\+300/],
    ['hardware:\n  h100-80gb: { bf16Flops: 1e300 }\n', 'hardware.h100-80gb.bf16Flops', /expected ≤/],
    ['hardware:\n  h100-80gb: { memBandwidthBytesPerS: 1e300 }\n', 'hardware.h100-80gb.memBandwidthBytesPerS', /expected ≤/],
    ['hardware:\n  h100-80gb: { interconnectBytesPerS: 1e300 }\n', 'hardware.h100-80gb.interconnectBytesPerS', /expected ≤/],
    ['hardware:\n  h100-80gb: { devicesPerNode: 1000000 }\n', 'hardware.h100-80gb.devicesPerNode', /expected ≤ 1024/],
    ['models:\n  llama3.1-8b: { bytesPerParam: 1e300 }\n', 'models.llama3.1-8b.bytesPerParam', /expected ≤ 64/],
    ['models:\n  llama3.1-8b: { params: 1e300, activeParams: 1e300 }\n', 'models.llama3.1-8b.params', /expected ≤ 1000000000000000/],
    ['models:\n  llama3.1-8b: { layers: 1000000000 }\n', 'models.llama3.1-8b.layers', /expected ≤ 10000/],
    ['models:\n  llama3.1-8b: { contextLength: 1e12 }\n', 'models.llama3.1-8b.contextLength', /expected ≤ 1000000000/],
    // Floors of the device rates (a 1e-3 FLOP/s device failed much later, blaming output.timelineIntervalS).
    ['hardware:\n  h100-80gb: { bf16Flops: 1e-3 }\n', 'hardware.h100-80gb.bf16Flops', /expected ≥ 1000000000/],
    ['hardware:\n  h100-80gb: { memBandwidthBytesPerS: 10 }\n', 'hardware.h100-80gb.memBandwidthBytesPerS', /expected ≥ 1000000/],
  ];
  for (const [yaml, path, msg] of cases) {
    assert.throws(
      () => parseCatalogYaml(yaml, 'cat.yaml'),
      (e: unknown) => e instanceof ConfigError && e.message.startsWith(`cat.yaml:2 ${path}: `) && msg.test(e.message),
      path,
    );
  }
  // Every built-in is well inside the bounds.
  for (const hw of Object.values(BUILTIN_CATALOG.hardware)) {
    assert.ok(hw.priceUsdPerHour <= CATALOG_LIMITS.priceUsdPerHour && hw.memoryBytes <= CATALOG_LIMITS.memoryBytes && hw.bf16Flops <= CATALOG_LIMITS.bf16Flops, hw.name);
    assert.ok(hw.bf16Flops >= CATALOG_LIMITS.minBf16Flops && hw.memBandwidthBytesPerS >= CATALOG_LIMITS.minBytesPerS && hw.interconnectBytesPerS >= CATALOG_LIMITS.minBytesPerS, hw.name);
  }
  for (const m of Object.values(BUILTIN_CATALOG.models)) assert.ok(m.params <= CATALOG_LIMITS.params && m.layers <= CATALOG_LIMITS.layers, m.name);
  assert.equal(parseCatalogYaml('hardware:\n  h100-80gb: { priceUsdPerHour: 1000000 }\n', 'ok.yaml').hardware['h100-80gb']!.priceUsdPerHour, 1e6);
});
