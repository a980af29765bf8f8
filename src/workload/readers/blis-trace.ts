import type { TraceRequest } from '../types.ts';
import { LineReader } from '../line-reader.ts';
import { ConfigError } from '../../util/errors.ts';
import { MAX_TRACE_TOKENS, TOKENS_EXPECTED, badValue, emptyTrace, headerColumns, headerLine, headerNames, isBlank, rowCells, tokenCellOrZero } from '../fields.ts';
import type { TraceOptions, TraceReader, TraceStats } from './reader.ts';

/**
 * BLIS TraceV2 (inference-sim/inference-sim, "BLIS"): the data CSV that `blis observe` writes from a real
 * server (and `blis run` / `blis replay --trace-output` from a simulation).
 *
 * Spec, read from BLIS's Go source (no prose spec exists):
 * - inference-sim/inference-sim sim/workload/tracev2.go @ 32947d276d4a958505ed31f76488b7f42a7125d2 (the first,
 *   22-column schema) and, for today's schema, the same file in its forks kalantar/inference-sim
 *   @ cc8846cc41e71488cc32004778dde83dc747a2f7 and namasl/inference-sim @ a2cf3e9fdf8adff431bdf2a2c4597a2bd32c322c:
 *   `TraceRecord`, `traceV2Columns`, `ExportTraceV2`, `LoadTraceV2`, `parseTraceRecord`.
 * - inference-sim/inference-sim cmd/observe.go @ 157882a641fbb1b4fa893674d2a83b8575bb364c (`Recorder.RecordRequest`,
 *   how status and tokens are filled), cmd/observe_cmd.go @ 020b7c85d5ad8176b8db9fdf67a81ef8a0de5157 (the dispatch
 *   loop, `--trace-header` / `--trace-data`), sim/workload/replay.go @ 195cdffa95e746906b37722436119ccaab7e6258
 *   (`LoadTraceV2Requests`, `effectiveInputTokenCount`: how BLIS itself replays a row), and
 *   docs/guide/observe-replay-calibrate.md @ 50afd81cad92cdfaee32492cd08f7ff5927a99ee.
 *
 * What that source says, and what this reader does with it:
 * - Two files: `ExportTraceV2(header, records, headerPath, dataPath)` writes the YAML header (`trace_version`,
 *   `time_unit: us`, `mode: real|generated|replayed`, `warm_up_requests`, `server`, `network`, …) to one file and
 *   the CSV to another (`blis observe --trace-header trace.yaml --trace-data trace.csv`). Only the CSV is read
 *   here; the YAML is not needed (its warm-up rows are already left out of the CSV). Passing the YAML by mistake
 *   is an error that says so.
 * - Columns (Go encoding/csv, RFC 4180 quoting): request_id, client_id, tenant_id, slo_class, session_id,
 *   round_index, prefix_group, prefix_length, streaming, input_tokens, output_tokens, text_tokens, image_tokens,
 *   audio_tokens, video_tokens, reason_ratio, model, deadline_us, server_input_tokens, arrival_time_us,
 *   send_time_us, first_chunk_time_us, last_chunk_time_us, num_chunks, status, error_message, finish_reason;
 *   versions add `vllm_priority` (or `priority` / `gie_priority`) after slo_class, `slo_target_us` after
 *   deadline_us, and trailing `x_request_id`, `upstream_request_id`, `adapter`. BLIS's own loader is positional;
 *   this one finds columns by name (request_id, arrival_time_us, input_tokens, output_tokens required) and
 *   ignores the rest.
 * - Times are integer microseconds. `arrival_time_us` is the request's arrival on the workload's clock (µs since
 *   the observation started); send/first/last chunk times are wall-clock Unix µs and are not used. `deadline_us`
 *   is an absolute time on arrival_time_us's clock, 0 = none (BLIS: a client timeout; it rejects a deadline
 *   before the arrival).
 * - Arrival: `arrival_time_us`, re-based so the earliest row is 0 (like the other replay formats). BLIS's
 *   replay injects at `send_time_us` when it is > 0 (the dispatch after a concurrency-slot wait); this reader
 *   keeps the offered arrival.
 * - Row order: `blis observe` appends a row when its request COMPLETES, so its CSV is in completion order, not
 *   arrival order. Rows are therefore put back in arrival order (ties by request_id) through a buffer of
 *   `BLIS_REORDER_ROWS` rows: a row may come up to that many rows after requests that arrived later; one that
 *   comes later still (its arrival is before a request already handed on) is an error naming its line.
 * - Prompt: as BLIS's replay counts it (`effectiveInputTokenCount`): `server_input_tokens` (the server's
 *   prompt_tokens, chat template included) when > 0 and the row has no prefix_group; else `input_tokens`, which
 *   BLIS writes suffix-only, plus `prefix_length` when prefix_group is set.
 * - Output: `output_tokens` (the server's completion_tokens in an observed trace).
 * - Labels: `model` → model, `slo_class` → tier as written (critical, standard, sheddable, batch, background),
 *   `client_id` → app (the workload-spec client that sent it; `tenant_id`, the fairness id, is not used). Empty
 *   cells give no label.
 * - Skipped (counted in `stats.skipped`, kept in arrival order for the time origin and SkipTally): rows with
 *   `status` `error` or `timeout` (BLIS's failure values; `ok`, `incomplete` — a simulated request still
 *   running at the horizon — and an empty cell are kept), and rows with `output_tokens` 0. Any other status
 *   is an error.
 * - `error_message` may hold the raw body of an HTTP error, line breaks included, inside quotes: such a record
 *   spans lines here (the only reader that allows it), and the row is named by its first line.
 */
