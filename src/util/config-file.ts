import { isNode, LineCounter, parseDocument, visit } from 'yaml';
import type { z } from 'zod';
import { ConfigError, UserError } from './errors.ts';
import { readTextFile } from './read-file.ts';

/** A parsed YAML/JSON document and a way to find the line of any path in it. */
export interface ConfigDoc {
  source: string;
  raw: unknown;
  lineOf(path: readonly PropertyKey[]): number | undefined;
  /** Whether the file itself has a node at exactly this path. */
  has(path: readonly PropertyKey[]): boolean;
}

export function readConfigFile(path: string): ConfigDoc {
  let text: string;
  try {
    text = readTextFile(path);
  } catch (e) {
    throw new UserError(`${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseConfigText(text, path);
}

/** Parses YAML (JSON is YAML) keeping positions, so schema errors can name their line. */
export function parseConfigText(text: string, source: string): ConfigDoc {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const expected = /\.json$/i.test(source) ? 'valid JSON' : /\.ya?ml$/i.test(source) ? 'valid YAML' : 'valid YAML or JSON';
  // A .json file is held to JSON: YAML would also take a trailing comma, a comment or YAML text, which JSON tools
  // reading the same file refuse.
  if (expected === 'valid JSON') checkJson(text, source);
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    // The parser's whole sentence (as a `got` value it was cut at 60 characters, mid-word).
    throw new ConfigError({ source, line: lc.linePos(err.pos[0]).line, expected: `${expected} (the parser: ${err.message.split('\n')[0]})` });
  }
  const protoLine = protoKeyLine(doc, lc);
  if (protoLine !== undefined) {
    throw new ConfigError({ source, line: protoLine, expected: 'keys other than "__proto__" (as a key it would set the object\'s prototype, and the entry was dropped without a word)', got: '__proto__' });
  }
  const tag = unresolvedTag(doc);
  if (tag) throw new ConfigError({ source, line: lc.linePos(tag.pos).line, expected: `${expected} whose tags resolve (or plain values: 1, 1.5, "text")`, got: tag.what });
  let raw: unknown;
  try {
    // toJS expands aliases; past MAX_ALIAS_COUNT expansions it throws (a "billion laughs" file), as it does for
    // an alias whose anchor comes later. Both are the file's fault: one line, not a stack trace.
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    const msg = (e as Error).message;
    if (/Excessive alias count/i.test(msg)) {
      throw new ConfigError({ source, line: firstAliasLine(doc, lc), expected: `${expected} with at most ${MAX_ALIAS_COUNT} alias (*name) expansions (nested aliases multiply)`, got: 'too many alias expansions' });
    }
    throw new ConfigError({ source, line: firstAliasLine(doc, lc), expected: `${expected} (the parser: ${msg.split('\n')[0]})` });
  }
  return {
    source,
    raw: raw ?? {},
    lineOf(path) {
      for (let n = path.length; n > 0; n--) {
        const node = doc.getIn(path.slice(0, n) as (string | number)[], true);
        if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
      }
      return undefined;
    },
    has: (path) => path.length === 0 || doc.hasIn(path as (string | number)[]),
  };
}

/** Throws a ConfigError at the line of the first JSON syntax error in `text` (a leading BOM allowed). */
function checkJson(text: string, source: string): void {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') return; // an empty document: the caller's schema says what it should hold
  try {
    JSON.parse(body);
  } catch (e) {
    const { pos, what } = jsonErrorAt((e as Error).message, body);
    const line = pos !== undefined ? body.slice(0, pos).split('\n').length : undefined;
    throw new ConfigError({ source, ...(line !== undefined ? { line } : {}), expected: 'valid JSON', got: what });
  }
}

/**
 * Where V8's JSON.parse error points, and its message without the source excerpt. V8 says either "… at position N"
 * or "Unexpected token 'X', "excerpt" is not valid JSON", the excerpt cut to 10 characters either side of the
 * token ("…" marks a cut); the end of input is the last line.
 */
function jsonErrorAt(msg: string, body: string): { pos?: number; what: string } {
  const at = / in JSON at position (\d+)/.exec(msg);
  if (at) return { pos: Number(at[1]), what: msg.slice(0, at.index) };
  const tok = /^(Unexpected token '([\s\S])'), (\.\.\.)?"([\s\S]*?)"(\.\.\.)? is not valid JSON$/.exec(msg);
  if (tok) {
    const [, what, ch, cut, excerpt] = tok as unknown as [string, string, string, string | undefined, string];
    const from = cut ? body.indexOf(excerpt) : 0;
    const pos = from < 0 ? undefined : cut ? from + 10 : excerpt.indexOf(ch);
    return { ...(pos !== undefined && pos >= 0 ? { pos } : {}), what };
  }
  if (/Unexpected end of JSON input/.test(msg)) return { pos: body.trimEnd().length, what: 'the file ends inside a value' };
  return { what: msg.split('\n')[0]! };
}

/**
 * The most alias (`*name`) expansions a config file may make, counting each alias once per node it copies (the
 * yaml package's `maxAliasCount`, whose default this is): a scenario reusing a pool or a block a few times stays
 * far below it; a 700-byte file nesting aliases 9 deep ("billion laughs") would expand to 9^9 nodes.
 */
export const MAX_ALIAS_COUNT = 100;

/** The first mapping key `__proto__` in a document (a key node), or undefined. */
function protoKey(doc: ReturnType<typeof parseDocument>): { range?: [number, number, number] | null } | undefined {
  let found: { range?: [number, number, number] | null } | undefined;
  visit(doc, {
    Pair(_key, pair) {
      const k = pair.key;
      if (isNode(k) && (k as { value?: unknown }).value === '__proto__') {
        found = k;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** The line of the first mapping key `__proto__` in a document, or undefined. */
function protoKeyLine(doc: ReturnType<typeof parseDocument>, lc: LineCounter): number | undefined {
  const k = protoKey(doc);
  return k === undefined ? undefined : k.range ? lc.linePos(k.range[0]).line : 1;
}

/** The line of the first alias in a document, for an alias error (undefined when there is none). */
function firstAliasLine(doc: ReturnType<typeof parseDocument>, lc: LineCounter): number | undefined {
  let line: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.range) line = lc.linePos(node.range[0]).line;
      return visit.BREAK;
    },
  });
  return line;
}

/**
 * Validates `raw` with a strict schema; the first problem becomes one ConfigError naming the file, line,
 * dotted path, what was expected and what was found. `sourceFor` lets a caller attribute a path to
 * something other than the file (a `--set` flag).
 */
export function validateConfig<S extends z.ZodType>(
  doc: ConfigDoc,
  schema: S,
  sourceFor?: (path: readonly PropertyKey[]) => string | undefined,
): z.output<S> {
  const r = schema.safeParse(doc.raw);
  if (r.success) return r.data;
  throw issueError(r.error, doc.raw, { source: doc.source, lineOf: doc.lineOf, sourceFor });
}

/** Where a schema was applied, for {@link issueError}. */
export interface IssueContext {
  source?: string;
  lineOf?: (path: readonly PropertyKey[]) => number | undefined;
  /** Path of the validated value inside the document (its issues' paths are relative to it). */
  prefix?: readonly PropertyKey[];
  /** Attributes a path to something other than the file (a `--set` flag); no line then. */
  sourceFor?: (path: readonly PropertyKey[]) => string | undefined;
  /** Appended to what was expected. */
  hint?: string;
}

/** The first schema problem as one ConfigError: file, line, dotted path, what was expected and what was found. */
export function issueError(error: z.ZodError, value: unknown, ctx: IssueContext = {}): ConfigError {
  let iss = error.issues[0]!;
  let rel = iss.path as PropertyKey[];
  // A union none of whose options matched: where exactly one option got past the value's own type (its issue lies
  // deeper inside the value, e.g. a map with a non-number weight), that option is the one meant; report its issue
  // at its own path rather than "one of the allowed shapes". A union with a message of its own keeps it.
  while (iss.code === 'invalid_union' && (!iss.message || iss.message.startsWith('Invalid input'))) {
    const deeper = iss.errors.filter((e) => e.length > 0 && e[0]!.path.length > 0);
    if (deeper.length !== 1) break;
    const inner: z.core.$ZodIssue = deeper[0]![0]!;
    rel = [...rel, ...(inner.path as PropertyKey[])];
    iss = inner;
  }
  const p = [...(ctx.prefix ?? []), ...rel];
  const full = iss.code === 'unrecognized_keys' ? [...p, iss.keys[0]!] : p;
  const override = ctx.sourceFor?.(full);
  const got = iss.code === 'unrecognized_keys' ? undefined : iss.code === 'invalid_key' ? rel[rel.length - 1] : valueAt(value, rel);
  // A misspelt required key (`cuont:` for `count:`) gives both issues; the missing field comes first, so name the
  // unknown key beside it too.
  const parent = rel.slice(0, -1);
  const beside = error.issues.find((o) => o.code === 'unrecognized_keys' && o.path.length === parent.length && o.path.every((k, i) => k === parent[i]));
  const strays = beside?.code === 'unrecognized_keys' ? `; unknown key${beside.keys.length > 1 ? 's' : ''} ${beside.keys.map((k) => `'${k}'`).join(', ')} beside it: a misspelling?` : '';
  const missing = iss.code === 'invalid_type' && got === undefined ? ` (the field is missing${strays})` : '';
  return new ConfigError({
    source: override ?? ctx.source,
    line: override ? undefined : ctx.lineOf?.(full),
    path: formatPath(full),
    expected: (iss.code === 'invalid_type' && iss.expected === 'number' && typeof got === 'number' ? 'a finite number' : describeIssue(iss)) + missing + (ctx.hint ?? ''),
    got,
  });
}

export function formatPath(p: readonly PropertyKey[]): string {
  let s = '';
  for (const k of p) {
    const key = k === '' ? '""' : String(k); // an empty key (always refused) still shows as one
    s += typeof k === 'number' ? `[${k}]` : s ? `.${key}` : key;
  }
  return s;
}

export function describeIssue(iss: z.core.$ZodIssue): string {
  switch (iss.code) {
    case 'unrecognized_keys':
      return `no unknown key here (found ${iss.keys.map((k) => `'${k}'`).join(', ')})`;
    case 'invalid_value':
      return `one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union': {
      // zod reports a bad discriminator as "Invalid discriminator value. Expected 'a' | 'b'".
      const m = /Expected (.+)$/.exec(iss.message ?? '');
      if (m && iss.message.includes('discriminator')) return `one of ${m[1]!.replaceAll(' | ', ', ')}`;
      return iss.message && !iss.message.startsWith('Invalid input') ? iss.message : 'one of the allowed shapes';
    }
    case 'invalid_type':
      return iss.expected === 'undefined' ? 'no value' : `a value of type ${iss.expected}`;
    case 'invalid_key':
      // A record key that fails its own schema: say what the key must be, not zod's "Invalid key in record".
      return iss.issues.length > 0 ? `a key that is ${describeIssue(iss.issues[0]!)}` : 'a valid key';
    case 'too_small':
      if (iss.origin === 'string') return Number(iss.minimum) === 1 ? 'a non-empty string' : `a string of at least ${String(iss.minimum)} characters`;
      return `${iss.origin === 'array' ? 'at least' : iss.inclusive ? '≥' : '>'} ${String(iss.minimum)}${iss.origin === 'array' ? ' items' : ''}`;
    case 'too_big':
      if (iss.origin === 'string') return `a string of at most ${String(iss.maximum)} characters`;
      // A schema's own message on `.max(n, 'unit (why)')` follows the bound: "≤ 86400 s (one day; …)".
      return `${iss.origin === 'array' ? 'at most' : iss.inclusive ? '≤' : '<'} ${String(iss.maximum)}${iss.origin === 'array' ? ' items' : ''}${iss.message && !iss.message.startsWith('Too big') ? ` ${iss.message}` : ''}`;
    default:
      return iss.message;
  }
}

