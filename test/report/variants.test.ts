import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_COMPARE_SCENARIO, loadComparison, parseVariantFlag } from '../../src/report/variants.ts';
import { ConfigError, UserError } from '../../src/util/errors.ts';

const conv = resolve('data/azure-llm/AzureLLMInferenceTrace_conv.csv');

test('parses NAME:PATH=VALUE,PATH=VALUE, keeping commas inside flow values', () => {
  assert.deepEqual(parseVariantFlag('jsq:routing.policy=jsq'), { name: 'jsq', overrides: ['routing.policy=jsq'] });
  assert.deepEqual(parseVariantFlag('big:fleet.pools.0.count=4, routing.policy=jsq'), { name: 'big', overrides: ['fleet.pools.0.count=4', 'routing.policy=jsq'] });
  assert.deepEqual(parseVariantFlag('e:fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false},seed=2'), {
    name: 'e',
    overrides: ['fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false}', 'seed=2'],
  });
  assert.deepEqual(parseVariantFlag('base'), { name: 'base', overrides: [] });
  assert.deepEqual(parseVariantFlag('base:'), { name: 'base', overrides: [] });
});

test('bad variant syntax is a one-line UserError naming the flag and the variant', () => {
  const bad: [string, RegExp][] = [
    [':routing.policy=jsq', /--variant :routing\.policy=jsq: expected NAME:PATH=VALUE/],
    ['a b:routing.policy=jsq', /--variant a b:/],
    ['x:routing.policy', /variant 'x': expected PATH=VALUE, got 'routing\.policy'/],
    ['x:routing.policy=jsq,,seed=2', /variant 'x': expected PATH=VALUE, got ''/],
    ['x:=3', /variant 'x'/],
    ['x:a..b=3', /variant 'x'/],
  ];
  for (const [flag, re] of bad) {
    assert.throws(() => parseVariantFlag(flag), (e: Error) => e instanceof UserError && re.test(e.message) && !e.message.includes('\n'), flag);
  }
});

test('loads the bundled comparison: three routers on one workload, same seed', () => {
  const s = loadComparison({});
  assert.equal(s.source, DEFAULT_COMPARE_SCENARIO);
  assert.deepEqual(s.variants.map((v) => v.name), ['round-robin', 'least-requests', 'jsq']);
  assert.deepEqual(s.variants.map((v) => v.scenario.routing.policy), ['round-robin', 'least-requests', 'jsq']);
  assert.deepEqual(s.variants[2]!.overrides, ['routing.policy=jsq']);
  for (const v of s.variants) {
    assert.deepEqual(v.scenario.workload, s.base.workload);
    assert.equal(v.scenario.seed, s.base.seed);
  }
});

test('a bare --variant NAME picks the scenario\'s variant of that name (as simulate --variant does); an unknown bare name is the base', () => {
  const s = loadComparison({ variants: ['jsq', 'round-robin', 'base', 'big:fleet.pools.0.count=5'] });
  assert.deepEqual(s.variants.map((v) => [v.name, v.scenario.routing.policy]), [
    ['jsq', 'jsq'],
    ['round-robin', 'round-robin'],
    ['base', s.base.routing.policy],
    ['big', s.base.routing.policy],
  ]);
  assert.deepEqual(s.variants[0]!.overrides, ['routing.policy=jsq']);
});

test('--variant flags replace the scenario list; --set, --seed and --trace apply to every variant', () => {
  const s = loadComparison({ variants: ['a:fleet.pools.0.count=1', 'b:fleet.pools.0.count=5'], sets: ['workload.transforms.limit=50'], seed: 9, trace: { path: conv, format: 'azure' } });
  assert.deepEqual(s.variants.map((v) => [v.name, v.scenario.fleet.pools[0]!.count, v.scenario.seed, v.scenario.workload.transforms?.limit]), [
    ['a', 1, 9, 50],
    ['b', 5, 9, 50],
  ]);
  assert.equal(s.variants[0]!.scenario.workload.trace?.path, conv);
});

