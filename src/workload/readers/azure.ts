import { ConfigError } from '../../util/errors.ts';
import type { TraceRequest } from '../types.ts';
import { ByteLineReader } from '../line-reader.ts';
import { utcDateMs } from '../../util/civil-date.ts';
import { MAX_TRACE_ARRIVAL_S, arrivalTooLate, MAX_TRACE_TOKENS, SKIPPED_INPUT_EXPECTED, badValue, emptyTrace, headerNames, isBlank, outOfOrder, rowCells, splitCsvLine, tokenCell, tokenCellOrZero } from '../fields.ts';
import { skipRow, type TraceOptions, type TraceStats } from './reader.ts';

/**
 * Azure LLM inference traces, 2023 (Splitwise) and 2024 (DynamoLLM, week-long):
 * `TIMESTAMP,ContextTokens,GeneratedTokens`. 2023 stamps are `2023-11-16 18:15:46.6805900` (7 fractional
 * digits, no zone); 2024 stamps carry `+00:00` and sometimes no fraction (`2024-05-10 00:00:01+00:00`).
 * The 2025 multimodal trace (ModServe) adds a column: `TIMESTAMP,NumImages,ContextTokens,GeneratedTokens`,
 * stamps like `2024-10-15T12:00:00.269Z`. NumImages is checked (an integer ≥ 0) but not modelled: the
 * performance model is text-only, so a request's prompt is ContextTokens as given.
 *
 * Timestamps are parsed exactly: whole seconds as integers (utcDateMs for the date), the fraction as an
 * integer count of 100 ns ticks, and arrivalS = (ticks − first ticks) / 1e7, one rounding per row, so no
 * float drift builds up over a week. Integer ticks stay exact up to 2^53 / 1e7 s ≈ 28 years of span.
 *
 * A row with `GeneratedTokens` 0 produced no output (the simulator needs ≥ 1 token), so it is SKIPPED and
 * counted in `stats.skipped['GeneratedTokens 0']`, as BurstGPT's failures are, whatever its ContextTokens (0
 * included); it still counts for arrival order and time zero (the first row of the file). Any other bad value
 * (ContextTokens 0 with GeneratedTokens ≥ 1 included) is a ConfigError.
 */
export const AZURE_SKIP_NO_OUTPUT = 'GeneratedTokens 0';

export const AZURE_HEADER = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;
export const AZURE_MULTIMODAL_HEADER = ['TIMESTAMP', 'NumImages', 'ContextTokens', 'GeneratedTokens'] as const;
const HEADERS: readonly (readonly string[])[] = [AZURE_HEADER, AZURE_MULTIMODAL_HEADER];
const TIMESTAMP_EXPECTED = 'a timestamp YYYY-MM-DD HH:MM:SS[.fffffff][+HH:MM|Z]';
const TICKS_PER_S = 1e7;
const POW10 = [1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7];

/** Parses Azure timestamps into 100 ns ticks since the whole second of the first stamp it saw. */
export class AzureClock {
  private dayKey = -1;
  private dayS = 0;
  private baseS = NaN;

  /** Ticks for the bytes b[at, end), or NaN when they are not a valid timestamp. */
  ticks(b: Uint8Array, at: number, end: number): number {
    if (end - at < 19) return NaN;
    const c = d2(b, at);
    const yy = d2(b, at + 2);
    // Each pair is checked on its own: c * 100 + yy is positive even when yy is −1 (not two digits).
    const y = (c | yy) < 0 ? -1 : c * 100 + yy;
    const mo = d2(b, at + 5);
    const d = d2(b, at + 8);
    const h = d2(b, at + 11);
    const mi = d2(b, at + 14);
    const se = d2(b, at + 17);
    const sep = b[at + 10];
    if (
      (y | mo | d | h | mi | se) < 0 ||
      b[at + 4] !== 45 ||
      b[at + 7] !== 45 ||
      (sep !== 32 && sep !== 84) ||
      b[at + 13] !== 58 ||
      b[at + 16] !== 58 ||
      h > 23 ||
      mi > 59 ||
      se > 59
    ) {
      return NaN;
    }
    let i = at + 19;
    let frac = 0;
    if (i < end && b[i] === 46) {
      i++;
      const from = i;
      while (i < end) {
        const c = b[i]! - 48;
        if (c < 0 || c > 9) break;
        frac = frac * 10 + c;
        i++;
      }
      const digits = i - from;
      if (digits === 0 || digits > 7) return NaN;
      frac *= POW10[7 - digits]!;
    }
    let offsetS = 0;
    if (i < end) {
      const c = b[i];
      if (c === 90 && i + 1 === end) {
        // 'Z': UTC
      } else if ((c === 43 || c === 45) && end - i === 6 && b[i + 3] === 58) {
        const oh = d2(b, i + 1);
        const om = d2(b, i + 4);
        if ((oh | om) < 0 || oh > 23 || om > 59) return NaN;
        offsetS = (c === 43 ? 1 : -1) * (oh * 3600 + om * 60);
      } else {
        return NaN;
      }
    }
    const key = y * 10000 + mo * 100 + d;
    if (key !== this.dayKey) {
      // Not Date.UTC: it reads years 0..99 as 1900..1999 (utcDateMs takes every year as written).
      const ms = utcDateMs(y, mo, d);
      if (Number.isNaN(ms)) return NaN;
      this.dayKey = key;
      this.dayS = ms / 1000;
    }
    // Local wall time minus its offset is UTC: 00:00+02:00 is 22:00Z of the day before.
    const secs = this.dayS + h * 3600 + mi * 60 + se - offsetS;
    if (this.baseS !== this.baseS) this.baseS = secs;
    return (secs - this.baseS) * TICKS_PER_S + frac;
  }
}