export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** Keys that would reach Object.prototype instead of the config. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * The VALUE of a `PATH=VALUE` override, read as a YAML scalar or flow collection; an empty VALUE is ''.
 * Throws (the yaml error) where VALUE is not one.
 */
export function overrideValue(text: string): unknown {
  if (text.trim() === '') return '';
  // The newline: at the very end of its input the yaml lexer takes a last quote as closing, so `'''` would
  // read as the string `'` and `"a\"` as `a"` instead of failing as unterminated.
  const doc = parseDocument(`${text}\n`, { prettyErrors: false });
  if (doc.errors.length > 0) throw doc.errors[0]!;
  if (protoKey(doc) !== undefined) throw new ProtoKeyError();
  const tag = unresolvedTag(doc);
  if (tag) throw new UnresolvedTagError(tag.what);
  return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
}

/** An `--set` value holding a `__proto__` key (`{__proto__: 1}`). */
class ProtoKeyError extends Error {}

/** An `--set` value whose YAML tag does not resolve (`!!float 1`, `!mine x`): the yaml package would read it as a string. */
class UnresolvedTagError extends Error {}

/**
 * The first tag the yaml package could not resolve, where and which: it only warns and reads the value as a
 * string, so `seed: !!float 1` became "1" and failed later as "expected a number, got "1"".
 */
