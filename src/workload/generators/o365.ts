import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import { openTrace } from '../trace.ts';
import type { RequestSource, TraceRequest } from '../types.ts';
import { fitEmpirical, type EmpiricalLengths } from './lengths.ts';
import { bundledPath } from '../../util/paths.ts';

/**
 * An O365-like week (SageServe, digest §4): 3 US regions × 4 models × 3 tiers (IW-F, IW-N, NIW). The real
 * traces are not public; every number below is either the digest's workload facts or, where the paper gives
 * only a shape, our choice (marked [infer]).
 *
 * Arrivals: one non-homogeneous Poisson stream per (model, region, tier), with a piecewise-constant rate per
 * minute: rate = mean × tierShare × modelShare × regionShare × shape(t) × minuteNoise. Within a minute the
 * gaps are exponential (exact for a constant rate), the stream of each arrival is drawn by its rate share.
 *
 * - Scale: 10 M requests/day in production (digest §4) ⇒ `meanRequestsPerS` 115.7 over the week; scenarios
 *   scale it down (say so next to their numbers).
 * - Tier mix (Jul 2025): IW-F + IW-N = 72 % of requests, IW-F the largest ⇒ 42 % / 30 % / NIW 28 % [split infer].
 *   `epoch: 'nov2024'` gives IW : NIW = 3 : 1 with no IW-F / IW-N split (all IW labelled iw-n).
 * - Diurnal IW with weekday/weekend periodicity; every region peaks at the same time (no time-zone shift);
 *   peak 15:00 trace time [infer], amplitude 0.85 (IW-F) / 0.7 (IW-N) [infer]; weekends at 30 % / 40 % of a
 *   weekday [infer]. IW-N grows across the weekdays (+6 % per day Mon → Fri) [infer size].
 * - NIW flat over the week, no periodicity, noisier (minute σ 0.5 vs 0.25 IW-F, 0.15 IW-N: "IW-F varies more
 *   than IW-N"), West US negligible (2 %).
 * - Regions: East > Central > West (45 / 32 / 23 %) [infer sizes]; model A (llama2-70b) IW-F East 4× West
 *   (60 / 25 / 15 %); model B (bloom-176b) IW-F peaks in Central, IW-N in West.
 * - Model mix 35 / 20 / 25 / 20 % for A / B / C / D [infer: the paper gives no per-model volumes].
 * - Lengths: (input, output) pairs sampled from the bundled Azure LLM inference traces 2023 — conversation for
 *   IW, code for NIW (longer prompts) — so most prompts are > 1k tokens and most outputs < 1k. Model C
 *   (llama-3.1-8b) NIW in Central has 4× the input tokens (the evaluation app), capped at `maxInputTokens`.
 * - Deadlines (digest §2.2): IW-F arrival + 1 s, IW-N + 60 s (TTFT SLAs), NIW + 24 h.
 * - Optional bursts raise the IW rate by a factor (the paper's burst test goes up to 8×).
 */
export interface O365Options {
  /** Seconds of the week generated: [startS, startS + durationS); arrivals are re-based to start at 0. */
  startS: number;
  durationS: number;
  /** Day of the week at t = 0 (0 = Monday). */
  startDay: number;
  meanRequestsPerS: number;
  epoch: 'jul2025' | 'nov2024';
  /** Only these models / regions are generated (their rates are not re-normalised: a subset is a slice). */
  models?: readonly string[];
  regions?: readonly string[];
  bursts: readonly { startS: number; durationS: number; factor: number }[];
  maxInputTokens: number;
}

export const O365_MODELS = ['llama2-70b', 'bloom-176b', 'llama3.1-8b', 'llama3.2-3b'] as const;
export const O365_REGIONS = ['east', 'central', 'west'] as const;
export const O365_TIERS = ['iw-f', 'iw-n', 'niw'] as const;
export const O365_DEADLINE_S: Record<string, number> = { 'iw-f': 1, 'iw-n': 60, niw: 86_400 };

export const O365_DEFAULTS: O365Options = {
  startS: 0,
  durationS: 7 * 86_400,
  startDay: 0,
  meanRequestsPerS: 10e6 / 86_400,
  epoch: 'jul2025',
  bursts: [],
  maxInputTokens: 16_000,
};

const MODEL_SHARE: Record<string, number> = { 'llama2-70b': 0.35, 'bloom-176b': 0.2, 'llama3.1-8b': 0.25, 'llama3.2-3b': 0.2 };
const REGION_DEFAULT = { east: 0.45, central: 0.32, west: 0.23 };
const NIW_REGION = { east: 0.55, central: 0.43, west: 0.02 };

function regionShare(model: string, tier: string): Record<string, number> {
  if (tier === 'niw') return NIW_REGION;
  if (model === 'llama2-70b' && tier === 'iw-f') return { east: 0.6, central: 0.25, west: 0.15 };
  if (model === 'bloom-176b' && tier === 'iw-f') return { east: 0.35, central: 0.45, west: 0.2 };
  if (model === 'bloom-176b' && tier === 'iw-n') return { east: 0.3, central: 0.25, west: 0.45 };
  return REGION_DEFAULT;
}

