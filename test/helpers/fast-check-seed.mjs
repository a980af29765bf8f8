// Plain JavaScript: worker threads (compare --workers) inherit this --import without the TypeScript loader.
// Loaded before every test file by scripts/run-tests.mjs (`npm test`, CI): property tests draw the same cases on
// every run, so a red run is a real regression and not an unlucky seed. FC_SEED=N picks another seed;
// FC_SEED=random draws a fresh one per property (fast-check prints it with any counterexample) for a bug hunt.
import fc from 'fast-check';

const seed = process.env.FC_SEED;
if (seed !== 'random') {
  const n = seed === undefined ? 20261128 : Number(seed);
  if (!Number.isInteger(n)) throw new Error(`FC_SEED: expected an integer or "random", got ${seed}`);
  fc.configureGlobal({ seed: n });
}
