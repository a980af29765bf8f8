import type { TopLevelSpec } from 'vega-lite';
import type { RunDigest, TimelinePoint } from './digest.ts';
import { paretoFrontier } from './pareto.ts';
import { costSloPoint } from './table.ts';

/** One run as a report shows it: a variant name and its digest. */
export interface ReportRun {
  name: string;
  digest: RunDigest;
}

/** A chart: a stable id (the figure's anchor), a caption and its vega-lite spec. */
export interface ChartSpec {
  id: string;
  title: string;
  caption: string;
  spec: TopLevelSpec;
}

const WIDTH = 520;
const HEIGHT = 220;
/** Tableau 10: readable on white, distinguishable for the common colour-vision deficiencies up to ~6 series. */
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const STATE_COLORS = { provisioning: '#edc948', ready: '#59a14f', draining: '#e15759' } as const;
const CONFIG = { font: 'sans-serif', background: 'white', axis: { labelFontSize: 11, titleFontSize: 11 }, legend: { labelFontSize: 11 } };

/**
 * The report's charts for one or more runs, in display order. Latency CDFs, arrivals vs capacity,
 * instances by state, KV utilisation and queue length always; cost vs SLO (Pareto frontier marked) when
 * there are at least two runs; per-tier SLO violations when any run has tiers.
 */
export function reportCharts(runs: readonly ReportRun[]): ChartSpec[] {
  const names = runs.map((r) => r.name);
  const color = colorEncoding(names);
  const time = timeAxis(runs);
  // An SLO line only where every run has the same target (a variant may change it) and attainment is judged on it:
  // not under slo.normalizedE2eS (E2E per output token). With tiers it is the untiered target.
  const shared = (pick: (s: ReportRun['digest']['summary']['slo']) => number): SloLine | undefined => {
    if (runs.some((r) => r.digest.summary.slo.normalizedE2eS !== undefined)) return undefined;
    const v = [...new Set(runs.map((r) => pick(r.digest.summary.slo)))];
    const tiered = runs.some((r) => r.digest.summary.tiers && Object.keys(r.digest.summary.tiers).length > 0);
    return v.length === 1 ? { s: v[0]!, what: tiered ? 'the SLO of untiered requests (each tier is judged on its own)' : 'the SLO' } : undefined;
  };
  const charts: ChartSpec[] = [
    cdfChart('ttft-cdf', 'TTFT', 'time to first token', runs, (d) => d.cdf.ttft, color, shared((s) => s.ttftS)),
    cdfChart('tpot-cdf', 'TPOT', 'time per output token after the first', runs, (d) => d.cdf.tpot, color, shared((s) => s.tpotS), tpotMissing, 'fraction of requests with 2+ output tokens'),
    cdfChart('e2e-cdf', 'E2E', 'end-to-end latency', runs, (d) => d.cdf.e2e, color, undefined),
    arrivalsChart(runs, color, time),
    instancesChart(runs, time),
    lineChart('kv-utilization', 'KV cache utilisation', 'Mean KV-block utilisation over serving instances', runs, color, time, (p) => p.kvUtilization, 'KV used', '%'),
    lineChart('queue-length', 'Queue length', 'Requests waiting in engine queues plus requests the router deferred', runs, color, time, (p) => p.queued, 'queued requests', ''),
  ];
  if (runs.length >= 2) charts.push(costSloChart(runs, color));
  if (runs.some((r) => r.digest.summary.tiers && Object.keys(r.digest.summary.tiers).length > 0)) charts.push(tierChart(runs, color));
  return charts;
}

type ColorEnc = Record<string, unknown>;

/** A CDF's dashed target line: seconds, and what it is. */
interface SloLine {
  s: number;
  what: string;
}

function colorEncoding(names: readonly string[]): ColorEnc {
  return {
    field: 'variant',
    type: 'nominal',
    title: 'variant',
    // No `sort: names`: the domain already orders the legend, and vega-lite compiles a sort array into a formula
    // comparing with each name, which vega 6 fails to parse for a name such as "constructor" or "toString".
    scale: { domain: names, range: names.map((_, i) => PALETTE[i % PALETTE.length]) },
    legend: names.length > 1 ? { orient: 'bottom', columns: 4 } : null,
  };
}

interface TimeAxis {
  div: number;
  title: string;
  /** Spread into every axis of the time charts: a fixed domain when no run has a timeline interval (a zero-length run), else nothing. */
  scale: { scale?: { domain: [number, number] } };
}

function timeAxis(runs: readonly ReportRun[]): TimeAxis {
  const span = Math.max(0, ...runs.flatMap((r) => r.digest.timeline.map((p) => p.tS)));
  // vega labels an axis with no data "NaN to NaN"; give it a domain instead.
  const scale = runs.every((r) => r.digest.timeline.length === 0) ? { scale: { domain: [0, 1] as [number, number] } } : {};
  return span <= 3 * 3600 ? { div: 60, title: 'time (min)', scale } : { div: 3600, title: 'time (h)', scale };
}

