import type { TraceRequest } from '../types.ts';
import { LineReader, type LineReaderOptions } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { MAX_TRACE_ARRIVAL_S, arrivalTooLate, badValue, emptyTrace, headerLine, headerColumns, isBlank, numberCell, outOfOrder, headerNames, tokenCell, rowCells } from '../fields.ts';
import { hashIds, jsonTokens, parseObject } from './length-jsonl.ts';
import type { TraceStats } from './reader.ts';

/**
 * The canonical formats, CSV (header naming the columns, any order) and JSONL (one object per line):
 * `arrival_s`, `input_tokens`, `output_tokens` and optional `model`, `tier`, `region`, `app`, `deadline_s`
 * (camelCase spellings `arrivalS`, `inputTokens`, `outputTokens`, `deadlineS` are accepted too). Times are
 * taken as given (not re-based): arrival_s ≥ 0, non-decreasing; deadline_s is absolute on the same clock and
 * ≥ arrival_s. Unknown columns / keys are an error naming them; an empty label cell means "no label".
 * JSONL only: `hash_ids` (the prompt's block hashes, as Mooncake writes them, for `engine.prefixCache`) with
 * `hash_block_tokens` (tokens a block) beside it.
 */
const ALIASES: Record<string, CanonicalField> = {
  arrival_s: 'arrivalS',
  arrivalS: 'arrivalS',
  input_tokens: 'inputTokens',
  inputTokens: 'inputTokens',
  output_tokens: 'outputTokens',
  outputTokens: 'outputTokens',
  deadline_s: 'deadlineS',
  deadlineS: 'deadlineS',
  model: 'model',
  tier: 'tier',
  region: 'region',
  app: 'app',
};
type CanonicalField = 'arrivalS' | 'inputTokens' | 'outputTokens' | 'deadlineS' | 'model' | 'tier' | 'region' | 'app';
const LABELS = ['model', 'tier', 'region', 'app'] as const;
/** JSONL keys beyond the CSV columns: block hashes for the prefix cache. */
const HASH_KEYS = ['hash_ids', 'hash_block_tokens'];
/** Tokens a hash block may span (a million: past any context). */
const MAX_HASH_BLOCK_TOKENS = 1_000_000;
const ARRIVAL_EXPECTED = 'a number of seconds ≥ 0';

export function* readCanonicalCsv(path: string, opts: LineReaderOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new LineReader(path, opts);
  try {
    const header = headerLine(lr);
    if (header === undefined) throw emptyTrace(path);
    const names = headerNames(header);
    headerColumns(names, path, [], Object.keys(ALIASES), false, lr.lineNo);
    // Map each canonical field to its column (one spelling only) and check the required ones.
    const col: Partial<Record<CanonicalField, number>> = {};
    const colName: Partial<Record<CanonicalField, string>> = {};
    names.forEach((n, i) => {
      const f = ALIASES[n]!;
      if (col[f] !== undefined) {
        throw new ConfigError({ source: path, line: lr.lineNo, path: n, expected: `one column for ${f} (got ${colName[f]} too)`, got: header });
      }
      col[f] = i;
      colName[f] = n;
    });
    for (const [f, snake] of [['arrivalS', 'arrival_s'], ['inputTokens', 'input_tokens'], ['outputTokens', 'output_tokens']] as const) {
      if (col[f] === undefined) {
        throw new ConfigError({ source: path, line: lr.lineNo, path: snake, expected: `a header with a column ${snake}`, got: header });
      }
    }
    const iT = col.arrivalS!;
    const iIn = col.inputTokens!;
    const iOut = col.outputTokens!;
    const iD = col.deadlineS;
    const labels = LABELS.filter((l) => col[l] !== undefined).map((l) => [l, col[l]!] as const);
    const width = names.length;
    let prev = -Infinity;
    let id = 0;
    for (let line = lr.next(); line !== undefined; line = lr.next()) {
      if (isBlank(line)) continue;
      const cells = rowCells(line, width, path, lr.lineNo);
      const n = lr.lineNo;
      const t = numberCell(cells[iT]!, path, n, colName.arrivalS!, ARRIVAL_EXPECTED);
      if (t < 0) throw badValue(path, n, colName.arrivalS!, ARRIVAL_EXPECTED, cells[iT]!);
      if (t > MAX_TRACE_ARRIVAL_S) throw arrivalTooLate(path, n, colName.arrivalS!, cells[iT]!.trim(), 'zero');
      if (t < prev) throw outOfOrder(path, n, colName.arrivalS!, t);
      prev = t;
      const req: TraceRequest = {
        id,
        arrivalS: t,
        inputTokens: tokenCell(cells[iIn]!, path, n, colName.inputTokens!),
        outputTokens: tokenCell(cells[iOut]!, path, n, colName.outputTokens!),
      };
      for (const [l, i] of labels) {
        const v = cells[i]!.trim();
        if (v !== '') req[l] = v;
      }
      if (iD !== undefined && cells[iD]!.trim() !== '') {
        const expected = `an absolute deadline in seconds ≥ ${colName.arrivalS} (${t})`;
        const d = numberCell(cells[iD]!, path, n, colName.deadlineS!, expected);
        if (d < t) throw badValue(path, n, colName.deadlineS!, expected, cells[iD]!);
        req.deadlineS = d;
      }
      id++;
      stats.rows++;
      yield req;
    }
    if (id === 0) throw emptyTrace(path);
  } finally {
    lr.close();
  }
}

