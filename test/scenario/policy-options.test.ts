import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routers } from '../../src/policy/routing/registry.ts';
import { preserveScalerOptions } from '../../src/policy/scaling/preserve.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { deepMerge, resolvedScaling, selectedOptions } from '../../src/scenario/schema.ts';
import { UserError } from '../../src/util/errors.ts';

const PR = 'scenarios/preserve-routing.yaml';
const PS = 'scenarios/preserve-scaling.yaml';
const PD = 'scenarios/sageserve-peak-day.yaml';

const load = (file: string, sets: string[]) => loadScenario({ file, sets });
/** The load fails with one UserError line matching `msg`. */
const refuses = (file: string, sets: string[], msg: RegExp) =>
  assert.throws(() => load(file, sets), (e: Error) => {
    assert.ok(e instanceof UserError, `not a UserError: ${e.stack}`);
    assert.ok(!e.message.includes('\n'), e.message);
    assert.match(e.message, msg);
    return true;
  }, sets.join(' '));
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Runs `body` on a copy of `file` (in a temporary folder; loading reads no relative path) with `edit` applied to its text. */
function withEdited(file: string, edit: (text: string) => string, body: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-opts-'));
  const path = join(dir, 'scenario.yaml');
  try {
    const text = readFileSync(file, 'utf8');
    const edited = edit(text);
    assert.notEqual(edited, text, 'the edit changed nothing');
    writeFileSync(path, edited);
    body(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const lineOf = (path: string, needle: string) => readFileSync(path, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

// ---- 1. options are deep-merged over the perPolicy entry --------------------------------------------------------

test('deepMerge merges plain objects key by key; lists, scalars and null replace; the inputs are left alone', () => {
  const base = { a: { b: 1, c: { d: 2, e: 3 } }, list: [1, 2], s: 'x', n: { k: 1 } };
  const over = { a: { c: { d: 9 } }, list: [3], s: 'y', n: null, extra: true };
  assert.deepEqual(deepMerge(base, over), { a: { b: 1, c: { d: 9, e: 3 } }, list: [3], s: 'y', n: null, extra: true });
  assert.deepEqual(base, { a: { b: 1, c: { d: 2, e: 3 } }, list: [1, 2], s: 'x', n: { k: 1 } });
  assert.deepEqual(deepMerge({ a: [1] }, { a: { x: 1 } }), { a: { x: 1 } });
});

test('an option inside a nested block keeps the rest of the perPolicy entry’s block (llumnix migration)', () => {
  const { scenario } = load(PR, ['routing.policy=llumnix', 'routing.options.migration.intervalS=0.1']);
  assert.deepEqual(selectedOptions(scenario.routing), { migration: { enabled: true, intervalS: 0.1 } });
  const opts = routers.llumnix.options.parse(selectedOptions(scenario.routing)) as { migration: { enabled: boolean; intervalS: number } };
  assert.deepEqual([opts.migration.enabled, opts.migration.intervalS], [true, 0.1]);
  // Dispatch only still works the documented way.
  const off = load(PR, ['routing.policy=llumnix', 'routing.options.migration.enabled=false']).scenario;
  assert.deepEqual(selectedOptions(off.routing), { migration: { enabled: false } });
});

test("PreServe's nested anticipator block is merged too", () => {
  const { scenario } = load(PS, ['scaling.perPolicy.preserve.anticipator.horizonSteps=50', 'scaling.options.anticipator.extensionFraction=0.3']);
  const o = preserveScalerOptions.parse(selectedOptions(resolvedScaling(scenario)));
  assert.deepEqual([o.anticipator.horizonSteps, o.anticipator.extensionFraction, o.windowS, o.muPrefill], [50, 0.3, 150, 444.9]);
});

// ---- 3. aliases and every perPolicy entry --------------------------------------------------------------------

const SHORT = ['workload.o365.scale=0.5', 'workload.o365.startS=115200', 'workload.o365.durationS=10800'];

test('options under an aliased short name are refused, naming the flag and where they go', () => {
  const sets = [...SHORT, 'scaling.policy=reactive', 'scaling.perPolicy.reactive.scaleUpAbove=0.5', 'scaling.perPolicy.reactive.scaleDownBelow=0.25'];
  refuses(PD, sets, /^--set scaling\.perPolicy\.reactive\.scaleDownBelow=0\.25 scaling\.perPolicy\.reactive: scaling\.policy 'reactive' runs 'sageserve-reactive' in this scenario \(scaling\.aliases\).*put its options under scaling\.perPolicy\.sageserve-reactive$/);
  // Never read whichever policy is selected.
  refuses(PD, ['scaling.perPolicy.reactive.scaleUpAbove=0.5'], /scaling\.perPolicy\.reactive: .*under scaling\.perPolicy\.sageserve-reactive/);
  // Where they go, they apply.
  const ok = load(PD, [...SHORT, 'scaling.policy=reactive', 'scaling.perPolicy.sageserve-reactive.scaleUpAbove=0.5', 'scaling.perPolicy.sageserve-reactive.scaleDownBelow=0.25']).scenario;
  assert.deepEqual(selectedOptions(resolvedScaling(ok)), { scaleUpAbove: 0.5, scaleDownBelow: 0.25 });
  // Without the alias `reactive` is the core's scaler, and its own entry is read.
  const core = load(PD, ['scaling.aliases={}', 'scaling.policy=reactive', 'scaling.perPolicy.reactive.step=2']).scenario;
  assert.deepEqual([resolvedScaling(core).policy, selectedOptions(resolvedScaling(core))], ['reactive', { step: 2 }]);
});

test('an aliased entry written in the file is refused at its line', () => {
  withEdited(PD, (t) => t.replace('  aliases: { reactive: sageserve-reactive }', '  aliases: { reactive: sageserve-reactive }\n  perPolicy:\n    reactive: { cooldownS: 30 }'), (file) => {
    refuses(file, [], new RegExp(`^${esc(file)}:${lineOf(file, 'reactive: { cooldownS')} scaling\\.perPolicy\\.reactive: .*scaling\\.perPolicy\\.sageserve-reactive$`));
  });
});

test('every perPolicy entry is checked for unknown keys at load, selected or not', () => {
  refuses(PR, ['routing.perPolicy.llumnix.bogus=1'], /^--set routing\.perPolicy\.llumnix\.bogus=1 routing\.perPolicy\.llumnix\.bogus: expected no unknown key here \(found 'bogus'\)$/);
  refuses(PR, ['routing.perPolicy.llumnix.migration.bogus=1'], /^--set \S+ routing\.perPolicy\.llumnix\.migration\.bogus: expected no unknown key/);
  refuses(PD, ['scaling.perPolicy.chiron.chironIBP=0.9'], /^--set scaling\.perPolicy\.chiron\.chironIBP=0\.9 scaling\.perPolicy\.chiron\.chironIBP: expected no unknown key/);
  refuses(PD, ['scaling.perPolicy.preserve.bogus=1'], /scaling\.perPolicy\.preserve\.bogus: expected no unknown key/);
  withEdited(PR, (t) => t.replace('llumnix: { migration: { enabled: true } }', 'llumnix: { migration: { enabled: true }, bogus: 1 }'), (file) => {
    refuses(file, [], new RegExp(`^${esc(file)}:${lineOf(file, 'bogus: 1')} routing\\.perPolicy\\.llumnix\\.bogus: expected no unknown key`));
  });
});

test('values an unselected entry sets are checked; fields it leaves out and rules across fields are not', () => {
  refuses(PD, ['scaling.perPolicy.chiron.chironIbp=9'], /^--set \S+ scaling\.perPolicy\.chiron\.chironIbp: expected ≤ 1, got 9$/);
  refuses(PR, ['routing.perPolicy.llumnix.migration.intervalS=-1'], /routing\.perPolicy\.llumnix\.migration\.intervalS: expected ≥ 0\.001, got -1$/);
  refuses(PD, ['scaling.perPolicy.preserve.windowS=0'], /scaling\.perPolicy\.preserve\.windowS: expected ≥ 0\.001, got 0$/);
  // PreServe's μ are required once it runs (or probed when all are left out): not asked of an unselected entry.
  assert.ok(load(PD, ['scaling.perPolicy.preserve.windowS=300', 'scaling.perPolicy.preserve.muPrefill=100']));
  assert.ok(load(PD, ['scaling.perPolicy.chiron.chironIbp=0.9']));
  // scaleDownBelow < scaleUpAbove may still be met by `options` once lt-i is selected.
  assert.ok(load(PD, ['scaling.perPolicy.lt-i.scaleUpAbove=0.2']));
  refuses(PD, ['scaling.policy=lt-i', 'scaling.perPolicy.lt-i.scaleUpAbove=0.2'], /^--set scaling\.perPolicy\.lt-i\.scaleUpAbove=0\.2 scaling\.perPolicy\.lt-i\.scaleDownBelow: expected scaleDownBelow must be < scaleUpAbove$/);
  assert.ok(load(PD, ['scaling.policy=lt-i', 'scaling.perPolicy.lt-i.scaleUpAbove=0.2', 'scaling.options.scaleDownBelow=0.1']));
});

// ---- 4. errors in the selected policy's options name where the key came from -------------------------------------

test("the selected policy's problems name the perPolicy entry or options block and the flag or line that set it", () => {
  const pd = refuses.bind(null, PD);
  pd(['scaling.perPolicy.lt-ua.bogus=1'], /^--set scaling\.perPolicy\.lt-ua\.bogus=1 scaling\.perPolicy\.lt-ua\.bogus: expected no unknown key here/);
  assert.throws(() => load(PD, ['scaling.perPolicy.lt-ua.bogus=1']), (e: Error) => !e.message.includes('.yaml'));
  pd(['scaling.options.bogus=1'], /^--set scaling\.options\.bogus=1 scaling\.options\.bogus: expected no unknown key/);
  refuses(PR, ['scaling.policy=reactive', 'scaling.perPolicy.reactive.step=0'], /^--set scaling\.perPolicy\.reactive\.step=0 scaling\.perPolicy\.reactive\.step: expected > 0, got 0$/);
  // `options` wins the merge, so a bad key it sets is named there even where the entry sets it too.
  refuses(PR, ['routing.policy=llumnix', 'routing.perPolicy.llumnix.migration.intervalS=2', 'routing.options.migration.intervalS=-1'], /^--set routing\.options\.migration\.intervalS=-1 routing\.options\.migration\.intervalS: expected ≥ 0\.001, got -1$/);
  refuses(PR, ['routing.policy=llumnix', 'routing.perPolicy.llumnix.migration.intervalS=-1'], /^--set routing\.perPolicy\.llumnix\.migration\.intervalS=-1 routing\.perPolicy\.llumnix\.migration\.intervalS: expected ≥ 0\.001, got -1$/);
  withEdited(PR, (t) => t.replace('  policy: preserve\n  perPolicy:', '  policy: llumnix\n  perPolicy:').replace('llumnix: { migration: { enabled: true } }', 'llumnix: { migration: { enabled: yes please } }'), (file) => {
    refuses(file, [], new RegExp(`^${esc(file)}:${lineOf(file, 'yes please')} routing\\.perPolicy\\.llumnix\\.migration\\.enabled: expected a value of type boolean, got "yes please"$`));
  });
  // PreServe's entry in the file: the line of the key at fault.
  withEdited(PS, (t) => t.replace('      windowsPerDay: 24', '      windowsPerDay: 0'), (file) => {
    refuses(file, [], new RegExp(`^${esc(file)}:${lineOf(file, 'windowsPerDay: 0')} scaling\\.perPolicy\\.preserve\\.windowsPerDay: expected ≥ 1, got 0$`));
  });
});

test("the static scaler's count outside a pool's minCount..maxCount is refused at load (the governor clamped it silently)", () => {
  refuses(PS, ['scaling.policy=static', 'scaling.options={count: 10}'], /^--set scaling\.options=\{count: 10\} scaling\.options\.count: expected ≤ maxCount \(8\) of pool a40 \(static holds every pool at count\), got 10$/);
  refuses(PS, ['scaling.policy=static', 'scaling.options={}', 'scaling.perPolicy.static.count=0'], /^--set scaling\.perPolicy\.static\.count=0 scaling\.perPolicy\.static\.count: expected ≥ minCount \(1\) of pool a40 \(static holds every pool at count\), got 0$/);
  assert.equal(selectedOptions(load(PS, ['scaling.policy=static', 'scaling.options={count: 8}']).scenario.scaling).count, 8);
  // Only the selected policy's count: an unselected entry is never run.
  assert.equal(load(PS, ['scaling.perPolicy.static.count=10']).scenario.scaling.policy, 'preserve');
});

test("the preserve scaler's window must be a whole number of scaler intervals (windows close at ticks)", () => {
  // preserve-scaling: windowS 150 under perPolicy.preserve, intervalS 5.
  assert.ok(load(PS, ['scaling.intervalS=50']));
  refuses(PS, ['scaling.intervalS=60'], /scaling\.perPolicy\.preserve\.windowS: expected a whole multiple of scaling\.intervalS \(60 s\): windows close at scaler ticks, got 150$/);
  refuses(PS, ['scaling.perPolicy.preserve.windowS=27'], /windowS: expected a whole multiple of scaling\.intervalS \(5 s\).*, got 27$/);
  refuses(PS, ['scaling.options.windowS=2'], /^--set scaling\.options\.windowS=2 scaling\.options\.windowS: expected a whole multiple/);
  // Left at its default (600 s), the interval is at fault.
  refuses(PD, ['scaling.policy=preserve', 'scaling.options.muPrefill=1', 'scaling.options.muDecode=1', 'scaling.options.muTotal=1', 'scaling.intervalS=45'],
    /scaling\.intervalS: expected a divisor of the preserve scaler's window \(windowS 600 s\): windows close at scaler ticks, got 45$/);
  // Another policy's entry is not checked.
  assert.ok(load(PD, ['scaling.perPolicy.preserve.windowS=25']));
});