/** Why a run has no point in a latency CDF: nothing completed. */
const NONE_COMPLETED = 'no request completed';

/** Why a run has no TPOT: nothing completed, or every completed request had one output token (no time between tokens). */
function tpotMissing(d: RunDigest): string {
  return d.summary.requests.completed === 0 ? NONE_COMPLETED : 'every completed request had a single output token (no time between tokens)';
}

function cdfChart(
  id: string,
  metric: string,
  what: string,
  runs: readonly ReportRun[],
  pick: (d: RunDigest) => { valueS: number; fraction: number }[],
  color: ColorEnc,
  slo: SloLine | undefined,
  missing: (d: RunDigest) => string = () => NONE_COMPLETED,
  yTitle = 'fraction of completed requests',
): ChartSpec {
  const rows = runs.flatMap((r) => pick(r.digest).map((p) => ({ variant: r.name, valueS: p.valueS, fraction: p.fraction })));
  const positive = rows.filter((r) => r.valueS > 0).map((r) => r.valueS);
  const lo = positive.length ? Math.min(...positive) : 0;
  const hi = positive.length ? Math.max(...positive) : 0;
  // Latencies often span 3+ decades (20 ms to 60 s); a log axis keeps both ends readable.
  const log = lo > 0 && hi / lo > 100;
  const values = log ? rows.filter((r) => r.valueS > 0) : rows;
  const layer: Record<string, unknown>[] = [
    {
      data: { values },
      mark: { type: 'line', strokeWidth: 2 },
      encoding: {
        // With no completed request the axis needs a domain of its own (vega would label it NaN to NaN).
        x: { field: 'valueS', type: 'quantitative', title: `${metric} (s${log ? ', log scale' : ''})`, scale: log ? { type: 'log' } : rows.length ? { zero: true } : { domain: [0, 1] } },
        y: { field: 'fraction', type: 'quantitative', title: yTitle, axis: { format: '%' }, scale: { domain: [0, 1] } },
        color,
      },
    },
  ];
  if (slo !== undefined) {
    layer.push({
      data: { values: [{ slo: slo.s }] },
      mark: { type: 'rule', strokeDash: [5, 4], color: '#555' },
      encoding: { x: { field: 'slo', type: 'quantitative' } },
    });
  }
  return {
    id,
    title: `${metric} CDF`,
    caption: rows.length
      ? `Distribution of ${what} over completed requests${slo !== undefined ? `; dashed line: ${slo.what} (${slo.s} s)` : ''}.${noLine(runs, pick, missing)}`
      : `${emptyReason(runs, missing)}, so there is no distribution of ${what}.`,
    spec: { config: CONFIG, width: WIDTH, height: HEIGHT, layer } as unknown as TopLevelSpec,
  };
}