const TIER = {
  'iw-f': { amplitude: 0.85, weekend: 0.3, growth: 0, noise: 0.25 },
  'iw-n': { amplitude: 0.7, weekend: 0.4, growth: 0.06, noise: 0.15 },
  niw: { amplitude: 0, weekend: 1, growth: 0, noise: 0.5 },
} as const;
const PEAK_HOUR = 15;

function tierShares(epoch: O365Options['epoch']): Record<string, number> {
  return epoch === 'nov2024' ? { 'iw-f': 0, 'iw-n': 0.75, niw: 0.25 } : { 'iw-f': 0.42, 'iw-n': 0.3, niw: 0.28 };
}

/** Unnormalised shape of a tier at time-of-week `t` (seconds since Monday 00:00). */
function rawShape(tier: keyof typeof TIER, t: number): number {
  const p = TIER[tier];
  const day = Math.floor(t / 86_400) % 7;
  const hour = (t % 86_400) / 3600;
  const weekend = day >= 5;
  const dayFactor = weekend ? p.weekend : 1 + p.growth * day;
  return dayFactor * (1 + p.amplitude * Math.cos((2 * Math.PI * (hour - PEAK_HOUR)) / 24));
}

/** Week-average of each tier's raw shape (minute resolution), so `meanRequestsPerS` is the week mean. */
const SHAPE_MEAN: Record<string, number> = Object.fromEntries(
  O365_TIERS.map((tier) => {
    let s = 0;
    for (let m = 0; m < 7 * 1440; m++) s += rawShape(tier, m * 60 + 30);
    return [tier, s / (7 * 1440)];
  }),
);

/** The noiseless rate (requests/s) of one stream at trace time `t` (seconds since the week's start). */
export function o365Rate(o: O365Options, model: string, region: string, tier: (typeof O365_TIERS)[number], t: number): number {
  const share = tierShares(o.epoch)[tier]! * (MODEL_SHARE[model] ?? 0) * (regionShare(model, tier)[region] ?? 0);
  let r = (o.meanRequestsPerS * share * rawShape(tier, t + o.startDay * 86_400)) / SHAPE_MEAN[tier]!;
  if (tier !== 'niw') for (const b of o.bursts) if (t >= b.startS && t < b.startS + b.durationS) r *= b.factor;
  return r;
}

const DATA = bundledPath('data/azure-llm/');
let cachedLengths: { conv: EmpiricalLengths; code: EmpiricalLengths } | null = null;
function azureLengths() {
  cachedLengths ??= {
    conv: fitEmpirical(openTrace(resolve(DATA, 'AzureLLMInferenceTrace_conv.csv'), 'azure')),
    code: fitEmpirical(openTrace(resolve(DATA, 'AzureLLMInferenceTrace_code.csv'), 'azure')),
  };
  return cachedLengths;
}

interface Stream {
  model: string;
  region: string;
  tier: (typeof O365_TIERS)[number];
}

/** The O365-like workload as a re-iterable source (same requests on every pass for the same rng). */
export function o365(options: Partial<O365Options>, rng: Rng): RequestSource {
  const o: O365Options = { ...O365_DEFAULTS, ...options };
  if (!(o.durationS > 0 && o.startS >= 0 && o.meanRequestsPerS > 0)) {
    throw new UserError(`o365: expected durationS > 0, startS ≥ 0, meanRequestsPerS > 0, got ${o.durationS}, ${o.startS}, ${o.meanRequestsPerS}`);
  }
  for (const m of o.models ?? []) if (!(O365_MODELS as readonly string[]).includes(m)) throw new UserError(`o365: unknown model '${m}'; valid: ${O365_MODELS.join(', ')}`);
  for (const r of o.regions ?? []) if (!(O365_REGIONS as readonly string[]).includes(r)) throw new UserError(`o365: unknown region '${r}'; valid: ${O365_REGIONS.join(', ')}`);
  const streams: Stream[] = [];
  for (const model of o.models ?? O365_MODELS) for (const region of o.regions ?? O365_REGIONS) for (const tier of O365_TIERS) streams.push({ model, region, tier });
  const lengths = azureLengths();
  return {
    *[Symbol.iterator]() {
      const arr = rng.fork('arrivals');
      const noise = rng.fork('noise');
      const len = rng.fork('lengths');
      const rates = new Float64Array(streams.length);
      let id = 0;
      const end = o.startS + o.durationS;
      for (let m0 = Math.floor(o.startS / 60) * 60; m0 < end; m0 += 60) {
        let total = 0;
        for (let s = 0; s < streams.length; s++) {
          const st = streams[s]!;
          const sigma = TIER[st.tier].noise;
          const z = noise.normal();
          rates[s] = o365Rate(o, st.model, st.region, st.tier, m0 + 30) * Math.exp(sigma * z - (sigma * sigma) / 2);
          total += rates[s]!;
        }
        if (total <= 0) continue;
        let t = Math.max(m0, o.startS);
        const stop = Math.min(m0 + 60, end);
        for (;;) {
          t += arr.exponential(total);
          if (t >= stop) break;
          let u = arr.next() * total;
          let s = 0;
          while (s < streams.length - 1 && u >= rates[s]!) u -= rates[s++]!;
          const st = streams[s]!;
          const pairs = st.tier === 'niw' ? lengths.code : lengths.conv;
          const i = len.int(pairs.inputs.length);
          let input = pairs.inputs[i]!;
          if (st.tier === 'niw' && st.model === 'llama3.1-8b' && st.region === 'central') input *= 4;
          input = Math.min(input, o.maxInputTokens);
          const arrivalS = t - o.startS;
          const req: TraceRequest = {
            id: id++, arrivalS, inputTokens: Math.max(1, input), outputTokens: Math.max(1, pairs.outputs[i]!),
            model: st.model, tier: st.tier, region: st.region, app: st.tier === 'niw' ? 'batch' : 'interactive',
            deadlineS: arrivalS + O365_DEADLINE_S[st.tier]!,
          };
          yield req;
        }
      }
    },
  };
}

