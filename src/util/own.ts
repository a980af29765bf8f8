/**
 * `o[key]` for a record keyed by user-chosen names, or undefined when `key` is not its own: a plain object also
 * answers `constructor`, `toString`, `__proto__`… with what it inherits (a function where a number was meant).
 */
export function own<T>(o: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return o !== undefined && Object.hasOwn(o, key) ? o[key] : undefined;
}