/** Why no run has a point: "No request completed", or each run's own reason where they differ. */
function emptyReason(runs: readonly ReportRun[], missing: (d: RunDigest) => string): string {
  const reasons = runs.map((r) => missing(r.digest));
  const text = new Set(reasons).size <= 1 ? (reasons[0] ?? NONE_COMPLETED) : runs.map((r, i) => `${r.name}: ${reasons[i]}`).join('; ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** For a chart with lines: the runs that have none, and why (e.g. a variant whose requests all had one output token). */
function noLine(runs: readonly ReportRun[], pick: (d: RunDigest) => unknown[], missing: (d: RunDigest) => string): string {
  const empty = runs.filter((r) => pick(r.digest).length === 0);
  return empty.length === 0 ? '' : ` No line for ${empty.map((r) => `${r.name}: ${missing(r.digest)}`).join('; ')}.`;
}

/**
 * A value axis's scale: vega draws a series that is 0 throughout at mid-height with a single "0.000000" tick (it
 * read as a few requests per second), so such an axis gets the domain [0, 1]; otherwise the time charts' own.
 */
function valueScale(values: readonly number[], time: TimeAxis): TimeAxis['scale'] {
  return values.length > 0 && values.every((v) => v === 0) ? { scale: { domain: [0, 1] } } : time.scale;
}

/**
 * A scatter axis over these values, padded; where they are all equal (vega then drew one tick, "1.140000"), ±10 %
 * around the value (±0.01 around 0), within [floor, ceil].
 */
function scatterScale(values: readonly number[], floor: number, ceil = Infinity): Record<string, unknown> {
  const v = values[0];
  if (v === undefined || values.some((x) => x !== v)) return { zero: false, padding: 20 };
  const half = Math.abs(v) * 0.1 || 0.01;
  return { domain: [Math.max(floor, v - half), Math.min(ceil, v + half)] };
}

function timeRows(runs: readonly ReportRun[], time: TimeAxis, pick: (p: TimelinePoint) => number) {
  return runs.flatMap((r) => r.digest.timeline.map((p) => ({ variant: r.name, t: p.tS / time.div, y: pick(p) })));
}

function arrivalsChart(runs: readonly ReportRun[], color: ColorEnc, time: TimeAxis): ChartSpec {
  const first = runs[0];
  // Variants share one workload unless one changed the seed or the workload: then each run's arrivals are drawn.
  const same = runs.every((r) => r.digest.workload === first!.digest.workload);
  const arrivals = same && first ? first.digest.timeline.map((p) => ({ t: p.tS / time.div, rate: p.arrivalsPerS })) : [];
  const x = { field: 't', type: 'quantitative', title: time.title, ...time.scale };
  const rate = { field: 'rate', type: 'quantitative', title: 'arrivals (req/s)', ...valueScale(runs.flatMap((r) => r.digest.timeline.map((p) => p.arrivalsPerS)), time) };
  const serving = timeRows(runs, time, (p) => p.ready + p.draining);
  return {
    id: 'arrivals-capacity',
    title: 'Arrivals vs capacity',
    caption: same
      ? `Grey area: request arrival rate (left axis${runs.length > 1 ? ', the same workload for every variant' : ''}). Lines: serving instances, ready or draining (right axis).`
      : "Dashed lines: each variant's request arrival rate (left axis; the variants' workloads differ). Solid lines: serving instances, ready or draining (right axis).",
    spec: {
      config: CONFIG,
      width: WIDTH,
      height: HEIGHT,
      layer: [
        same
          ? { data: { values: arrivals }, mark: { type: 'area', color: '#c7c7c7', interpolate: 'step-before' }, encoding: { x, y: rate } }
          : {
              data: { values: runs.flatMap((r) => r.digest.timeline.map((p) => ({ variant: r.name, t: p.tS / time.div, rate: p.arrivalsPerS }))) },
              mark: { type: 'line', interpolate: 'step-before', strokeDash: [4, 3], strokeWidth: 1 },
              encoding: { x, y: rate, color },
            },
        {
          data: { values: serving },
          mark: { type: 'line', interpolate: 'step-before', strokeWidth: 2 },
          encoding: { x, y: { field: 'y', type: 'quantitative', title: 'serving instances', axis: { orient: 'right' }, ...valueScale(serving.map((v) => v.y), time) }, color },
        },
      ],
      resolve: { scale: { y: 'independent' } },
    } as TopLevelSpec,
  };
}

function instancesChart(runs: readonly ReportRun[], time: TimeAxis): ChartSpec {
  const states = Object.keys(STATE_COLORS) as (keyof typeof STATE_COLORS)[];
  // `run`: the variants' order, sorted by field rather than by a list of names (see colorEncoding).
  const values = runs.flatMap((r, run) =>
    r.digest.timeline.flatMap((p) => states.map((state, order) => ({ variant: r.name, run, t: p.tS / time.div, state, order, count: p[state] }))),
  );
  const inner = {
    mark: { type: 'area', interpolate: 'step-before' },
    encoding: {
      x: { field: 't', type: 'quantitative', title: time.title, ...time.scale },
      y: { field: 'count', type: 'quantitative', title: 'instances', stack: 'zero', ...valueScale(values.map((v) => v.count), time) },
      color: { field: 'state', type: 'nominal', title: 'state', scale: { domain: states, range: states.map((s) => STATE_COLORS[s]) }, legend: { orient: 'bottom' } },
      order: { field: 'order', type: 'quantitative' },
    },
  };
  const spec =
    runs.length > 1
      ? {
          config: CONFIG,
          data: { values },
          facet: { row: { field: 'variant', type: 'nominal', title: null, sort: { field: 'run', op: 'min' } } },
          spec: { width: WIDTH, height: 80, ...inner },
        }
      : { config: CONFIG, width: WIDTH, height: HEIGHT, data: { values }, ...inner };
  return {
    id: 'instances-by-state',
    title: 'Instances by state',
    caption: 'Instances provisioning, ready and draining (stacked; each step is the count sampled at the end of its interval, or the time-weighted mean of those samples where intervals are merged for drawing).',
    spec: spec as TopLevelSpec,
  };
}

function lineChart(
  id: string,
  title: string,
  caption: string,
  runs: readonly ReportRun[],
  color: ColorEnc,
  time: TimeAxis,
  pick: (p: TimelinePoint) => number,
  yTitle: string,
  format: string,
): ChartSpec {
  const values = timeRows(runs, time, pick);
  return {
    id,
    title,
    caption: `${caption}.`,
    spec: {
      config: CONFIG,
      width: WIDTH,
      height: HEIGHT,
      data: { values },
      mark: { type: 'line', interpolate: 'step-before', strokeWidth: 1.5 },
      encoding: {
        x: { field: 't', type: 'quantitative', title: time.title, ...time.scale },
        y: { field: 'y', type: 'quantitative', title: yTitle, ...(format ? { axis: { format } } : {}), ...valueScale(values.map((v) => v.y), time) },
        color,
      },
    } as TopLevelSpec,
  };
}

function costSloChart(runs: readonly ReportRun[], color: ColorEnc): ChartSpec {
  const pts = runs.map((r) => costSloPoint(r.digest.summary));
  const front = paretoFrontier(pts);
  const onFront = new Set(front);
  const values = runs.map((r, i) => ({ variant: r.name, cost: pts[i]!.costUsd, slo: pts[i]!.attainment, frontier: onFront.has(i) ? 'Pareto frontier' : 'dominated' }));
  const frontier = front.map((i, order) => ({ cost: pts[i]!.costUsd, slo: pts[i]!.attainment, order }));
  const x = { field: 'cost', type: 'quantitative', title: 'cost (USD)', scale: scatterScale(pts.map((p) => p.costUsd), 0) };
  const y = { field: 'slo', type: 'quantitative', title: 'SLO attainment', axis: { format: '%' }, scale: scatterScale(pts.map((p) => p.attainment), 0, 1) };
  return {
    id: 'cost-vs-slo',
    title: 'Cost vs SLO attainment',
    caption: 'One point per variant. Diamonds joined by the red line are the Pareto frontier: no other variant is both cheaper and better on SLO (a variant that attains nothing is never on it).',
    spec: {
      config: CONFIG,
      width: WIDTH,
      height: HEIGHT + 40,
      layer: [
        { data: { values: frontier }, mark: { type: 'line', color: '#d62728', strokeWidth: 2 }, encoding: { x, y, order: { field: 'order', type: 'quantitative' } } },
        {
          data: { values },
          mark: { type: 'point', filled: true, size: 140, opacity: 1 },
          encoding: {
            x,
            y,
            color,
            shape: { field: 'frontier', type: 'nominal', title: null, scale: { domain: ['Pareto frontier', 'dominated'], range: ['diamond', 'circle'] }, legend: { orient: 'bottom' } },
          },
        },
        { data: { values }, mark: { type: 'text', align: 'left', dx: 9, dy: -7, fontSize: 11 }, encoding: { x, y, text: { field: 'variant' } } },
      ],
    } as TopLevelSpec,
  };
}

function tierChart(runs: readonly ReportRun[], color: ColorEnc): ChartSpec {
  const values = runs.flatMap((r, run) =>
    Object.entries(r.digest.summary.tiers ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tier, b]) => ({ variant: r.name, run, tier, violation: 1 - b.slo.attainment })),
  );
  const none = values.every((v) => v.violation === 0);
  return {
    id: 'tier-violations',
    title: 'SLO violations per tier',
    caption:
      "Share of each tier's requests that missed their SLO (dropped and unfinished requests count as misses)." +
      (none ? ' Every request met its tier’s SLO: no bars.' : ''),
    spec: {
      config: CONFIG,
      width: WIDTH,
      height: HEIGHT,
      data: { values },
      mark: { type: 'bar' },
      encoding: {
        x: { field: 'tier', type: 'nominal', title: 'tier', axis: { labelAngle: 0 } },
        xOffset: { field: 'variant', type: 'nominal', sort: { field: 'run', op: 'min' } },
        // One bar per (tier, variant) side by side: no stack (vega-lite orders a stack by a formula over the names,
        // which vega 6 fails to parse for "constructor"). All zero: a 0–1 % axis rather than one "0.000000%" label.
        y: { field: 'violation', type: 'quantitative', title: 'requests missing the SLO', stack: null, axis: { format: '%' }, ...(none ? { scale: { domain: [0, 0.01] } } : {}) },
        color,
      },
    } as TopLevelSpec,
  };
}

/**
 * Renders a vega-lite spec to an SVG string headlessly (vega's `renderer: 'none'` path: no canvas, no DOM,
 * no network). Element ids get `idPrefix` so several SVGs can sit inline in one page without their clip
 * paths and gradients colliding.
 */
export async function renderSvg(spec: TopLevelSpec, idPrefix: string): Promise<string> {
  // Loaded on first use: vega costs ~0.3 s to import, which every CLI command would otherwise pay at start.
  const [{ parse, View }, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return prefixIds(await view.toSVG(), idPrefix);
  } finally {
    view.finalize();
  }
}

function prefixIds(svg: string, prefix: string): string {
  const ids = new Set([...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!));
  if (ids.size === 0) return svg;
  return svg.replace(/(\sid="|url\(#|href="#)([^")]+)/g, (all, head: string, id: string) => (ids.has(id) ? `${head}${prefix}${id}` : all));
}
