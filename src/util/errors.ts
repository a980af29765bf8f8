/**
 * Two kinds of error (see STYLE.md): a UserError is the user's mistake (bad file, flag, row) and ends the
 * CLI with exit code 2 and one line; anything else is a bug and keeps its stack.
 */
export class UserError extends Error {
  override name = 'UserError';
}

/** Where a bad value came from: a file (and line), a config path, a flag. */
export interface Issue {
  source?: string;
  line?: number;
  path?: string;
  expected: string;
  got?: unknown;
}

export function formatIssue(i: Issue): string {
  const where = [i.source && (i.line !== undefined ? `${i.source}:${i.line}` : i.source), i.path]
    .filter(Boolean)
    .join(' ');
  const got = i.got === undefined ? '' : `, got ${describe(i.got)}`;
  return `${where ? where + ': ' : ''}expected ${i.expected}${got}`;
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 57) + '...' : v);
  // YAML's !!set and !!omap read as a Set and a Map, which JSON.stringify prints as {}.
  if (v instanceof Set) return `a YAML !!set of ${v.size}`;
  if (v instanceof Map) return `a YAML !!omap or !!pairs of ${v.size}`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  try {
    const s = JSON.stringify(v);
    return s.length > 60 ? s.slice(0, 57) + '...' : s;
  } catch {
    return String(v);
  }
}

export class ConfigError extends UserError {
  override name = 'ConfigError';
  constructor(readonly issue: Issue) {
    super(formatIssue(issue));
  }
}

/** Internal consistency check: a failure is a bug, never the user's fault. */
export function invariant(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(`invariant failed: ${msg}`);
}
