import { Pool } from 'undici';

export interface ReplayRequest {
  arrivalS: number;
  inputTokens: number;
  outputTokens: number;
}

export interface ReplayResult {
  status: number;
  /** Modelled seconds (wall × time scale) from sending to the first output token / to the end. */
  ttftS: number;
  e2eS: number;
  outputTokens: number;
  backend: string;
}

/**
 * Replays a trace against an OpenAI-compatible server on the modelled timeline: request i is sent at wall time
 * arrivalS / timeScale (open loop), as a streaming completion whose prompt is `inputTokens` token ids (counted
 * exactly by the emulator) and `max_tokens` = outputTokens. Latencies are measured at the client.
 */
export async function replayTrace(baseUrl: string, model: string, reqs: readonly ReplayRequest[], timeScale: number): Promise<ReplayResult[]> {
  const pool = new Pool(baseUrl, { connections: Math.min(256, reqs.length + 1), pipelining: 1 });
  const t0 = performance.now() + 20;
  const one = async (r: ReplayRequest): Promise<ReplayResult> => {
    const wait = t0 + (r.arrivalS * 1000) / timeScale - performance.now();
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    const sent = performance.now();
    const body = JSON.stringify({ model, prompt: new Array<number>(r.inputTokens).fill(1), max_tokens: r.outputTokens, stream: true });
    const res = await pool.request({ path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
    let first = -1;
    let tokens = 0;
    let carry = '';
    for await (const chunk of res.body) {
      const text = carry + (chunk as Buffer).toString('utf8');
      const events = text.split('\n\n');
      carry = events.pop()!;
      for (const ev of events) {
        if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
        const j = JSON.parse(ev.slice(6)) as { choices?: { text?: string }[] };
        if (j.choices?.[0]?.text) {
          if (first < 0) first = performance.now();
          tokens++;
        }
      }
    }
    const end = performance.now();
    const backend = res.headers['x-llmfleet-backend'];
    return { status: res.statusCode, ttftS: ((first - sent) / 1000) * timeScale, e2eS: ((end - sent) / 1000) * timeScale, outputTokens: tokens, backend: typeof backend === 'string' ? backend : '' };
  };
  try {
    return await Promise.all(reqs.map(one));
  } finally {
    await pool.close();
  }
}
