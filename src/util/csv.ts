import { ConfigError } from './errors.ts';

/** One CSV cell (RFC 4180): quoted, with inner quotes doubled, when it holds a comma, a quote or a line break. */
export function csvCell(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A data row of a headed CSV: its 1-based line number and its trimmed cells (as many as the header's). */
export interface HeadedCsvRow {
  line: number;
  cells: string[];
}

/**
 * A small CSV with a header row (profile and measurement tables: plain cells, no quoting): the first non-blank
 * line names the columns, blank lines are skipped, every data row must have the header's cell count and at least
 * one must exist. Errors name `source` and the line.
 */
export function readHeadedCsv(text: string, source: string, required: readonly string[]): { header: string[]; col: Map<string, number>; rows: HeadedCsvRow[] } {
  let header: string[] | undefined;
  let headerLine = 0;
  let col = new Map<string, number>();
  const rows: HeadedCsvRow[] = [];
  let line = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const raw = text.slice(start, end).replace(/\r$/, '');
    start = end + 1;
    line++;
    if (raw.trim() === '') continue;
    const cells = raw.split(',').map((c) => c.trim());
    if (!header) {
      header = cells;
      headerLine = line;
      col = new Map(header.map((h, i) => [h, i]));
      const missing = required.filter((c) => !col.has(c));
      if (missing.length > 0) throw new ConfigError({ source, line, expected: `a header with columns ${required.join(', ')}${missing.length < required.length ? ` (this one lacks ${missing.join(', ')})` : ''}`, got: raw });
      continue;
    }
    if (cells.length !== header.length) throw new ConfigError({ source, line, expected: `${header.length} cells`, got: cells.length });
    rows.push({ line, cells });
  }
  if (!header) throw new ConfigError({ source, expected: 'a CSV header line', got: 'an empty file' });
  // A header alone is a file cut short, not a measurement with nothing in it: its rows must not just disappear.
  if (rows.length === 0) throw new ConfigError({ source, line: headerLine + 1, expected: 'at least one data row', got: 'none' });
  return { header, col, rows };
}