export function* readCanonicalJsonl(path: string, opts: LineReaderOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new LineReader(path, opts);
  try {
    let prev = -Infinity;
    let id = 0;
    for (let line = lr.next(); line !== undefined; line = lr.next()) {
      if (isBlank(line)) continue;
      const n = lr.lineNo;
      const o = parseObject(line, path, n);
      const req: TraceRequest = { id, arrivalS: NaN, inputTokens: 0, outputTokens: 0 };
      const seen: Partial<Record<CanonicalField, string>> = {};
      for (const key of Object.keys(o)) {
        if (HASH_KEYS.includes(key)) continue;
        const f = Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
        if (f === undefined) {
          throw new ConfigError({ source: path, line: n, path: key, expected: `known keys (${[...Object.keys(ALIASES), ...HASH_KEYS].join(', ')})`, got: key });
        }
        if (seen[f] !== undefined) {
          throw new ConfigError({ source: path, line: n, path: key, expected: `one key for ${f} (got ${seen[f]} too)`, got: line });
        }
        seen[f] = key;
        const v = o[key];
        switch (f) {
          case 'arrivalS':
            if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
              throw new ConfigError({ source: path, line: n, path: key, expected: ARRIVAL_EXPECTED, got: v });
            }
            if (v > MAX_TRACE_ARRIVAL_S) throw arrivalTooLate(path, n, key, v, 'zero');
            req.arrivalS = v;
            break;
          case 'inputTokens':
          case 'outputTokens':
            req[f] = jsonTokens(o, key, path, n);
            break;
          case 'deadlineS':
            if (v === null) break;
            if (typeof v !== 'number' || !Number.isFinite(v)) {
              throw new ConfigError({ source: path, line: n, path: key, expected: 'an absolute deadline in seconds', got: v });
            }
            req.deadlineS = v;
            break;
          default:
            if (v === null) break;
            if (typeof v !== 'string') throw new ConfigError({ source: path, line: n, path: key, expected: 'a string', got: v });
            if (v !== '') req[f] = v;
        }
      }
      for (const [f, snake] of [['arrivalS', 'arrival_s'], ['inputTokens', 'input_tokens'], ['outputTokens', 'output_tokens']] as const) {
        if (seen[f] === undefined) throw new ConfigError({ source: path, line: n, path: snake, expected: `a key ${snake}`, got: line });
      }
      if (req.deadlineS !== undefined && req.deadlineS < req.arrivalS) {
        throw new ConfigError({ source: path, line: n, path: seen.deadlineS!, expected: `an absolute deadline in seconds ≥ ${seen.arrivalS} (${req.arrivalS})`, got: req.deadlineS });
      }
      if (o.hash_ids !== undefined || o.hash_block_tokens !== undefined) readHashes(o, req, path, n);
      if (req.arrivalS < prev) throw outOfOrder(path, n, seen.arrivalS!, req.arrivalS);
      prev = req.arrivalS;
      id++;
      stats.rows++;
      yield req;
    }
    if (id === 0) throw emptyTrace(path);
  } finally {
    lr.close();
  }
}

/** `hash_ids` with `hash_block_tokens` onto `req` (an empty list gives no hashes); either alone is an error. */
function readHashes(o: Record<string, unknown>, req: TraceRequest, path: string, n: number): void {
  const bt = o.hash_block_tokens;
  if (o.hash_ids === undefined) throw new ConfigError({ source: path, line: n, path: 'hash_block_tokens', expected: 'hash_ids beside it (hash_block_tokens says how many tokens each of them covers)', got: bt });
  const hashes = hashIds(o.hash_ids, path, n);
  if (typeof bt !== 'number' || !Number.isInteger(bt) || bt < 1 || bt > MAX_HASH_BLOCK_TOKENS) {
    throw new ConfigError({ source: path, line: n, path: 'hash_block_tokens', expected: `an integer from 1 to ${MAX_HASH_BLOCK_TOKENS} beside hash_ids (tokens a block)`, got: bt });
  }
  if (hashes.length > 0) {
    req.prefixHashes = hashes;
    req.prefixBlockTokens = bt;
  }
}
