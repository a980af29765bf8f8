import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUNDLE_OPTIONS, pruneStaleBundles } from './esbuild-config.mjs';
import { PROJECT_ROOT } from './paths.ts';


/**
 * Bundles a TypeScript entry and everything it imports from this project into one ES module with esbuild (the
 * compiler tsx itself runs), cached by content hash in `node_modules/.cache/llmfleet/NAME-HASH.mjs`, where the
 * packages it imports (left external) resolve as usual. Returns the file's URL.
 *
 * Why: a process that loads the sources through tsx's hooks pays a round trip to the hooks thread per module
 * (≈ 1 s of CPU for the simulator's 275 modules), and that thread's own garbage collections (5–14 ms, measured
 * with --trace-gc) land on the process's core seconds after start. Each source file keeps its own
 * `import.meta.url` (`BUNDLE_OPTIONS`, shared with bin/llmfleet.js), so paths computed from it stay the same.
 * Throws when bundling is not possible (read-only install, esbuild missing): callers fall back to tsx.
 */
export async function bundleEntry(name: string, entry: { file: string } | { contents: string; resolveDir: string }): Promise<string> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    ...BUNDLE_OPTIONS,
    ...('file' in entry ? { entryPoints: [entry.file] } : { stdin: { contents: entry.contents, resolveDir: entry.resolveDir, loader: 'ts' as const } }),
    write: false,
  });
  const code = result.outputFiles[0]!.contents;
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const dir = join(PROJECT_ROOT, 'node_modules', '.cache', 'llmfleet');
  const file = join(dir, `${name}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // Write then rename: two processes bundling together never load a half-written file.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
    pruneStaleBundles(dir, `${name}-`, file);
  }
  return pathToFileURL(file).href;
}
