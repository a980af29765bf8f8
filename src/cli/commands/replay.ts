import { Option, type Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RequestLog, latencyBlock, sloTargetsText, type LatencyBlock } from '../../metrics/collector.ts';
import type { Scenario } from '../../scenario/schema.ts';
import { dist } from '../../metrics/stats.ts';
import { loadScenario } from '../../scenario/load.ts';
import { checkServedModel, firstServedModel, replay, type ReplayResult } from '../../live/replay.ts';
import { parseTimerSecondsFlag } from '../../live/timers.ts';
import { formatAttainment, formatLatency } from '../../report/format.ts';
import { UserError } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import { openWorkload } from '../../workload/schema.ts';
import { TRACE_FORMATS, type TraceRequest } from '../../workload/types.ts';
import { collect, counterProgress, keptTransformsNote, MAX_TIME_SCALE, MIN_TIME_SCALE, nonEmptyFlag, outDirFlag, parseIntFlag, parseTimeScaleFlag, scenarioFlags } from '../util.ts';
import { BACKEND_URL_EXPECTED, backendBaseUrl } from '../../live/gateway/config.ts';
import { csvCell } from '../../util/csv.ts';

interface ReplayFlags {
  url: string;
  scenario?: string;
  set: string[];
  trace?: string;
  traceFormat?: string;
  seed?: string;
  model?: string;
  timeScale: string;
  timeout: string;
  maxInFlight: string;
  ignoreEos: boolean;
  apiKey?: string;
  out: string;
  quiet?: boolean;
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description("Send a scenario's workload to a live OpenAI-compatible server (gateway, vLLM, emulator) in open loop and report client-side latency as simulate does")
    .requiredOption('--url <base>', 'base URL of the server, e.g. http://127.0.0.1:8080 (no /v1; required)')
    .option('--scenario <file>', 'scenario whose workload and SLO are used (default: the bundled scenarios/default.yaml)')
    .option('--set <path=value>', 'override a scenario field, e.g. workload.transforms.limit=500 (repeatable)', collect, [])
    .option('--trace <file>', "replace the scenario's workload source with this trace (its transforms still apply)")
    .addOption(new Option('--trace-format <format>', 'format of --trace (default: detected from the header)').choices([...TRACE_FORMATS]))
    .option('--seed <n>', 'random seed (overrides the scenario; the same seed sends the requests simulate replays)')
    .option('--model <name>', "model field of every request (default: the request's own label, else the first model of /v1/models)")
    .option('--time-scale <x>', `send x× faster and multiply client-side times by x (${MIN_TIME_SCALE} to ${MAX_TIME_SCALE}): for emulators run with the same --time-scale (a real server: keep 1, raise the rate with --set workload.transforms.compress=X)`, '1')
    .option('--timeout <s>', 'wall seconds a request may take', '600')
    .option('--max-in-flight <n>', 'requests in flight beyond which a new one is counted as failed (client-overload), not sent', '10000')
    .option('--no-ignore-eos', "do not send vLLM's ignore_eos (for servers that reject it; outputs may then stop early)")
    .option('--api-key <key>', 'sent as Authorization: Bearer <key> on every request, /v1/models included (default: $OPENAI_API_KEY when set)')
    .option('--out <dir>', 'output folder', 'out/replay')
    .option('--quiet', 'print nothing but errors')
    .action(async (o: ReplayFlags) => {
      const base = baseUrl(o.url);
      const timeScale = parseTimeScaleFlag('--time-scale', o.timeScale);
      // An empty --model sent every request for model '' (each failed at the server; replay exited 0).
      nonEmptyFlag('--model', o.model, 'model name (leave the flag out to ask the server)');
      const timeoutS = parseTimerSecondsFlag('--timeout', o.timeout, 0.001);
      const maxInFlight = parseIntFlag('--max-in-flight', o.maxInFlight, 1);
      if (maxInFlight < 1) throw new UserError(`--max-in-flight: expected an integer ≥ 1, got '${o.maxInFlight}'`);
      const out = outDirFlag('--out', o.out);
      const apiKey = apiKeyFlag(o.apiKey);
      const { scenario, baseDir } = loadScenario(scenarioFlags(o));
      // The same stream of requests `simulate` replays for this scenario and seed.
      const workload = openWorkload(scenario.workload, new Rng(scenario.seed).fork('workload'), baseDir);
      if (o.model !== undefined) await checkServedModel(base, o.model, timeoutS, apiKey);
      const fallbackModel = o.model ?? (await firstServedModel(base, timeoutS, apiKey));
      const modelOf = o.model !== undefined ? () => o.model! : (r: TraceRequest) => r.model ?? fallbackModel;

      const log = new RequestLog();
      const rows: string[] = [];
      let sent = 0;
      let ended = 0;
      const progress = counterProgress(o.quiet ?? false, 'replaying | {sent} sent | {ended} done', { sent, ended });
      const started = performance.now();
      const requests: TraceRequest[] = [];
      let results: ReplayResult[];
      try {
        results = await replay(base, countSent(workload, (r) => (requests.push(r), progress.set({ sent: ++sent }))), {
          timeScale,
          timeoutS,
          maxInFlight,
          ignoreEos: o.ignoreEos,
          apiKey,
          modelOf,
          onResult: () => progress.set({ ended: ++ended }),
        });
      } finally {
        progress.stop();
      }
      // The --trace note once the run is through: a bad trace row or flag is then the run's one line on stderr.
      keptTransformsNote(o, scenario.workload);
      const wallS = (performance.now() - started) / 1000;
      let lastEndS = 0;
      results.forEach((res, i) => {
        const r = requests[i]!;
        const model = modelOf(r);
        if (res.failure === '') {
          log.measured({ ...r, model }, { ttftS: res.ttftS, e2eS: res.e2eS, outputTokens: res.outputTokens });
          lastEndS = Math.max(lastEndS, r.arrivalS + res.lateS + res.e2eS);
        } else log.measured({ ...r, model }, { failed: res.failure });
        rows.push([r.id, r.arrivalS, r.inputTokens, r.outputTokens, csvCell(model), res.status, num(res.ttftS), num(res.e2eS), res.outputTokens, csvCell(res.backend), num(res.lateS), csvCell(res.error)].join(','));
      });
      // With output.warmupS, as in simulate's summary: every figure is over the requests arriving from then on.
      const warmupS = scenario.output.warmupS;
      const measured = (i: number) => requests[i]!.arrivalS >= warmupS;
      const block = latencyBlock(log, scenario.slo, measured);
      // queue time is not observable from a client
      const { queue: _queue, requests: _requests, ...latency } = block;
      const failReasons: Record<string, number> = {};
      let outputTokens = 0;
      results.forEach((res, i) => {
        if (!measured(i)) return;
        if (res.failure !== '') failReasons[res.failure] = (failReasons[res.failure] ?? 0) + 1;
        else outputTokens += res.outputTokens;
      });
      const span = lastEndS - warmupS;
      const late = dist(results.map((res) => res.lateS));
      const summary = {
        scenario: scenario.name,
        seed: scenario.seed,
        url: base,
        timeScale,
        requests: {
          total: block.requests.total,
          completed: block.requests.completed,
          failed: block.requests.dropped,
          failReasons,
          ...(warmupS > 0 ? { warmup: results.length - block.requests.total } : {}),
        },
        ...latency,
        throughput: {
          requestsPerSecond: span > 0 ? block.requests.completed / span : 0,
          outputTokensPerSecond: span > 0 ? outputTokens / span : 0,
        },
        client: { wallSeconds: wallS, sendLatenessS: { p50: late.p50, p99: late.p99 } },
        ...tierBlocks(log, scenario.slo, measured),
      };
      await writeFile(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
      await writeFile(join(out, 'requests.csv'), 'id,arrival_s,input_tokens,output_tokens,model,status,ttft_s,e2e_s,tokens_received,backend,late_s,error\n' + rows.join('\n') + (rows.length ? '\n' : ''));
      if (!o.quiet) {
        const b = block;
        const lines = [
          `replayed ${b.requests.total} requests of ${scenario.name} (seed ${scenario.seed}) against ${base}: ${b.requests.completed} completed, ${b.requests.dropped} failed`,
          ...Object.entries(failReasons).map(([k, v]) => `  failed (${k}): ${v}`),
          ...(warmupS > 0 ? [`  warm-up (output.warmupS): ${results.length - b.requests.total} more sent, left out of every figure here`] : []),
          ...(b.requests.completed > 0
            ? [
                `TTFT p50 ${formatLatency(b.ttft.p50)}, p99 ${formatLatency(b.ttft.p99)}; TPOT ${b.tpot.count > 0 ? `p50 ${formatLatency(b.tpot.p50)}, p99 ${formatLatency(b.tpot.p99)}` : '– (no request had more than one output token)'}; E2E p50 ${formatLatency(b.e2e.p50)}, p99 ${formatLatency(b.e2e.p99)} (client side${timeScale !== 1 ? `, ×${timeScale}` : ''})`,
              ]
            : []),
          `SLO (${sloTargetsText(b.slo)}): ${b.requests.total > 0 ? `${formatAttainment(b.slo.attainment)} attained` : '–'}`,
          `sent late by p99 ${formatLatency(late.p99)}; ${wallS.toFixed(1)} s wall`,
          `wrote ${out}/summary.json, requests.csv`,
        ];
        process.stdout.write(lines.join('\n') + '\n');
      }
    });
}

/** Per-tier latency blocks with each tier's own targets, as simulate's summary has them (none without tiers). */
function tierBlocks(log: RequestLog, slo: Scenario['slo'], measured: (i: number) => boolean): { tiers?: Record<string, Omit<LatencyBlock, 'queue'>> } {
  const names = log.tiers.filter((t) => t !== '').sort();
  if (names.length === 0) return {};
  const tiers: [string, Omit<LatencyBlock, 'queue'>][] = [];
  for (const name of names) {
    const idx = log.tiers.indexOf(name);
    // A tier name comes from the trace: only the scenario's own keys are targets (not `constructor`, `__proto__`).
    const own = Object.hasOwn(slo.tiers, name) ? slo.tiers[name] : undefined;
    const { queue: _unobservable, ...block } = latencyBlock(log, { ...slo, ...own }, (i) => log.tierIdx[i] === idx && measured(i));
    tiers.push([name, block]);
  }
  return { tiers: Object.fromEntries(tiers) };
}

/** The server's base URL (`http(s)://host:port`, as a gateway backend is given): undici's pool takes no path, and a /v1 suffix is the most common slip. */
function baseUrl(raw: string): string {
  const base = backendBaseUrl(raw);
  if (base === undefined) throw new UserError(`--url: expected ${BACKEND_URL_EXPECTED}; requests go to /v1/completions under it; got '${raw}'`);
  return base;
}

function* countSent(src: Iterable<TraceRequest>, onEach: (r: TraceRequest) => void): Generator<TraceRequest> {
  for (const r of src) {
    onEach(r);
    yield r;
  }
}

const num = (v: number) => (Number.isFinite(v) ? String(v) : '');


/**
 * The key `replay` sends (`--api-key`, else $OPENAI_API_KEY; '' sends none), checked before anything is sent: an HTTP
 * header value cannot hold line breaks, control characters or non-ASCII text, and undici refused such a key on every
 * request ("failed (connection)", exit 0), or the model listing blamed --url.
 */
export function apiKeyFlag(flag: string | undefined): string {
  const [key, where] = flag !== undefined ? [flag, '--api-key'] : [process.env.OPENAI_API_KEY ?? '', '$OPENAI_API_KEY'];
  const bad = [...key].findIndex((ch) => ch < ' ' || ch > '~');
  if (bad >= 0) {
    const cp = key.codePointAt(bad)!;
    throw new UserError(`${where}: expected printable ASCII with no line breaks (an HTTP header value), got U+${cp.toString(16).toUpperCase().padStart(4, '0')} at character ${bad + 1}` +
      (cp === 10 || cp === 13 ? ' (a key read from a file with its line ending?)' : ''));
  }
  return key;
}
