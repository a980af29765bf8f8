import type { z } from 'zod';
import { describeIssue, formatPath } from '../util/config-file.ts';
import { ConfigError } from '../util/errors.ts';

/** Validates a policy's options with its schema; the first problem is a ConfigError at `<prefix>.<key>`. */
export function parsePolicyOptions<S extends z.ZodType>(schema: S, options: unknown, prefix: readonly string[]): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  const iss = parsed.error.issues[0]!;
  const p = iss.code === 'unrecognized_keys' ? [...iss.path, iss.keys[0]!] : iss.path;
  throw new ConfigError({ path: formatPath([...prefix, ...(p as PropertyKey[])]), expected: describeIssue(iss) });
}
