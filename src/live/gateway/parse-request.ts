import type { IncomingHttpHeaders } from 'node:http';
import { parseJsonObject } from '../http-util.ts';
import { chatTokens, promptTokens } from '../tokens.ts';

export const TIER_HEADER = 'x-llmfleet-tier';

/** What the gateway needs from a completion request: enough to route it, nothing more. */
export interface ParsedRequest {
  model: string;
  inputTokens: number;
  maxTokens: number;
  stream: boolean;
  tier: string;
  priority: number;
}

/** An OpenAI-style 4xx: status, message, code. */
export interface BadRequest {
  status: number;
  message: string;
  code: string;
}

/**
 * Validates a completion body (JSON object, served model, prompt or messages, max_tokens) and the tier header.
 * Prompt tokens are counted as the emulator counts them; `max_tokens` (default 16) is the predicted output.
 */
export function parseCompletion(buf: Buffer, chat: boolean, headers: IncomingHttpHeaders, models: ReadonlySet<string>, tiers: { default: string; priorities: Record<string, number> }): ParsedRequest | BadRequest {
  const body = parseJsonObject(buf);
  if (typeof body === 'string') return { status: 400, message: body, code: 'invalid_json' };
  const served = () => [...models].join(', ');
  const model = body.model;
  if (typeof model !== 'string') return { status: 400, message: `'model' is required (a string); served: ${served()}`, code: 'missing_model' };
  if (!models.has(model)) return { status: 404, message: `The model '${model}' does not exist; served: ${served()}`, code: 'model_not_found' };
  const inputTokens = chat ? chatTokens(body.messages) : promptTokens(body.prompt);
  if (inputTokens === undefined) {
    return { status: 400, message: chat ? "'messages' must be a non-empty list of {role, content}" : "'prompt' must be a string or a list of token ids", code: 'invalid_prompt' };
  }
  const mt = body.max_completion_tokens ?? body.max_tokens ?? 16;
  if (!Number.isInteger(mt) || (mt as number) < 1) return { status: 400, message: `'max_tokens' must be an integer ≥ 1, got ${JSON.stringify(mt)}`, code: 'invalid_max_tokens' };
  const th = headers[TIER_HEADER];
  const tier = typeof th === 'string' && th !== '' ? th : tiers.default;
  const priority = tiers.priorities[tier];
  if (priority === undefined) return { status: 400, message: `${TIER_HEADER}: unknown tier '${tier}'; valid: ${Object.keys(tiers.priorities).join(', ')}`, code: 'invalid_tier' };
  return { model, inputTokens, maxTokens: mt as number, stream: body.stream === true, tier, priority };
}
