import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../../src/util/rng.ts';
import { ChunkedFileWriter, O365_DEFAULTS, O365_PRESETS, o365, writeO365Csv } from '../../../src/workload/generators/o365.ts';
import { tempDir } from '../helpers.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** Half an hour of the four-model peak day at 1 % of production (≈ 1.4 k rows, 81 kB). */
const SMALL = { ...O365_PRESETS['peak-day-mix'], durationS: 1800, meanRequestsPerS: O365_DEFAULTS.meanRequestsPerS * 0.01 };
/** sha256 of writeO365Csv(SMALL, seed 7) as the former join-then-writeFileSync writer produced it (1383 rows, 80,984 bytes). */
const SMALL_SHA256 = '9d24ce0505cd8765101e49da5bb466569bfe75728302033f10662849747a0715';

/** The former writer: every line in memory, joined, written at once. */
function oldCsv(seed: number): string {
  const lines = ['arrival_s,input_tokens,output_tokens,model,tier,region,app,deadline_s'];
  for (const r of o365(SMALL, new Rng(seed).fork('o365'))) {
    lines.push(`${r.arrivalS.toFixed(4)},${r.inputTokens},${r.outputTokens},${r.model},${r.tier},${r.region},${r.app},${r.deadlineS!.toFixed(4)}`);
  }
  return lines.join('\n') + '\n';
}

test('writeO365Csv streams the same bytes as the former all-in-memory writer, for any chunk size', () => {
  const ref = oldCsv(7);
  assert.equal(createHash('sha256').update(ref).digest('hex'), SMALL_SHA256);
  for (const chunkChars of [undefined, 1, 100, 4096]) {
    const p = join(tmp.dir, `o365-${chunkChars}.csv`);
    assert.equal(writeO365Csv(p, SMALL, 7, chunkChars), 1383);
    const bytes = readFileSync(p);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), SMALL_SHA256, `chunk ${chunkChars}`);
    assert.equal(bytes.toString('utf8'), ref);
  }
});

test('ChunkedFileWriter writes each chunk as it fills, holding at most one chunk and a line', () => {
  const p = join(tmp.dir, 'chunks.txt');
  const w = new ChunkedFileWriter(p, 10);
  w.write('abcd\n');
  assert.equal(statSync(p).size, 0, 'under a chunk: still buffered');
  w.write('efghij\n');
  assert.equal(statSync(p).size, 12, 'a full chunk is on disk before close');
  w.write('é\n'); // 2 characters, 3 bytes: counted as characters, written as UTF-8
  assert.equal(w.flushes, 1);
  w.close();
  assert.equal(w.flushes, 2);
  assert.equal(readFileSync(p, 'utf8'), 'abcd\nefghij\né\n');
});