export const BLIS_SKIP_ERROR = 'failed (status error)';
export const BLIS_SKIP_TIMEOUT = 'failed (status timeout)';
export const BLIS_SKIP_NO_OUTPUT = 'output_tokens 0';

/** Rows a row may lag behind in the file (completion order) and still be put back in arrival order. */
export const BLIS_REORDER_ROWS = 65_536;

/** Lines one quoted record may span (an HTTP error page in error_message); past it the quote is taken as unterminated. */
const MAX_RECORD_LINES = 10_000;

const STATUS_EXPECTED = 'ok, error, timeout, incomplete or an empty cell';
const MICROS_EXPECTED = 'an integer number of microseconds ≥ 0';
const ZERO_OK = 'an integer ≥ 0 and ≤ 1e9';

/** One parsed row waiting for its turn in arrival order. */
interface Row {
  /** arrival_time_us, deadline_us (0 = none). */
  t: number;
  d: number;
  rid: number;
  line: number;
  skip?: string;
  inputTokens: number;
  outputTokens: number;
  model?: string;
  tier?: string;
  app?: string;
}

function before(a: Row, b: Row): boolean {
  return a.t !== b.t ? a.t < b.t : a.rid !== b.rid ? a.rid < b.rid : a.line < b.line;
}

/** A binary min-heap of rows by (arrival, request_id, line). */
class RowHeap {
  private readonly a: Row[] = [];
  get size(): number {
    return this.a.length;
  }
  push(r: Row): void {
    const a = this.a;
    let i = a.push(r) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(r, a[p]!)) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = r;
  }
  pop(): Row {
    const a = this.a;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && before(a[l + 1]!, a[l]!) ? l + 1 : l;
        if (!before(a[c]!, last)) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/** A plain non-negative integer cell (digits only, trimmed) up to 2^53 − 1, or -1. */
function plainUint(raw: string): number {
  const t = raw.trim();
  if (t.length === 0 || t.length > 16) return -1;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  const v = Number(t);
  return v <= Number.MAX_SAFE_INTEGER ? v : -1;
}

function uintCell(raw: string, source: string, line: number, column: string, expected: string): number {
  const v = plainUint(raw);
  if (v < 0) throw badValue(source, line, column, expected, raw);
  return v;
}

/** True when `s` holds an odd number of '"': a quoted cell is still open at its end. */
function openQuote(s: string): boolean {
  let n = 0;
  for (let i = s.indexOf('"'); i >= 0; i = s.indexOf('"', i + 1)) n++;
  return (n & 1) === 1;
}

/** The reader, with a reorder buffer of `window` rows (tests make it small). */
export function blisTraceReader(window: number): TraceReader {
  return function* readBlis(path: string, opts: TraceOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
    const lr = new LineReader(path, opts);
    try {
      const header = headerLine(lr);
      if (header === undefined) throw emptyTrace(path);
      const names = headerNames(header);
      if (names.length === 1 && /^\s*[A-Za-z_][\w-]*\s*:(\s|$)/.test(header)) {
        throw new ConfigError({
          source: path,
          line: lr.lineNo,
          path: 'header',
          expected: "BLIS's TraceV2 data CSV (blis observe --trace-data) whose first line names its columns; this looks like the YAML header file (--trace-header)",
          got: header,
        });
      }
      const optional = ['model', 'slo_class', 'client_id', 'deadline_us', 'status', 'server_input_tokens', 'prefix_group', 'prefix_length'];
      const cols = headerColumns(names, path, ['request_id', 'arrival_time_us', 'input_tokens', 'output_tokens'], optional, true, lr.lineNo);
      const c = (name: string) => cols.get(name) ?? -1;
      const iId = c('request_id');
      const iT = c('arrival_time_us');
      const iIn = c('input_tokens');
      const iOut = c('output_tokens');
      const iModel = c('model');
      const iTier = c('slo_class');
      const iApp = c('client_id');
      const iD = c('deadline_us');
      const iStatus = c('status');
      const iServer = c('server_input_tokens');
      const iGroup = c('prefix_group');
      const iPrefix = c('prefix_length');
      const width = names.length;
      const heap = new RowHeap();
      let t0 = NaN;
      let last = -1;
      let lastLine = 0;
      let id = 0;

      /** Hands on the earliest buffered row: a request, or a skipped row told to `onSkip`. */
      const take = (r: Row): TraceRequest | undefined => {
        if (t0 !== t0) t0 = r.t;
        last = r.t;
        lastLine = r.line;
        const arrivalS = (r.t - t0) / 1e6;
        if (r.skip !== undefined) {
          opts.onSkip?.(r.skip, arrivalS);
          return undefined;
        }
        stats.rows++;
        const req: TraceRequest = { id: id++, arrivalS, inputTokens: r.inputTokens, outputTokens: r.outputTokens };
        if (r.model !== undefined) req.model = r.model;
        if (r.tier !== undefined) req.tier = r.tier;
        if (r.app !== undefined) req.app = r.app;
        if (r.d > 0) req.deadlineS = (r.d - t0) / 1e6;
        return req;
      };

      for (let text = lr.next(); text !== undefined; text = lr.next()) {
        if (isBlank(text)) continue;
        const n = lr.lineNo;
        // A quoted error_message may hold line breaks (Go's csv writer keeps them): join the record's lines.
        while (openQuote(text) && lr.lineNo - n < MAX_RECORD_LINES) {
          const more = lr.next();
          if (more === undefined) break;
          text += '\n' + more;
        }
        const cells = rowCells(text, width, path, n);
        const cell = (i: number) => (i >= 0 ? cells[i]! : '');
        const t = uintCell(cells[iT]!, path, n, 'arrival_time_us', MICROS_EXPECTED);
        if (t < last) {
          throw new ConfigError({
            source: path,
            line: n,
            path: 'arrival_time_us',
            expected: `an arrival not before ${last} µs, that of line ${lastLine}, already handed on (blis observe writes rows as requests complete; this reader puts back in arrival order a row at most ${window} rows late; sort the CSV by arrival_time_us)`,
            got: t,
          });
        }
        const rid = uintCell(cells[iId]!, path, n, 'request_id', 'an integer ≥ 0');
        const dRaw = cell(iD).trim();
        const d = dRaw === '' ? 0 : uintCell(dRaw, path, n, 'deadline_us', `${MICROS_EXPECTED} (0 = none)`);
        if (d > 0 && d < t) throw badValue(path, n, 'deadline_us', `an absolute deadline ≥ arrival_time_us (${t}), or 0 for none`, dRaw);
        const status = cell(iStatus).trim();
        if (status !== '' && status !== 'ok' && status !== 'error' && status !== 'timeout' && status !== 'incomplete') {
          throw badValue(path, n, 'status', STATUS_EXPECTED, cell(iStatus));
        }
        const input = tokenCellOrZero(cells[iIn]!, path, n, 'input_tokens', ZERO_OK);
        const output = tokenCellOrZero(cells[iOut]!, path, n, 'output_tokens', `${ZERO_OK} (0 = no output, skipped)`);
        const server = iServer >= 0 ? tokenCellOrZero(cells[iServer]!, path, n, 'server_input_tokens', `${ZERO_OK} (0 = not recorded)`) : 0;
        const prefix = iPrefix >= 0 ? tokenCellOrZero(cells[iPrefix]!, path, n, 'prefix_length', ZERO_OK) : 0;
        const group = cell(iGroup).trim();
        const row: Row = { t, d, rid, line: n, inputTokens: 0, outputTokens: output };
        const skip = status === 'error' ? BLIS_SKIP_ERROR : status === 'timeout' ? BLIS_SKIP_TIMEOUT : output === 0 ? BLIS_SKIP_NO_OUTPUT : undefined;
        if (skip !== undefined) {
          row.skip = skip;
          stats.skipped[skip] = (stats.skipped[skip] ?? 0) + 1;
        } else {
          const prompt = server > 0 && group === '' ? server : input + (group !== '' ? prefix : 0);
          if (prompt < 1 || prompt > MAX_TRACE_TOKENS) {
            const expected = `${TOKENS_EXPECTED} in all: input_tokens${group !== '' ? ' + prefix_length (the row has a prefix_group)' : ' (server_input_tokens is 0)'}`;
            throw badValue(path, n, 'input_tokens', expected, cells[iIn]!);
          }
          row.inputTokens = prompt;
          for (const [key, i] of [['model', iModel], ['tier', iTier], ['app', iApp]] as const) {
            const v = cell(i).trim();
            if (v !== '') row[key] = v;
          }
        }
        heap.push(row);
        if (heap.size > window) {
          const req = take(heap.pop());
          if (req !== undefined) yield req;
        }
      }
      while (heap.size > 0) {
        const req = take(heap.pop());
        if (req !== undefined) yield req;
      }
      if (id === 0) throw emptyTrace(path, stats.skipped);
    } finally {
      lr.close();
    }
  };
}

export const readBlisTrace = blisTraceReader(BLIS_REORDER_ROWS);
