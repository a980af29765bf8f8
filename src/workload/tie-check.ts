import type { TraceRequest } from './types.ts';

/** Fewer requests than this say too little about a trace's clock to suggest anything. */
export const TIE_NOTE_MIN_REQUESTS = 100;
/** The share of requests in groups of ≥ 2 equal arrival times from which the note is given. */
export const TIE_NOTE_SHARE = 0.5;

/**
 * Watches a trace's raw arrivals (before any transform) for whole-second ties: a trace logged in whole seconds
 * (BurstGPT; some Azure 2024 rows) replays each second's requests at one instant, which inflates queueing and
 * TTFT (the default scenario with its Azure conv arrivals floored to whole seconds: TTFT p50 36 → 100 ms; 35 ms with
 * spreadS 1). `note()` suggests `transforms.spreadS` when,
 * over the latest pass, at least `TIE_NOTE_MIN_REQUESTS` requests were read, every arrival is a whole number of
 * seconds, there are at least two distinct arrival times (one time for all is an offline batch, on purpose) and
 * at least `TIE_NOTE_SHARE` of the requests share their arrival time with another one. Constant memory and a
 * few operations per request: only the current run of equal times is tracked.
 */
export class TieCheck {
  private n = 0;
  /** Requests in closed groups of ≥ 2 equal times. */
  private tied = 0;
  private distinct = 0;
  private curT = NaN;
  private curK = 0;
  private whole = true;

  constructor(private readonly what: string) {}

  /** Wraps one pass of the raw trace stream (the counts restart with it). */
  pass(inner: Iterator<TraceRequest>): Iterator<TraceRequest> {
    this.n = this.tied = this.distinct = this.curK = 0;
    this.curT = NaN;
    this.whole = true;
    return {
      next: () => {
        const step = inner.next();
        if (!step.done) this.see(step.value.arrivalS);
        return step;
      },
      return: (value?: unknown) => {
        inner.return?.();
        return { done: true, value };
      },
    };
  }

  private see(t: number): void {
    this.n++;
    if (t === this.curT) {
      this.curK++;
      return;
    }
    if (this.curK >= 2) this.tied += this.curK;
    this.curT = t;
    this.curK = 1;
    this.distinct++;
    if (this.whole && !Number.isInteger(t)) this.whole = false;
  }

  /** The suggestion for the latest pass, or none. */
  note(): string | undefined {
    const tied = this.tied + (this.curK >= 2 ? this.curK : 0);
    if (!this.whole || this.n < TIE_NOTE_MIN_REQUESTS || this.distinct < 2 || tied < TIE_NOTE_SHARE * this.n) return undefined;
    return (
      `${this.what}: every arrival is a whole second and ${Math.round((100 * tied) / this.n)} % of the ${this.n.toLocaleString('en-US')} requests read ` +
      'share their arrival time with another: each second\'s requests arrive at one instant, which inflates queueing and TTFT. ' +
      '--set workload.transforms.spreadS=1 spreads them evenly over their second'
    );
  }
}
