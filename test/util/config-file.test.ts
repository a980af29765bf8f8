import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { applyOverrides, formatPath, parseConfigText, validateConfig } from '../../src/util/config-file.ts';
import { ConfigError, UserError } from '../../src/util/errors.ts';

test('overrides set nested fields, index arrays, and read values as YAML', () => {
  const raw: Record<string, unknown> = { fleet: { pools: [{ count: 1 }] } };
  applyOverrides(raw, ['fleet.pools.0.count=8', 'routing.policy=jsq', 'engine.chunkedPrefill=false', 'w={kind: poisson, ratePerS: 5}', 'name=']);
  assert.deepEqual(raw, {
    fleet: { pools: [{ count: 8 }] },
    routing: { policy: 'jsq' },
    engine: { chunkedPrefill: false },
    w: { kind: 'poisson', ratePerS: 5 },
    name: '',
  });
});

test('malformed overrides are user errors naming the flag', () => {
  assert.throws(() => applyOverrides({}, ['routing.policy']), (e: unknown) => e instanceof UserError && /--set routing\.policy: expected PATH=VALUE/.test(e.message));
  assert.throws(() => applyOverrides({ a: 3 }, ['a.b=1']), (e: unknown) => e instanceof UserError && /'a' is a number/.test(e.message));
  assert.throws(() => applyOverrides({}, ['a..b=1']), /empty segment/);
  // An unterminated quote is an error, not the text up to the end (the yaml lexer's end-of-input leniency).
  for (const v of ["'''", '"a\\"', "'a"]) {
    assert.throws(() => applyOverrides({}, [`name=${v}`]), (e: unknown) => e instanceof UserError && /not a valid YAML scalar/.test(e.message), v);
  }
  const quoted: Record<string, unknown> = {};
  applyOverrides(quoted, ["a=''''", 'b="x\\"y"', 'c=  ']);
  assert.deepEqual(quoted, { a: "'", b: 'x"y', c: '' });
  const pools = () => ({ fleet: { pools: [{ count: 1 }] } });
  assert.throws(() => applyOverrides(pools(), ['fleet.pools.5.count=1']), /'fleet\.pools' got index 5, but the list has 1 item \(use 0–1\)/);
  assert.throws(() => applyOverrides(pools(), ['fleet.pools.-1.count=1']), /'-1' is not a path segment/);
  assert.throws(() => applyOverrides(pools(), ['fleet.pools[0].count=1']), /'pools\[0\]' is not a path segment/);
  assert.throws(() => applyOverrides(pools(), ['fleet.pools.x=1']), /it is a list \(use a number\)/);
  assert.throws(() => applyOverrides(pools(), ['__proto__.x=1']), /'__proto__' is not a config key/);
  assert.equal(({} as Record<string, unknown>).x, undefined, 'Object.prototype untouched');
  const appended = pools();
  applyOverrides(appended, ['fleet.pools.1.count=2']);
  assert.deepEqual(appended.fleet.pools, [{ count: 1 }, { count: 2 }]);
});

test('schema errors name the line of the offending key, the dotted path and what was expected', () => {
  const doc = parseConfigText('name: x\nlist:\n  - n: 1\n  - n: -4\n', 'f.yaml');
  const schema = z.object({ name: z.string(), list: z.array(z.object({ n: z.number().min(0) }).strict()) }).strict();
  assert.throws(
    () => validateConfig(doc, schema),
    (e: unknown) => e instanceof ConfigError && e.message === 'f.yaml:4 list[1].n: expected ≥ 0, got -4',
  );
  const bad = parseConfigText('name: x\nlist: []\nextra: 1\n', 'g.yaml');
  assert.throws(() => validateConfig(bad, schema), (e: unknown) => e instanceof ConfigError && /^g\.yaml:3 extra: expected no unknown key/.test(e.message));
  // String lengths read as such, not as numbers.
  const named = z.object({ name: z.string().min(1), code: z.string().max(3) }).strict();
  assert.throws(() => validateConfig(parseConfigText('name: ""\ncode: ab\n', 'h.yaml'), named), (e: unknown) => e instanceof ConfigError && e.message === 'h.yaml:1 name: expected a non-empty string, got ""');
  assert.throws(() => validateConfig(parseConfigText('name: a\ncode: abcd\n', 'h.yaml'), named), (e: unknown) => e instanceof ConfigError && e.message === 'h.yaml:2 code: expected a string of at most 3 characters, got "abcd"');
});