test('a bad override exits as a UserError naming the variant and the override', () => {
  assert.throws(
    () => loadComparison({ variants: ['ok:routing.policy=jsq', 'typo:routing.policy=lest-kv'] }),
    (e: Error) => e instanceof UserError && /variant 'typo' \(routing\.policy=lest-kv\)/.test(e.message) && /least-kv/.test(e.message),
  );
  assert.throws(
    () => loadComparison({ variants: ['neg:fleet.pools.0.count=-1'] }),
    (e: Error) => e instanceof UserError && /variant 'neg'/.test(e.message) && /fleet\.pools\[0\]\.count/.test(e.message),
  );
  assert.throws(() => loadComparison({ variants: ['bad:routing.policy=[1,'] }), (e: Error) => e instanceof UserError && /^--variant bad:routing\.policy=\[1,: variant 'bad': routing\.policy=\[1,: expected PATH=VALUE/.test(e.message));
  assert.throws(() => loadComparison({ variants: ['a', 'a:seed=2'] }), /variant 'a' is given twice/);
});

function scenarioFile(lines: string[]): string {
  const f = join(mkdtempSync(join(tmpdir(), 'llmfleet-variants-')), 's.yaml');
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
}

const BASE = ['name: v', 'workload:', `  trace: { path: ${conv}, format: azure }`, 'fleet:', '  pools:', '    - { model: llama3.1-8b, hardware: h100-80gb, count: 1 }'];

test('a variants: list in the scenario is read apart from the strict schema, and its errors name the line', () => {
  const ok = loadComparison({ file: scenarioFile([...BASE, 'variants:', '  - name: two', '    set: { fleet.pools.0.count: 2, routing.policy: jsq }', '  - name: same']) });
  assert.deepEqual(ok.variants.map((v) => [v.name, v.scenario.fleet.pools[0]!.count, v.scenario.routing.policy]), [
    ['two', 2, 'jsq'],
    ['same', 1, 'round-robin'],
  ]);
  assert.throws(
    () => loadComparison({ file: scenarioFile([...BASE, 'variants:', '  - name: two', '    sett: {}']) }),
    (e: Error) => e instanceof ConfigError && /s\.yaml:9 variants\[0\]\.sett/.test(e.message),
  );
  // The rest of the file is still validated strictly, with its line numbers.
  assert.throws(
    () => loadComparison({ file: scenarioFile([...BASE, 'routng: {}', 'variants:', '  - name: a']) }),
    (e: Error) => e instanceof ConfigError && /s\.yaml:7 routng/.test(e.message),
  );
  // A bad override of the file's list is named by its line there (it was named only by the variant's name).
  assert.throws(
    () => loadComparison({ file: scenarioFile([...BASE, 'variants:', '  - name: a', '    set:', '      seed: 1', '      routing.polcy: jsq']) }),
    (e: Error) => e instanceof ConfigError && /s\.yaml:11 variants\[0\] 'a' \(routing\.polcy=jsq\) routing\.polcy: expected no unknown key here \(found 'polcy'\)$/.test(e.message),
  );
  // A string value that YAML would read as a number stays a string.
  const quoted = loadComparison({ file: scenarioFile([...BASE, 'variants:', "  - name: n", "    set: { name: '8' }"]) });
  assert.equal(quoted.variants[0]!.scenario.name, '8');
  assert.throws(() => loadComparison({ file: scenarioFile(BASE) }), /nothing to compare/);
  assert.throws(() => loadComparison({ file: scenarioFile([...BASE, 'variants:', '  - name: a', '  - name: a']) }), /s\.yaml:9 variants\[1\]\.name: variant 'a' is given twice/);
});

test('regression: --variant splits on a comma only where the text before it is a whole YAML value, as --set reads it', () => {
  const path = 'workload.synthetic.lengths={kind: empirical, path: "a,b.csv"}';
  assert.deepEqual(parseVariantFlag(`x:${path},seed=2`), { name: 'x', overrides: [path, 'seed=2'] });
  // An escaped quote inside a double-quoted value, a doubled one inside a single-quoted value.
  assert.deepEqual(parseVariantFlag('x:name="say \\"hi, there\\"",seed=2'), { name: 'x', overrides: ['name="say \\"hi, there\\""', 'seed=2'] });
  assert.deepEqual(parseVariantFlag("x:name='it''s, ok',seed=2"), { name: 'x', overrides: ["name='it''s, ok'", 'seed=2'] });
  // Prefixes the yaml lexer reads leniently at the end of its input (`'''`, `"a\"`) are not taken for values.
  assert.deepEqual(parseVariantFlag("x:name=''',',seed=2"), { name: 'x', overrides: ["name=''','", 'seed=2'] });
  assert.deepEqual(parseVariantFlag('x:name="a\\",b",seed=2'), { name: 'x', overrides: ['name="a\\",b"', 'seed=2'] });
  // A quote inside a plain value is just a character (YAML reads `it's` as it's), not the start of a string.
  assert.deepEqual(parseVariantFlag("x:name=it's,seed=2"), { name: 'x', overrides: ["name=it's", 'seed=2'] });
  assert.deepEqual(parseVariantFlag('x:fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false},routing.policy=jsq'), {
    name: 'x',
    overrides: ['fleet.pools.0.engine={maxNumSeqs: 64, chunkedPrefill: false}', 'routing.policy=jsq'],
  });
  // Each override reads back exactly as a --set of the same text would.
  const s = loadComparison({ variants: ['x:name="say \\"hi, there\\"",seed=2', "y:name=it's"] });
  assert.deepEqual(s.variants.map((v) => [v.scenario.name, v.scenario.seed]), [['say "hi, there"', 2], ["it's", s.base.seed]]);
});

test('regression: an unbalanced quote, bracket or brace in --variant is one line naming the flag, the override and what was expected', () => {
  for (const flag of ['x:name="abc,seed=2', 'x:fleet.pools.0.engine={maxNumSeqs: 64,seed=2', "x:name='it''s,seed=2", 'x:routing.policy=[jsq']) {
    assert.throws(
      () => parseVariantFlag(flag),
      (e: Error) =>
        e instanceof UserError &&
        e.message.startsWith(`--variant ${flag}: variant 'x': `) &&
        /a YAML scalar or flow collection .*unbalanced quote, bracket or brace/.test(e.message) &&
        !e.message.includes('\n'),
      flag,
    );
  }
});
