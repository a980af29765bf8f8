import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { comparisonWorkerScript } from '../../src/report/worker-bundle.ts';
import { PROJECT_ROOT } from '../../src/util/paths.ts';

test('comparison workers load one esbuild bundle in which every module keeps its own import.meta.url', async () => {
  const url = await comparisonWorkerScript();
  assert.match(url, /node_modules\/\.cache\/llmfleet\/compare-worker-[0-9a-f]{16}\.mjs$/);
  const code = readFileSync(fileURLToPath(url), 'utf8');
  assert.ok(!code.includes('import.meta.url'), 'no module sees the bundle as its own location');
  // o365.ts finds the bundled traces from its own location.
  assert.ok(code.includes(JSON.stringify(pathToFileURL(`${PROJECT_ROOT}src/workload/generators/o365.ts`).href)));
  assert.equal(typeof (await import(url)).default, 'function', 'the worker entry piscina calls');
  assert.equal(await comparisonWorkerScript(), url, 'same sources, same cached file');
});
