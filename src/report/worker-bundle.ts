import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleEntry } from '../util/bundle.ts';

/**
 * The script each comparison worker thread loads: one esbuild bundle of the worker's module graph
 * (`bundleEntry`), which loads in ≈ 0.3 s where the tsx hooks need ≈ 1 s of CPU per worker — on a 2-core machine
 * a fifth of a typical comparison's work. When bundling is not possible the tsx entry is used.
 */
export async function comparisonWorkerScript(): Promise<string> {
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    return await bundleEntry('compare-worker', { contents: "export { runVariantTask as default } from './run-variant.ts';", resolveDir: here });
  } catch {
    return new URL('./worker.mjs', import.meta.url).href;
  }
}
