import type { IncomingHttpHeaders } from 'node:http';
import { nonJsonContentType, parseJsonObject } from '../http-util.ts';
import { completionFields } from '../openai-request.ts';
import { promptBlockHashes } from '../prompt-hashes.ts';

export const TIER_HEADER = 'x-llmfleet-tier';

/** vLLM's /v1/completions default `max_tokens` (CompletionRequest.max_tokens = 16): a real limit. */
export const COMPLETION_DEFAULT_MAX_TOKENS = 16;
/** The gateway's default `chatDefaultOutputTokens` (config.ts): a routing estimate for chat without a limit. */
export const CHAT_DEFAULT_OUTPUT_TOKENS = 256;

/** What the gateway needs from a completion request: enough to route it, nothing more. */
export interface ParsedRequest {
  model: string;
  inputTokens: number;
  maxTokens: number;
  stream: boolean;
  tier: string;
  priority: number;
  /** With `hashPrompt`: the prompt's block hashes (prompt-hashes.ts), for the prefix-aware router. */
  prefixHashes?: number[];
}

/** An OpenAI-style 4xx: status, message, code, and the request field at fault (`param`) when there is one. */
export interface BadRequest {
  status: number;
  message: string;
  code: string;
  param: string | null;
  /** The model asked for, when the body named a served one (for the request counter's label). */
  model?: string;
}

/**
 * Validates a completion body (a JSON Content-Type, a JSON object, served model, the fields of `completionFields`) and the tier header.
 * Prompt tokens are counted as the emulator counts them; `max_tokens` / `max_completion_tokens` is the predicted
 * output. Without one, /v1/completions predicts vLLM's default limit, 16; chat predicts `chatDefaultOutputTokens`
 * (vLLM lets such a chat generate up to the context left after the prompt, so any number here is an estimate).
 * `hashPrompt` adds the prompt's block hashes (only a router that reads them needs the work).
 */
export function parseCompletion(
  buf: Buffer,
  chat: boolean,
  headers: IncomingHttpHeaders,
  models: ReadonlySet<string>,
  tiers: { default: string; priorities: Record<string, number> },
  chatDefaultOutputTokens = CHAT_DEFAULT_OUTPUT_TOKENS,
  hashPrompt = false,
): ParsedRequest | BadRequest {
  const badType = nonJsonContentType(headers);
  if (badType) return { status: 415, message: badType, code: 'unsupported_media_type', param: null };
  const body = parseJsonObject(buf);
  if (typeof body === 'string') return { status: 400, message: body, code: 'invalid_json', param: null };
  const served = () => [...models].join(', ');
  const model = body.model;
  if (model === undefined || model === null) return { status: 400, message: `'model' is required (a string); served: ${served()}`, code: 'missing_model', param: 'model' };
  if (typeof model !== 'string') return { status: 400, message: `'model' must be a string, got ${JSON.stringify(model)}; served: ${served()}`, code: 'invalid_model', param: 'model' };
  if (!models.has(model)) return { status: 404, message: `The model '${model}' does not exist; served: ${served()}`, code: 'model_not_found', param: 'model' };
  const f = completionFields(body, chat, chat ? chatDefaultOutputTokens : COMPLETION_DEFAULT_MAX_TOKENS);
  if ('param' in f) return { status: 400, message: f.message, code: `invalid_${/^[a-z_]+/.exec(f.param)![0]}`, param: f.param, model };
  const th = headers[TIER_HEADER];
  const tier = typeof th === 'string' && th !== '' ? th : tiers.default;
  // Own keys only: an inherited name (`constructor`, `__proto__`, `toString`) is not a configured tier.
  const priority = Object.hasOwn(tiers.priorities, tier) ? tiers.priorities[tier] : undefined;
  if (typeof priority !== 'number') return { status: 400, message: `${TIER_HEADER}: unknown tier '${tier}'; valid: ${Object.keys(tiers.priorities).join(', ')}`, code: 'invalid_tier', param: null, model };
  return { model, inputTokens: f.inputTokens, maxTokens: f.maxTokens, stream: f.stream, tier, priority, ...(hashPrompt ? { prefixHashes: promptBlockHashes(body, chat) } : {}) };
}
