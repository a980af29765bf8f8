/** One CSV cell (RFC 4180): quoted, with inner quotes doubled, when it holds a comma, a quote or a line break. */
export function csvCell(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
