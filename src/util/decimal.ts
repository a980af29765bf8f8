/**
 * Plain decimal notation (`12`, `-3.5`, `1e9`, `.5`): what flags and data cells accept as numbers. Number() alone
 * also reads "" and " " as 0 (`--seed ""` ran seed 0), `0x10` as 16, `0b1`, `Infinity`.
 */
export const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/** The number a decimal string denotes (blanks around it allowed), NaN for anything else. */
export function parseDecimal(s: string): number {
  const t = s.trim();
  return DECIMAL.test(t) ? Number(t) : NaN;
}
