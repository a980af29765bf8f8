import type { TraceRequest } from './types.ts';
import type { TraceStats } from './readers/reader.ts';
import type { TransformSpec } from './transforms.ts';

/**
 * Which skipped trace rows a workload reports (`Workload.traceStats.skipped`, the simulator's
 * `requests.skippedInTrace`). A skipped row counts when its arrival lies inside `transforms.window`
 * [startS, endS) (anywhere without a window) and either
 * - the consumer has taken a request that arrives later (a request is taken once the next one is asked for;
 *   the simulator asks right after replaying one), or
 * - the stream ran to its end (the file's or the window's; a `limit` cuts it short instead).
 * So rows after the last request a run replays never count, however far a reader or transform read ahead
 * (the window reads one request past its end, rateScale and the simulator one request ahead), and read
 * chunks play no part. Times are compared on the workload's clock: a row's arrival is shifted and compressed
 * with the same arithmetic as the requests'. `transforms.spreadS` moves requests only within their tie group;
 * a skipped row keeps its own time (the start of its group's span).
 */
export class SkipTally implements TraceStats {
  /** Requests handed on in the latest pass. */
  rows = 0;
  /** The latest pass's count by reason. */
  skipped: Record<string, number> = {};
  /** Skipped rows in the window not counted yet, in arrival order (workload clock). */
  private times: number[] = [];
  private reasons: string[] = [];
  private head = 0;

  constructor(private readonly transforms: TransformSpec | undefined) {}

  /** `TraceOptions.onSkip`: a skipped row, its arrival on the trace's clock. */
  add(reason: string, arrivalS: number): void {
    let t = arrivalS;
    const w = this.transforms?.window;
    if (w !== undefined) {
      if (t < w.startS || t >= (w.endS ?? Infinity)) return;
      t -= w.startS;
    }
    const c = this.transforms?.compress;
    if (c !== undefined && c !== 1) t /= c;
    this.times.push(t);
    this.reasons.push(reason);
  }

  /** Counts the pending rows that arrive before `tS` (Infinity: all of them). */
  private release(tS: number): void {
    let i = this.head;
    while (i < this.times.length && this.times[i]! < tS) {
      const r = this.reasons[i++]!;
      this.skipped[r] = (this.skipped[r] ?? 0) + 1;
    }
    if (i === this.times.length) {
      this.times = [];
      this.reasons = [];
      i = 0;
    }
    this.head = i;
  }

  /** Wraps one pass of the workload's stream, counting as the rule above says. */
  pass(inner: Iterator<TraceRequest>): IterableIterator<TraceRequest> {
    this.rows = 0;
    this.skipped = {};
    this.times = [];
    this.reasons = [];
    this.head = 0;
    const limit = this.transforms?.limit;
    let last: TraceRequest | undefined;
    return {
      next: () => {
        if (last !== undefined) this.release(last.arrivalS);
        const step = inner.next();
        if (!step.done) {
          last = step.value;
          this.rows++;
        } else if (limit === undefined || this.rows < limit) this.release(Infinity);
        return step;
      },
      return: (value?: unknown) => {
        inner.return?.();
        return { done: true, value };
      },
      [Symbol.iterator]() {
        return this;
      },
    };
  }
}