function unresolvedTag(doc: ReturnType<typeof parseDocument>): { pos: number; what: string } | undefined {
  const w = doc.warnings.find((x) => x.code === 'TAG_RESOLVE_FAILED');
  if (!w) return undefined;
  const what = w.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').replace('tag:yaml.org,2002:', '!!');
  return { pos: w.pos[0], what };
}

/**
 * Splits `PATH=VALUE` at the first '=' outside double quotes, and PATH at the dots outside them: a quoted segment
 * is one key, dots and all (`scaling.options.thetaTps."llama3.1-8b"=1000`), and never a list index.
 */
function splitSet(s: string): { keys: string[]; quoted: boolean[]; value: string } | undefined {
  const keys: string[] = [];
  const quoted: boolean[] = [];
  let cur = '';
  let q = false;
  let wasQuoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"') {
      q = !q;
      wasQuoted = true;
    } else if (!q && c === '.') {
      keys.push(cur);
      quoted.push(wasQuoted);
      cur = '';
      wasQuoted = false;
    } else if (!q && c === '=') {
      if (i === 0) return undefined;
      keys.push(cur);
      quoted.push(wasQuoted);
      return { keys, quoted, value: s.slice(i + 1) };
    } else cur += c;
  }
  return undefined;
}

/**
 * Applies `PATH=VALUE` overrides to a raw config (before validation). PATH is dotted; numeric segments index
 * arrays (`fleet.pools.0.count=8`); a double-quoted segment is one key with its dots (`thetaTps."llama3.1-8b"`).
 * VALUE is read as a YAML scalar or flow collection (`8`, `true`, `jsq`, `[1, 2]`, `{kind: poisson, ratePerS: 5}`).
 * Returns the overridden paths.
 */
