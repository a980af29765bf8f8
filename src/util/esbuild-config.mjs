// Plain JavaScript so that bin/llmfleet.js can bundle the sources before any TypeScript loader exists.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * esbuild options every llmfleet bundle uses: Node 20 ESM, packages left external (they resolve from
 * node_modules as usual), and each source file keeping its own `import.meta.url`, so paths computed from it
 * (PROJECT_ROOT, data files, workers) stay the same inside a bundle.
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'silent',
  plugins: [
    {
      name: 'keep-import-meta-url',
      setup(build) {
        build.onLoad({ filter: /\.ts$/ }, (args) => ({
          contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
          loader: 'ts',
        }));
      },
    },
  ],
};

/**
 * Removes the bundles in `cacheDir` named `prefix…` other than `keep` that were not touched for a day (bundles of
 * older sources; a process still running may load lazy chunks of a recent one, so those stay).
 */
export function pruneStaleBundles(cacheDir, prefix, keep) {
  for (const name of readdirSync(cacheDir)) {
    const p = join(cacheDir, name);
    if (name.startsWith(prefix) && p !== keep && Date.now() - statSync(p).mtimeMs > 86_400_000) rmSync(p, { recursive: true, force: true });
  }
}
