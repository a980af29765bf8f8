import { ConfigError, UserError } from '../util/errors.ts';
import { readTextFile } from '../util/read-file.ts';
import { splitCsvLine } from '../workload/fields.ts';
import { percentile } from './stats.ts';

/** How closely the simulator's latency for each request matches the one measured live, over the requests both completed. */
export interface LatencyAgreement {
  /** Requests compared. */
  n: number;
  live: { p50: number; p99: number };
  sim: { p50: number; p99: number };
  /** Mean of |sim − live| / live over the requests (live > 0). */
  mape: number;
  /** (Σ sim − Σ live) / Σ live: positive when the simulator is slower overall. */
  bias: number;
  /** Pearson's r between the two, per request; null with fewer than 2 requests or no spread. */
  pearson: number | null;
}

export interface SimLiveCheck {
  requests: {
    /** Ids in both files. */
    matched: number;
    simOnly: number;
    liveOnly: number;
    /** Of the matched, completed in both (the ones compared). */
    bothCompleted: number;
    /** Completed live with fewer or more output tokens than asked (a server that stopped at end-of-sequence): not in `e2e`. */
    liveLengthDiffers: number;
  };
  ttft: LatencyAgreement;
  e2e: LatencyAgreement;
}

interface Row {
  input: number;
  output: number;
  completed: boolean;
  ttft: number;
  e2e: number;
  received: number;
}

const SIM_COLUMNS = ['id', 'input_tokens', 'output_tokens', 'status', 'drop_reason', 'ttft_s', 'e2e_s'];
const LIVE_COLUMNS = ['id', 'input_tokens', 'output_tokens', 'status', 'ttft_s', 'e2e_s', 'tokens_received', 'error'];

/**
 * Compares a `simulate` run's requests.csv with a `replay` of the same workload (its requests.csv), request by request
 * (joined by id): the per-request error of TTFT and E2E, the way BLIS and Vidur validate a simulator against a live
 * server. The two must be the same workload: a matched id with other input or output lengths is refused.
 */
export function checkSimAgainstLive(simPath: string, livePath: string): SimLiveCheck {
  const sim = readRequests(simPath, 'sim');
  const live = readRequests(livePath, 'live');
  let matched = 0;
  let liveLengthDiffers = 0;
  const ttft: [number, number][] = [];
  const e2e: [number, number][] = [];
  for (const [id, s] of sim) {
    const l = live.get(id);
    if (l === undefined) continue;
    matched++;
    if (s.input !== l.input || s.output !== l.output) {
      throw new UserError(
        `${livePath}: request ${id} has ${l.input} input and ${l.output} output tokens, ${simPath} has ${s.input} and ${s.output}: ` +
          'not the same workload (replay the scenario, seed and --set overrides the simulation ran)',
      );
    }
    if (!s.completed || !l.completed) continue;
    ttft.push([s.ttft, l.ttft]);
    if (l.received === l.output) e2e.push([s.e2e, l.e2e]);
    else liveLengthDiffers++;
  }
  if (ttft.length === 0) {
    throw new UserError(
      matched === 0
        ? `${simPath} and ${livePath} have no request id in common`
        : `no request completed in both ${simPath} and ${livePath} (${matched} ids in common): nothing to compare`,
    );
  }
  return {
    requests: { matched, simOnly: sim.size - matched, liveOnly: live.size - matched, bothCompleted: ttft.length, liveLengthDiffers },
    ttft: agreement(ttft),
    e2e: agreement(e2e),
  };
}

/** Reads requests.csv of a simulation (`sim`) or a replay (`live`): the columns differ; each says which it is. */
function readRequests(path: string, kind: 'sim' | 'live'): Map<number, Row> {
  const lines = readTextFile(path).split('\n');
  const header = (lines[0] ?? '').replace(/\r$/, '').split(',');
  const col = new Map(header.map((h, i) => [h, i]));
  const want = kind === 'sim' ? SIM_COLUMNS : LIVE_COLUMNS;
  const missing = want.filter((c) => !col.has(c));
  if (missing.length > 0) {
    const other = (kind === 'sim' ? LIVE_COLUMNS : SIM_COLUMNS).every((c) => col.has(c));
    const what = kind === 'sim' ? "a simulate run's requests.csv" : "a replay's requests.csv";
    throw new ConfigError({ source: path, line: 1, expected: `${what} (columns ${want.join(', ')})`, got: other ? `the other kind (${kind === 'sim' ? "a replay's" : "a simulate run's"}): swap the two` : (lines[0] ?? '').slice(0, 120) });
  }
  const at = (name: string) => col.get(name)!;
  const rows = new Map<number, Row>();
  for (let i = 1; i < lines.length; i++) {
    const text = lines[i]!.replace(/\r$/, '');
    if (text === '') continue;
    const cells = splitCsvLine(text);
    if (cells === undefined || cells.length !== header.length) throw new ConfigError({ source: path, line: i + 1, expected: `${header.length} comma-separated cells`, got: text.slice(0, 120) });
    const int = (name: string) => {
      const v = Number(cells[at(name)]);
      if (!Number.isInteger(v) || v < 0) throw new ConfigError({ source: path, line: i + 1, path: name, expected: 'an integer ≥ 0', got: cells[at(name)] });
      return v;
    };
    const seconds = (name: string) => {
      const c = cells[at(name)]!;
      const v = Number(c);
      if (c === '' || !Number.isFinite(v) || v < 0) throw new ConfigError({ source: path, line: i + 1, path: name, expected: 'seconds ≥ 0 (the request completed)', got: c });
      return v;
    };
    const id = int('id');
    if (rows.has(id)) throw new ConfigError({ source: path, line: i + 1, path: 'id', expected: 'each request once', got: `${id} again` });
    const completed = kind === 'sim' ? cells[at('status')] === 'completed' : cells[at('status')] === '200' && cells[at('error')] === '';
    rows.set(id, {
      input: int('input_tokens'),
      output: int('output_tokens'),
      completed,
      ttft: completed ? seconds('ttft_s') : NaN,
      e2e: completed ? seconds('e2e_s') : NaN,
      received: kind === 'live' && completed ? int('tokens_received') : 0,
    });
  }
  return rows;
}

/** `pairs` are [sim, live]. */
function agreement(pairs: readonly [number, number][]): LatencyAgreement {
  const n = pairs.length;
  const sims = Float64Array.from(pairs, (p) => p[0]).sort();
  const lives = Float64Array.from(pairs, (p) => p[1]).sort();
  let ape = 0;
  let apeN = 0;
  let sumS = 0;
  let sumL = 0;
  for (const [s, l] of pairs) {
    sumS += s;
    sumL += l;
    if (l > 0) {
      ape += Math.abs(s - l) / l;
      apeN++;
    }
  }
  return {
    n,
    live: { p50: percentile(lives, 50), p99: percentile(lives, 99) },
    sim: { p50: percentile(sims, 50), p99: percentile(sims, 99) },
    mape: apeN > 0 ? ape / apeN : 0,
    bias: sumL > 0 ? (sumS - sumL) / sumL : 0,
    pearson: pearson(pairs, sumS / Math.max(n, 1), sumL / Math.max(n, 1)),
  };
}

function pearson(pairs: readonly [number, number][], meanS: number, meanL: number): number | null {
  if (pairs.length < 2) return null;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [s, l] of pairs) {
    sxy += (s - meanS) * (l - meanL);
    sxx += (s - meanS) ** 2;
    syy += (l - meanL) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}
