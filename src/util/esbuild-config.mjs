// Plain JavaScript so that bin/llmfleet.js can bundle the sources before any TypeScript loader exists.
import { readFileSync } from 'node:fs';
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
