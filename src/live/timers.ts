import { z } from 'zod';
import { UserError } from '../util/errors.ts';
import { parseDecimal } from '../util/decimal.ts';

/**
 * The one place for "a duration that becomes a Node timer". setTimeout, setInterval, AbortSignal.timeout and
 * undici's headers/body timeouts keep their delay in a signed 32-bit count of milliseconds: a longer delay does
 * not wait longer, it fires after 1 ms (with a TimeoutOverflowWarning), and AbortSignal.timeout throws past
 * 2^32 − 1 ms. So "no timeout" written as a huge number would time everything out at once.
 *
 * The rule (docs/LIVE.md, "Durations"): a duration the user gives (a flag, a gateway config field) that the live
 * plane waits on is refused above MAX_TIMER_S with a message naming the flag or file:line field; a wait whose
 * length comes from the data (replay's send schedule, the emulator's step boundaries at a tiny --time-scale) is
 * chained in MAX_TIMER_MS pieces by `setLongTimeout`, so it is as long as asked, however long.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Whole seconds that fit a Node timer: 2,147,483 s, about 24.8 days. */
export const MAX_TIMER_S = Math.floor(MAX_TIMER_MS / 1000);
const WHY = '(about 24.8 days, the longest wait a Node timer holds)';
/** What a too-long config duration is told it should be. */
export const TIMER_S_EXPECTED = `≤ ${MAX_TIMER_S} s ${WHY}`;

/** A gateway config duration the gateway waits on: seconds > 0, at most MAX_TIMER_S. */
export const timerSeconds = z
  .number()
  .positive()
  .finite()
  .refine((v) => v <= MAX_TIMER_S, { message: TIMER_S_EXPECTED });

/**
 * A CLI flag giving wall seconds the live plane waits on: a number ≥ min and ≤ MAX_TIMER_S, else a UserError
 * naming the flag (exit 2).
 */
export function parseTimerSecondsFlag(flag: string, v: string, min = 0): number {
  const n = parseDecimal(v);
  if (!Number.isFinite(n) || n < min) throw new UserError(`${flag}: expected a number of seconds ≥ ${min}, got '${v}'`);
  if (n > MAX_TIMER_S) throw new UserError(`${flag}: expected a number of seconds ≤ ${MAX_TIMER_S} ${WHY}, got '${v}'`);
  return n;
}

/**
 * A delay in ms for one Node timer; a RangeError (a programming error: the value should have been checked where
 * it was read) when it does not fit, instead of the timer silently firing after 1 ms.
 */
export function timerMs(seconds: number, what: string): number {
  const ms = seconds * 1000;
  if (!(ms >= 0 && ms <= MAX_TIMER_MS)) throw new RangeError(`${what}: ${seconds} s is not a timer delay in [0, ${MAX_TIMER_S}] s`);
  return ms;
}

export interface LongTimeout {
  clear(): void;
}

/**
 * setTimeout for any delay (Infinity: never): waits in pieces of at most MAX_TIMER_MS, so a delay past 24.8 days
 * is kept instead of firing after 1 ms. `unref` as for a Node timer.
 */
export function setLongTimeout(fn: () => void, ms: number, opts: { unref?: boolean } = {}): LongTimeout {
  let t: NodeJS.Timeout | null = null;
  const end = performance.now() + ms;
  const arm = (left: number) => {
    t = setTimeout(left > MAX_TIMER_MS ? () => arm(end - performance.now()) : fn, Math.min(Math.max(left, 0), MAX_TIMER_MS));
    if (opts.unref) t.unref();
  };
  arm(ms);
  return {
    clear() {
      if (t) clearTimeout(t);
      t = null;
    },
  };
}

/** Resolves after `ms` (any length; see setLongTimeout). */
export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setLongTimeout(resolve, ms));
}