/** Two decimal digits at b[i], or a negative number when either is not a digit. */
function d2(b: Uint8Array, i: number): number {
  const x = b[i]! - 48;
  const y = b[i + 1]! - 48;
  if (x < 0 || x > 9 || y < 0 || y > 9) return -1;
  return x * 10 + y;
}

/** b[start, end) as a token count, or -1: the byte twin of `parseTokenCount` (same rules) for the hot path. */
function tokens(b: Uint8Array, start: number, end: number): number {
  const len = end - start;
  if (len <= 0 || len > 15) return -1;
  let v = 0;
  for (let i = start; i < end; i++) {
    const c = b[i]! - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v <= MAX_TRACE_TOKENS ? v : -1;
}

export function* readAzure(path: string, opts: TraceOptions, stats: TraceStats): Generator<TraceRequest, void, undefined> {
  const lr = new ByteLineReader(path, opts);
  try {
    let more = lr.next();
    while (more && isBlank(lr.text())) more = lr.next();
    if (!more) throw emptyTrace(path);
    const header = lr.text();
    const names = headerNames(header);
    const columns = HEADERS.find((h) => h.length === names.length && h.every((n, i) => n === names[i]));
    if (columns === undefined) {
      throw new ConfigError({ source: path, line: lr.lineNo, path: 'header', expected: HEADERS.map((h) => h.join(',')).join(' or '), got: header });
    }
    const images = columns === AZURE_MULTIMODAL_HEADER;
    const clock = new AzureClock();
    let prevTicks = -Infinity;
    let firstTicks = 0;
    let id = 0;
    while (lr.next()) {
      const b = lr.buf;
      const end = lr.end;
      let c0 = lr.start;
      while (c0 < end && b[c0] !== 44) c0++;
      // c1: the comma before ContextTokens (after NumImages in the multimodal layout)
      let c1 = c0;
      if (images) for (c1++; c1 < end && b[c1] !== 44; ) c1++;
      let c2 = c1 + 1;
      while (c2 < end && b[c2] !== 44) c2++;
      let ticks = NaN;
      let inputTokens = -1;
      let outputTokens = -1;
      if (c2 < end && (!images || tokens(b, c0 + 1, c1) >= 0)) {
        ticks = clock.ticks(b, lr.start, c0);
        inputTokens = tokens(b, c1 + 1, c2);
        outputTokens = tokens(b, c2 + 1, end);
      }
      if (ticks !== ticks || inputTokens < 1 || outputTokens < 0) {
        // Off the hot path: quoted or padded cells, a blank line, or a bad row (then it throws).
        if (isBlank(lr.text())) continue;
        ({ ticks, inputTokens, outputTokens } = slowRow(lr, clock, columns));
      }
      if (ticks < prevTicks) throw outOfOrder(path, lr.lineNo, 'TIMESTAMP', splitCsvLine(lr.text())?.[0] ?? lr.text());
      if (prevTicks === -Infinity) firstTicks = ticks;
      prevTicks = ticks;
      if ((ticks - firstTicks) / TICKS_PER_S > MAX_TRACE_ARRIVAL_S) throw arrivalTooLate(path, lr.lineNo, 'TIMESTAMP', splitCsvLine(lr.text())?.[0] ?? lr.text(), 'first row');
      if (outputTokens === 0) {
        skipRow(stats, opts, AZURE_SKIP_NO_OUTPUT, (ticks - firstTicks) / TICKS_PER_S);
        continue;
      }
      stats.rows++;
      yield { id: id++, arrivalS: (ticks - firstTicks) / TICKS_PER_S, inputTokens, outputTokens };
    }
    if (id === 0) throw emptyTrace(path, stats.skipped);
  } finally {
    lr.close();
  }
}

/**
 * A row the byte-level fast path could not take, read with the CSV rules every reader shares (quoted cells,
 * spaces around cells); a bad row becomes the ConfigError naming its first bad field.
 */
function slowRow(lr: ByteLineReader, clock: AzureClock, columns: readonly string[]): { ticks: number; inputTokens: number; outputTokens: number } {
  const source = lr.path;
  const line = lr.lineNo;
  const cells = rowCells(lr.text(), columns.length, source, line);
  const stamp = Buffer.from(cells[0]!.trim());
  const ticks = clock.ticks(stamp, 0, stamp.length);
  if (ticks !== ticks) throw badValue(source, line, 'TIMESTAMP', TIMESTAMP_EXPECTED, cells[0]!);
  const at = columns.length - 3;
  if (at === 1) tokenCellOrZero(cells[1]!, source, line, 'NumImages', 'an integer ≥ 0 and ≤ 1e9');
  const outputTokens = tokenCellOrZero(cells[at + 2]!, source, line, 'GeneratedTokens', 'an integer ≥ 0 and ≤ 1e9 (rows with 0 are skipped)');
  // A row with no output is skipped whatever its prompt (0 included), as long as that is a plain integer.
  const inputTokens = outputTokens === 0 ? tokenCellOrZero(cells[at + 1]!, source, line, 'ContextTokens', SKIPPED_INPUT_EXPECTED) : tokenCell(cells[at + 1]!, source, line, 'ContextTokens');
  return { ticks, inputTokens, outputTokens };
}
