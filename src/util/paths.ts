import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root folder (with a trailing separator): bundled scenarios and data are found from it. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A file bundled with the project, by its path from the root (e.g. `data/azure-llm/…`). */
export function bundledPath(rel: string): string {
  return join(PROJECT_ROOT, rel);
}