test('invalid YAML is reported with its line', () => {
  assert.throws(() => parseConfigText('a: [1, 2\nb: 3\n', 'h.yaml'), (e: unknown) => e instanceof ConfigError && /^h\.yaml:\d+: expected valid YAML/.test(e.message));
});

test('a YAML tag that does not resolve is refused where it is written, in a file and in --set (it used to read as a string)', () => {
  assert.throws(() => parseConfigText('name: x\nseed: !!float 1\n', 't.yaml'), (e: unknown) => e instanceof ConfigError && e.message === 't.yaml:2: expected valid YAML whose tags resolve (or plain values: 1, 1.5, "text"), got "Unresolved tag: !!float"');
  assert.throws(() => parseConfigText('name: !mine x\n', 'u.yaml'), (e: unknown) => e instanceof ConfigError && /^u\.yaml:1: .*got "Unresolved tag: !mine"/.test(e.message));
  assert.throws(() => applyOverrides({}, ['seed=!!float 1']), (e: unknown) => e instanceof UserError && e.message === '--set seed=!!float 1: the value\'s tag does not resolve (Unresolved tag: !!float); write the plain value (1, 1.5, "text")');
  // Tags that resolve keep working.
  const o: Record<string, unknown> = {};
  applyOverrides(o, ['a=!!int 3', 'b=!!str 5', 'c=!!float 1.5']);
  assert.deepEqual(o, { a: 3, b: '5', c: 1.5 });
  assert.deepEqual(parseConfigText('a: !!str 5\n', 'v.yaml').raw, { a: '5' });
});

test('paths format with dots and brackets', () => {
  assert.equal(formatPath(['fleet', 'pools', 0, 'count']), 'fleet.pools[0].count');
});

