/**
 * Milliseconds from the epoch to 00:00 UTC of the proleptic Gregorian date y-mo-d (mo 1..12), or NaN when there
 * is no such date (month 13, February 30, February 29 of a common year). Every year is taken as written:
 * `Date.UTC(y, …)` reads years 0..99 as 1900..1999 (so 0000-02-28 → 0000-03-01 came out one day apart, year 0
 * being a leap year and 1900 not, and 0099-12-31 → 0100-01-01 ran backwards); setUTCFullYear does not.
 */
export function utcDateMs(y: number, mo: number, d: number): number {
  if (!Number.isInteger(y) || !Number.isInteger(mo) || !Number.isInteger(d) || mo < 1 || mo > 12 || d < 1 || d > 31) return NaN;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  // An impossible day rolls over into the next month (Feb 30 → Mar 2): refused, not moved.
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d ? t.getTime() : NaN;
}