export function applyOverrides(raw: unknown, sets: readonly string[]): PropertyKey[][] {
  const paths: PropertyKey[][] = [];
  for (const s of sets) {
    const split = splitSet(s);
    if (!split) throw new UserError(`--set ${s}: expected PATH=VALUE (e.g. routing.policy=jsq; quote a key with dots: thetaTps."llama3.1-8b"=1000)`);
    const { keys, quoted } = split;
    let value: unknown;
    try {
      value = overrideValue(split.value);
    } catch (e) {
      if (e instanceof ProtoKeyError) throw new UserError(`--set ${s}: '__proto__' is not a config key`);
      if (e instanceof UnresolvedTagError) throw new UserError(`--set ${s}: the value's tag does not resolve (${e.message}); write the plain value (1, 1.5, "text")`);
      throw new UserError(`--set ${s}: the value is not a valid YAML scalar or flow collection`);
    }
    const path: PropertyKey[] = keys.map((k, i) => (!quoted[i] && /^\d+$/.test(k) ? Number(k) : k));
    if (path.some((k) => k === '')) throw new UserError(`--set ${s}: empty segment in the path`);
    const forbidden = keys.find((k) => FORBIDDEN_KEYS.has(k));
    if (forbidden !== undefined) throw new UserError(`--set ${s}: '${forbidden}' is not a config key`);
    const odd = keys.find((k, i) => !quoted[i] && (/[[\]]/.test(k) || /^-\d+$/.test(k)));
    if (odd !== undefined) throw new UserError(`--set ${s}: '${odd}' is not a path segment; write list indexes as dotted numbers from 0 (fleet.pools.0.count=8)`);
    let node = raw as Record<PropertyKey, unknown>;
    for (let i = 0; i < path.length; i++) {
      const k = path[i]!;
      // A list index may address an element or append one (index = length), never leave a hole.
      if (Array.isArray(node) && (typeof k !== 'number' || k > node.length)) {
        const what = typeof k === 'number' ? `index ${k}, but the list has ${node.length} item${node.length === 1 ? '' : 's'} (use 0–${node.length})` : `'${String(k)}', but it is a list (use a number)`;
        throw new UserError(`--set ${s}: '${formatPath(path.slice(0, i))}' got ${what}`);
      }
      if (i === path.length - 1) break;
      let next = Object.hasOwn(node, k) ? node[k] : undefined; // not an inherited `toString`
      if (next === undefined || next === null) {
        next = typeof path[i + 1] === 'number' ? [] : {};
        node[k] = next;
      }
      if (typeof next !== 'object') {
        throw new UserError(`--set ${s}: '${formatPath(path.slice(0, i + 1))}' is a ${typeof next}, not an object or list`);
      }
      node = next as Record<PropertyKey, unknown>;
    }
    node[path[path.length - 1]!] = value;
    paths.push(path);
  }
  return paths;
}