/** A "billion laughs" file: nine aliases per level, `levels` deep (699 bytes at 11 levels expand to 9^11 nodes). */
function aliasBomb(levels: number): string {
  let s = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let prev = 'a';
  for (let i = 1; i <= levels; i++) {
    s += `b${i}: &b${i} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
    prev = `b${i}`;
  }
  return s;
}

test('a YAML alias bomb is a one-line ConfigError naming the file and the first alias, not a ReferenceError', () => {
  // (A .json file is held to JSON, which has no aliases: see the .json test below.)
  for (const source of ['bomb.yaml', 'bomb.yml', 'bomb']) {
    assert.throws(
      () => parseConfigText(aliasBomb(11), source),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith(`${source}:2: expected valid ${source.endsWith('.json') ? 'JSON' : 'YAML'}`) &&
        /at most 100 alias \(\*name\) expansions/.test(e.message) &&
        /got "too many alias expansions"/.test(e.message) &&
        !e.message.includes('\n'),
      source,
    );
  }
  // Ordinary reuse of an anchor still reads, and an alias before its anchor is the file's fault too.
  assert.deepEqual(parseConfigText('p: &p { count: 1 }\nq: [*p, *p]\n', 'ok.yaml').raw, { p: { count: 1 }, q: [{ count: 1 }, { count: 1 }] });
  assert.throws(() => parseConfigText('a: *x\nb: &x 1\n', 'late.yaml'), (e: unknown) => e instanceof ConfigError && /^late\.yaml:1: expected valid YAML \(the parser: Unresolved alias \(the anchor must be set before the alias\): x\)$/.test(e.message));
});

test('a union none of whose options match reports the one option that got inside the value, at its own path', () => {
  const weights = z.object({ tier: z.union([z.string(), z.record(z.string(), z.number())]) });
  const at = (raw: unknown) => {
    try {
      validateConfig(parseConfigText(JSON.stringify(raw), 'w.yaml'), weights);
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };
  assert.equal(at({ tier: { a: 'x' } }), 'w.yaml:1 tier.a: expected a value of type number, got "x"');
  assert.equal(at({ tier: 3 }), 'w.yaml:1 tier: expected one of the allowed shapes, got 3');
  // Infinity is refused by z.number() as a type error: say what is wrong with it.
  const num = z.object({ n: z.number() });
  const doc = parseConfigText('n: .inf\n', 'n.yaml');
  assert.throws(() => validateConfig(doc, num), (e: unknown) => e instanceof ConfigError && e.message === 'n.yaml:1 n: expected a finite number, got Infinity');
  assert.equal(formatPath(['model', '']), 'model.""');
});

test('a .json config is held to JSON, at the line of the fault (YAML took trailing commas, comments, NaN and YAML text)', () => {
  const bad: [string, number, RegExp][] = [
    ['{\n  "a": 1,\n  "b": 2,\n}\n', 4, /Expected double-quoted property name/],
    ['// note\n{"a": 1}\n', 1, /Unexpected token '\/'/],
    ['{\n  "a": 1,\n  "budgetUsd": NaN,\n  "c": "some longer text"\n}\n', 3, /Unexpected token 'N'/],
    ['a: 1\n', 1, /Unexpected token 'a'/],
    ['{\n  "a": [1, 2\n', 3, /Expected ',' or '\]' after array element/],
  ];
  for (const [text, line, got] of bad) {
    assert.throws(() => parseConfigText(text, 'p.json'), (e: unknown) => e instanceof ConfigError && e.message.startsWith(`p.json:${line}: expected valid JSON, got `) && got.test(e.message), text);
  }
  assert.deepEqual(parseConfigText('\uFEFF{"a": 1}\n', 'p.json').raw, { a: 1 });
  assert.deepEqual(parseConfigText('{"a": 1, "b": [2, 3,],}\n', 'p.yaml').raw, { a: 1, b: [2, 3] }, 'YAML flow style keeps its own rules');
  assert.throws(() => parseConfigText(aliasBomb(11), 'bomb.json'), (e: Error) => e.message.startsWith('bomb.json:1: expected valid JSON, got '));
});

test('a missing required key names the unknown key beside it (a misspelling such as cuont for count)', () => {
  const schema = z.strictObject({ pools: z.array(z.strictObject({ name: z.string(), count: z.number() })) });
  const doc = parseConfigText('pools:\n  - name: a\n    cuont: 3\n', 'p.yaml');
  assert.throws(
    () => validateConfig(doc, schema),
    (e: unknown) => e instanceof ConfigError && e.message === "p.yaml:2 pools[0].count: expected a value of type number (the field is missing; unknown key 'cuont' beside it: a misspelling?)",
  );
  // An unknown key elsewhere is not named with it.
  const far = parseConfigText('pools:\n  - name: a\nextra: 1\n', 'q.yaml');
  assert.throws(() => validateConfig(far, schema), (e: unknown) => e instanceof ConfigError && /count: expected a value of type number \(the field is missing\)$/.test(e.message));
});

test('a YAML !!set or !!omap value is named as such (it printed as got {})', () => {
  const schema = z.strictObject({ seed: z.number(), w: z.record(z.string(), z.number()).optional() });
  assert.throws(() => validateConfig(parseConfigText('seed: !!set { a, b }\n', 's.yaml'), schema), (e: unknown) => e instanceof ConfigError && e.message === 's.yaml:1 seed: expected a value of type number, got a YAML !!set of 2');
  assert.throws(() => validateConfig(parseConfigText('seed: 1\nw: !!omap [ {a: 1} ]\n', 'o.yaml'), schema), (e: unknown) => e instanceof ConfigError && /^o\.yaml:2 w: .*got a YAML !!omap or !!pairs of 1$/.test(e.message));
});