/** Named slices the scenarios use. `peak-day`: Tuesday (the code's plotting window [86400, 172800) s). */
export const O365_PRESETS: Record<string, Partial<O365Options>> = {
  'peak-day': { startS: 86_400, durationS: 86_400, models: ['llama2-70b'] },
  /** The peak day with IW raised 8× for 40 min from 06:30 (a quiet hour, so 8× stays near the day's peak). */
  'peak-day-burst': { startS: 86_400, durationS: 86_400, models: ['llama2-70b'], bursts: [{ startS: 86_400 + 6.5 * 3600, durationS: 2400, factor: 8 }] },
  /** The peak day with all four models. */
  'peak-day-mix': { startS: 86_400, durationS: 86_400 },
  week: { startS: 0, durationS: 7 * 86_400 },
};

/**
 * Appends text to a new file in chunks of about `chunkChars` characters (default 1 Mi): what is buffered is
 * never more than one chunk and a line, so a trace of any size (the full-scale peak day is ≈ 11.5 M rows,
 * 725 MB) is written without holding it in memory. `flushes` counts the chunks written.
 */
export class ChunkedFileWriter {
  private readonly fd: number;
  private buf = '';
  flushes = 0;

  constructor(path: string, private readonly chunkChars = 1 << 20) {
    this.fd = openSync(path, 'w');
  }

  write(text: string): void {
    this.buf += text;
    if (this.buf.length >= this.chunkChars) this.flush();
  }

  flush(): void {
    if (this.buf === '') return;
    const bytes = Buffer.from(this.buf, 'utf8');
    this.buf = '';
    for (let off = 0; off < bytes.length; ) off += writeSync(this.fd, bytes, off);
    this.flushes++;
  }

  /** Writes what is left and closes the file (the file is closed even when that write fails). */
  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }
}

/**
 * Writes the workload as a canonical CSV (the `csv` trace format) and returns the number of rows. Rows are
 * streamed to the file through a `ChunkedFileWriter` (`chunkChars` for tests), never joined into one string.
 */
export function writeO365Csv(path: string, options: Partial<O365Options>, seed: number, chunkChars?: number): number {
  mkdirSync(dirname(path), { recursive: true });
  const out = new ChunkedFileWriter(path, chunkChars);
  let n = 0;
  try {
    out.write('arrival_s,input_tokens,output_tokens,model,tier,region,app,deadline_s\n');
    for (const r of o365(options, new Rng(seed).fork('o365'))) {
      out.write(`${r.arrivalS.toFixed(4)},${r.inputTokens},${r.outputTokens},${r.model},${r.tier},${r.region},${r.app},${r.deadlineS!.toFixed(4)}\n`);
      n++;
    }
  } finally {
    out.close();
  }
  return n;
}

// `node --import tsx src/workload/generators/o365.ts PRESET OUT.csv [SCALE] [SEED]`: writes a trace file the
// scenarios read (scenarios/sageserve-*.yaml say which). SCALE multiplies the production rate (default 1).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [preset, out, scale = '1', seed = '1'] = process.argv.slice(2);
  const p = preset ? O365_PRESETS[preset] : undefined;
  if (!p || !out || !(Number(scale) > 0) || !Number.isInteger(Number(seed))) {
    console.error(`usage: o365.ts PRESET OUT.csv [SCALE] [SEED]; presets: ${Object.keys(O365_PRESETS).join(', ')}`);
    process.exitCode = 2;
  } else {
      const n = writeO365Csv(resolve(out), { ...p, meanRequestsPerS: O365_DEFAULTS.meanRequestsPerS * Number(scale) }, Number(seed));
    console.error(`wrote ${n} requests to ${out}`);
  }
}
