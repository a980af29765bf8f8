import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The script each comparison worker thread loads.
 *
 * Through tsx's loader hooks a worker needs ≈ 1 s of CPU to load the simulator's 275 modules (measured: every
 * resolve and load is a round trip to the hooks thread), paid once per worker and, on a 2-core machine, a fifth of
 * a typical comparison's work. So the worker's module graph is bundled once with esbuild (the compiler tsx itself
 * runs) into `node_modules/.cache/llmfleet/`, where the packages it imports resolve as usual; loading it takes
 * ≈ 0.3 s. Each source file keeps its own `import.meta.url`, so paths computed from it (PROJECT_ROOT, data
 * files) stay the same. When bundling is not possible (read-only install, esbuild missing) the tsx entry is used.
 */
export async function comparisonWorkerScript(): Promise<string> {
  const fallback = new URL('./worker.mjs', import.meta.url).href;
  try {
    return await bundledWorker();
  } catch {
    return fallback;
  }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function bundledWorker(): Promise<string> {
  const esbuild = await import('esbuild');
  const here = dirname(fileURLToPath(import.meta.url));
  const result = await esbuild.build({
    stdin: { contents: "export { runVariantTask as default } from './run-variant.ts';", resolveDir: here, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
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
  });
  const code = result.outputFiles[0]!.contents;
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const dir = join(ROOT, 'node_modules', '.cache', 'llmfleet');
  const file = join(dir, `compare-worker-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // Write then rename: two comparisons starting together never load a half-written file.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
  }
  return pathToFileURL(file).href;
}
