#!/usr/bin/env node
// The CLI runs the TypeScript sources with no build step. By default it loads them from an esbuild bundle of
// src/cli/main.ts cached under node_modules/.cache/llmfleet/cli-HASH/, HASH being the hash of every source
// file's contents: a changed source makes a new bundle, so it is never stale. Measured: `simulate --help` 0.24 s
// instead of 0.55 s through tsx, a default `simulate` 0.39 s instead of 0.73 s; and long-running commands
// (`serve`, `emulate`) carry no tsx hooks thread, whose garbage collections land on their core after start.
// When bundling is not possible (esbuild missing, read-only install) or LLMFLEET_TSX=1, the sources load through tsx.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Hash of every source file under src/ that a bundle can include, and of the esbuild version that bundles it. */
function sourceHash(esbuildVersion) {
  const h = createHash('sha256').update(esbuildVersion);
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|mts|mjs|js|json)$/.test(e.name)) h.update(p).update(readFileSync(p));
    }
  };
  walk(join(ROOT, 'src'));
  return h.digest('hex').slice(0, 16);
}

/** The bundled CLI's entry (built on first use of these sources), or null when it cannot be had. */
async function bundledMain() {
  if (process.env.LLMFLEET_TSX === '1') return null;
  try {
    const esbuild = await import('esbuild');
    const cache = join(ROOT, 'node_modules', '.cache', 'llmfleet');
    const dir = join(cache, `cli-${sourceHash(esbuild.version)}`);
    if (!existsSync(join(dir, 'main.js'))) {
      const { BUNDLE_OPTIONS, pruneStaleBundles } = await import('../src/util/esbuild-config.mjs');
      const tmp = `${dir}.${process.pid}.tmp`;
      // Code splitting keeps each command's packages (TensorFlow.js, vega, the live plane) loading lazily.
      await esbuild.build({ ...BUNDLE_OPTIONS, entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')], splitting: true, outdir: tmp, write: true });
      try {
        renameSync(tmp, dir); // atomic: a concurrent first run never loads a half-written bundle
      } catch {
        rmSync(tmp, { recursive: true, force: true }); // another process won the race
      }
      pruneStaleBundles(cache, 'cli-', dir);
    }
    return pathToFileURL(join(dir, 'main.js')).href;
  } catch {
    return null;
  }
}

const entry = await bundledMain();
if (entry === null) (await import('tsx/esm/api')).register();
const { main } = await import(entry ?? '../src/cli/main.ts');
await main(process.argv);
