import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarize } from '../../src/metrics/summary.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { buildComparisonReport, comparisonJson, type VariantResult } from '../../src/report/compare.ts';
import type { ComparisonSetup } from '../../src/report/variants.ts';
import { renderSvg, reportCharts } from '../../src/report/charts.ts';
import { writeRunReport, formatCommand } from '../../src/report/run-report.ts';
import { renderReportHtml } from '../../src/report/html.ts';
import { smallComparison, tierScenario } from './fixture.ts';

/** The id and inline <svg> of every chart figure in the page. */
function figures(html: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of html.matchAll(/<figure class="chart" id="chart-([a-z0-9-]+)">([\s\S]*?)<\/figure>/g)) out.set(m[1]!, m[2]!);
  return out;
}

function assertSelfContained(html: string): void {
  const external = [...html.matchAll(/(?:src|href)\s*=\s*["']?\s*(https?:|\/\/)[^"' >]*/gi)].map((m) => m[0]);
  assert.deepEqual(external, [], 'no src/href pointing at the network');
  assert.doesNotMatch(html, /<script|<link|<img|@import|url\(\s*["']?https?:/i, 'no scripts, stylesheets, images or CSS imports');
}

function assertChartsRendered(html: string, ids: readonly string[]): void {
  const figs = figures(html);
  assert.deepEqual([...figs.keys()].sort(), [...ids].sort());
  for (const [id, body] of figs) {
    const svg = body.match(/<svg[^>]*\swidth="(\d+(?:\.\d+)?)"[^>]*\sheight="(\d+(?:\.\d+)?)"/);
    assert.ok(svg, `chart ${id} is an inline <svg> with a size`);
    assert.ok(Number(svg[1]) > 100 && Number(svg[2]) > 100, `chart ${id} is ${svg[1]}×${svg[2]}`);
    assert.match(body, /<path|<rect|<line/, `chart ${id} draws marks`);
  }
}

let cmp: { setup: ComparisonSetup; results: VariantResult[] };
before(async () => {
  cmp = await smallComparison();
});

test('the comparison report has every chart as an inline SVG, the Pareto and tier charts included, and no network URL', async () => {
  const html = await buildComparisonReport(cmp.setup, cmp.results, formatCommand(['compare', '--variant', "a b:routing.policy=jsq"]));
  assertChartsRendered(html, ['ttft-cdf', 'tpot-cdf', 'e2e-cdf', 'arrivals-capacity', 'instances-by-state', 'kv-utilization', 'queue-length', 'cost-vs-slo', 'tier-violations']);
  assertSelfContained(html);
  assert.ok(html.length < 600_000, `report is ${html.length} bytes`);
  // The rerun command (shell-quoted, HTML-escaped), each variant's overrides and the scenario YAML are in the page.
  assert.match(html, /node bin\/llmfleet\.js compare --variant &#39;a b:routing\.policy=jsq&#39;|node bin\/llmfleet\.js compare --variant 'a b:routing\.policy=jsq'/);
  for (const v of cmp.results) assert.ok(html.includes(`<code>${v.overrides[0]}</code>`), v.name);
  assert.match(html, /name: tiny-tiers\n/);
  assert.match(html, /<td class="num best">/);
});

test('the same runs give a byte-identical report (no timestamps, no wall-clock times)', async () => {
  const slower = cmp.results.map((r) => ({ ...r, digest: { ...r.digest, summary: { ...r.digest.summary, sim: { ...r.digest.summary.sim, wallSeconds: 99 } } } }));
  assert.equal(await buildComparisonReport(cmp.setup, cmp.results, 'x'), await buildComparisonReport(cmp.setup, slower, 'x'));
});

test('inline SVG ids are unique across charts so clip paths do not collide', async () => {
  const html = await buildComparisonReport(cmp.setup, cmp.results, 'x');
  const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
  assert.equal(new Set(ids).size, ids.length, 'duplicate element ids');
  for (const m of html.matchAll(/url\(#([^)]+)\)/g)) assert.ok(ids.includes(m[1]!), `url(#${m[1]}) points at an element in the page`);
});

test('renderSvg prefixes clip-path ids and their references, so two charts in one page keep their own', async () => {
  const spec = {
    data: { values: [{ x: 1, y: 2 }, { x: 5, y: 3 }] },
    mark: { type: 'line', clip: true },
    encoding: { x: { field: 'x', type: 'quantitative', scale: { domain: [0, 3] } }, y: { field: 'y', type: 'quantitative' } },
  } as unknown as Parameters<typeof renderSvg>[0];
  const [a, b] = await Promise.all([renderSvg(spec, 'a-'), renderSvg(spec, 'b-')]);
  const ids = (svg: string) => [...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(ids(a).length > 0 && ids(a).every((id) => id.startsWith('a-')), ids(a).join());
  assert.ok(ids(b).every((id) => id.startsWith('b-')));
  for (const m of a.matchAll(/url\(#([^)]+)\)/g)) assert.ok(ids(a).includes(m[1]!));
});

test('series are downsampled: at most 500 timeline points and 200 CDF points per variant', () => {
  for (const r of cmp.results) {
    assert.ok(r.digest.timeline.length > 0 && r.digest.timeline.length <= 500);
    for (const k of ['ttft', 'tpot', 'e2e'] as const) {
      const c = r.digest.cdf[k];
      assert.ok(c.length > 0 && c.length <= 200, `${k}: ${c.length}`);
      for (let i = 1; i < c.length; i++) assert.ok(c[i]!.valueS >= c[i - 1]!.valueS && c[i]!.fraction > c[i - 1]!.fraction, `${k} CDF is monotone`);
      assert.equal(c[c.length - 1]!.fraction, 1);
    }
  }
});

test('the cost-vs-SLO and tier charts appear only when they mean something', () => {
  const one = reportCharts([{ name: 'a', digest: cmp.results[0]!.digest }]).map((c) => c.id);
  assert.ok(!one.includes('cost-vs-slo'), 'one run has no frontier to show');
  assert.ok(one.includes('tier-violations'));
  const { tiers: _drop, ...noTiers } = cmp.results[0]!.digest.summary;
  const two = reportCharts([
    { name: 'a', digest: { ...cmp.results[0]!.digest, summary: noTiers } },
    { name: 'b', digest: { ...cmp.results[1]!.digest, summary: noTiers } },
  ]).map((c) => c.id);
  assert.ok(two.includes('cost-vs-slo'));
  assert.ok(!two.includes('tier-violations'));
});

test('writeRunReport writes one self-contained report.html for a single simulation', async () => {
  const sc = tierScenario();
  const res = simulate(sc, '.', { mode: 'fast' });
  const summary = summarize(res, 0);
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-report-'));
  const path = await writeRunReport(dir, { scenario: sc, summary, log: res.log, timeline: res.timeline, command: 'node bin/llmfleet.js simulate' });
  assert.equal(path, join(dir, 'report.html'));
  const html = readFileSync(path, 'utf8');
  assertChartsRendered(html, ['ttft-cdf', 'tpot-cdf', 'e2e-cdf', 'arrivals-capacity', 'instances-by-state', 'kv-utilization', 'queue-length', 'tier-violations']);
  assertSelfContained(html);
  assert.match(html, /<title>Run: tiny-tiers/);
  assert.match(html, /node bin\/llmfleet\.js simulate/);
});

test('comparison.json holds each variant name, overrides and summary', () => {
  const j = comparisonJson(cmp.setup, cmp.results, 'cmd');
  assert.equal(j.command, 'cmd');
  assert.deepEqual(j.variants.map((v) => v.name), ['x1', 'x2', 'x3']);
  assert.deepEqual(j.variants[1]!.overrides, ['fleet.pools.0.count=2']);
  assert.equal(typeof j.variants[2]!.summary.slo.attainment, 'number');
  // More instances cost more: the overrides reached the runs.
  assert.ok(j.variants[0]!.summary.fleet.costUsd < j.variants[2]!.summary.fleet.costUsd);
});

test('formatCommand quotes what a shell would split or expand', () => {
  assert.equal(formatCommand(['compare', '--variant', 'jsq:routing.policy=jsq']), 'node bin/llmfleet.js compare --variant jsq:routing.policy=jsq');
  assert.equal(formatCommand(['--set', "a={x: 1}", "it's"]), `node bin/llmfleet.js --set 'a={x: 1}' 'it'\\''s'`);
  // Run from another folder, the file arguments are relative to it: the command goes there first.
  assert.equal(formatCommand(['simulate', '--scenario', 's.yaml'], '/opt/llmfleet/bin/llmfleet.js', '/home/me/my runs'), `cd '/home/me/my runs' && node /opt/llmfleet/bin/llmfleet.js simulate --scenario s.yaml`);
  assert.equal(formatCommand(['simulate'], '/opt/llmfleet/bin/llmfleet.js', '/opt/llmfleet'), 'node bin/llmfleet.js simulate');
});

test('variants that change the seed, workload or SLO are described per variant: header, arrivals, SLO lines', async () => {
  const [a, b] = cmp.results;
  const other = {
    ...b!,
    digest: {
      ...b!.digest,
      summary: { ...b!.digest.summary, seed: 9, slo: { ...b!.digest.summary.slo, ttftS: 0.3 } },
      workload: 'another',
      timeline: b!.digest.timeline.map((p) => ({ ...p, arrivalsPerS: p.arrivalsPerS + 1 })),
    },
  };
  const runs = [a!, other].map((r) => ({ name: r.name, digest: r.digest }));
  const charts = reportCharts(runs);
  const ttft = charts.find((c) => c.id === 'ttft-cdf')!;
  assert.doesNotMatch(ttft.caption, /dashed line: the SLO/, 'no single TTFT target to draw');
  assert.match(charts.find((c) => c.id === 'tpot-cdf')!.caption, /dashed line: the SLO/, 'the TPOT target is shared');
  assert.match(charts.find((c) => c.id === 'arrivals-capacity')!.caption, /each variant's request arrival rate/);
  const same = reportCharts(cmp.results.map((r) => ({ name: r.name, digest: r.digest })));
  assert.match(same.find((c) => c.id === 'arrivals-capacity')!.caption, /the same workload for every variant/);
  const html = await buildComparisonReport(cmp.setup, [a!, other], 'x');
  assert.match(html, new RegExp(`seed ${a!.name}: ${a!.digest.summary.seed}, ${other.name}: 9`));
  assert.match(html, /TTFT ≤ 0\.3 s/);
});

test('a single run where nothing completed shows – in its latency table, not 0.0 ms; no tier misses: a 0–1 % axis', async () => {
  const r = cmp.results[0]!;
  const none = { ...r.digest, summary: { ...r.digest.summary, requests: { ...r.digest.summary.requests, completed: 0 }, tpot: { ...r.digest.summary.tpot, count: 0 } } };
  const html = await renderReportHtml({ kind: 'run', scenarioName: 's', seed: 1, command: 'x', scenarioYaml: '', variants: [], runs: [{ name: 'run', digest: none }] });
  const latency = html.match(/<table class="latency">[\s\S]*?<\/table>/)![0];
  assert.doesNotMatch(latency, /0\.0 ms/);
  assert.equal((latency.match(/<td class="num">–<\/td>/g) ?? []).length, 16);
  const perfect = { ...r.digest, summary: { ...r.digest.summary, tiers: Object.fromEntries(Object.entries(r.digest.summary.tiers ?? {}).map(([k, b]) => [k, { ...b, slo: { ...b.slo, attainment: 1 } }])) } };
  const tier = reportCharts([{ name: 'run', digest: perfect }]).find((c) => c.id === 'tier-violations')!;
  assert.match(tier.caption, /Every request met its tier’s SLO/);
  assert.deepEqual((tier.spec as { encoding: { y: { scale?: unknown } } }).encoding.y.scale, { domain: [0, 0.01] });
});

test('variants named like Object.prototype members render (vega 6 failed on a sort list holding "constructor": compare wrote nothing)', async () => {
  const names = ['constructor', 'toString', 'valueOf'];
  const renamed = cmp.results.map((r, i) => ({ ...r, name: names[i]! }));
  const html = await buildComparisonReport(cmp.setup, renamed, 'x');
  assertChartsRendered(html, ['ttft-cdf', 'tpot-cdf', 'e2e-cdf', 'arrivals-capacity', 'instances-by-state', 'kv-utilization', 'queue-length', 'cost-vs-slo', 'tier-violations']);
  // The variants keep their order: the legend and the faceted rows list them as given.
  const legend = [...html.matchAll(/>(constructor|toString|valueOf)</g)].map((m) => m[1]);
  assert.deepEqual(legend.slice(0, 3), names);
});

test('the notes and drop reasons of a run are in the page, as the CLI prints them', async () => {
  const r = cmp.results[0]!;
  const s = r.digest.summary;
  const dropped = { ...r.digest, summary: { ...s, requests: { ...s.requests, dropped: 3000, dropReasons: { 'no-instance': 3000 } }, notes: ['endS = 60 s: 5 requests of the workload arrive after it'] } };
  const html = await renderReportHtml({ kind: 'run', scenarioName: 's', seed: 1, command: 'x', scenarioYaml: '', variants: [], runs: [{ name: 'run', digest: dropped }] });
  assert.match(html, /<ul class="notes"><li>dropped 3,000 \(no-instance\)<\/li><li>endS = 60 s: 5 requests of the workload arrive after it<\/li><\/ul>/);
  assert.match(html, /3,000 dropped/);
});

test('a series that is 0 throughout gets the axis 0–1 (vega drew it mid-height with one "0.000000" tick); equal costs get a spread', () => {
  const r = cmp.results[0]!;
  const idle = { ...r.digest, timeline: r.digest.timeline.map((p) => ({ ...p, queued: 0, kvUtilization: 0 })) };
  const charts = reportCharts([{ name: 'run', digest: idle }]);
  for (const id of ['queue-length', 'kv-utilization']) {
    assert.deepEqual((charts.find((c) => c.id === id)!.spec as { encoding: { y: { scale?: unknown } } }).encoding.y.scale, { domain: [0, 1] }, id);
  }
  const busy = reportCharts([{ name: 'run', digest: r.digest }]).find((c) => c.id === 'kv-utilization')!;
  assert.equal((busy.spec as { encoding: { y: { scale?: unknown } } }).encoding.y.scale, undefined);
  const same = { ...r.digest, summary: { ...r.digest.summary, fleet: { ...r.digest.summary.fleet, costUsd: 1.14 } } };
  const pair = reportCharts([{ name: 'a', digest: same }, { name: 'b', digest: same }]).find((c) => c.id === 'cost-vs-slo')!;
  const x = (pair.spec as { layer: { encoding: { x: { scale: { domain?: number[] } } } }[] }).layer[0]!.encoding.x.scale.domain!;
  assert.ok(Math.abs(x[0]! - 1.026) < 1e-9 && Math.abs(x[1]! - 1.254) < 1e-9, String(x));
});

test('no dashed SLO line on the TTFT/TPOT CDFs when attainment is judged on E2E per output token; the header range is shortest–longest', async () => {
  const [a, b] = cmp.results;
  const norm = (r: VariantResult) => ({ name: r.name, digest: { ...r.digest, summary: { ...r.digest.summary, slo: { ...r.digest.summary.slo, normalizedE2eS: 0.2 } } } });
  for (const c of reportCharts([norm(a!)]).filter((c) => c.id.endsWith('-cdf'))) assert.doesNotMatch(c.caption, /dashed line/, c.id);
  const long = { ...b!, digest: { ...b!.digest, summary: { ...b!.digest.summary, sim: { ...b!.digest.summary.sim, simulatedSeconds: 30 } } } };
  const html = await buildComparisonReport(cmp.setup, [a!, long], 'x');
  assert.match(html, new RegExp(`30\\.0 s–${(a!.digest.summary.sim.simulatedSeconds / 60).toFixed(1)} min simulated`));
});
