import { textTokens } from './tokens.ts';

/**
 * The fields of an OpenAI completion or chat-completion body that the live plane acts on, validated the same way
 * by the gateway and the emulator (so a request the gateway admits is one the emulator accepts). Field types
 * and ranges follow the OpenAI API and vLLM's request schema; sampling fields we do not act on (temperature,
 * top_p, …) are still checked, because a client that sends `"temperature": "hot"` has a bug it should hear about.
 */
export interface CompletionFields {
  inputTokens: number;
  maxTokens: number;
  stream: boolean;
  /** stream_options.include_usage (non-streaming answers always carry usage). */
  includeUsage: boolean;
}

/** A 400 for one field: what is wrong, and the field's name (the error body's `param`). */
export interface FieldError {
  message: string;
  param: string;
}

// JSON.stringify writes ±Infinity (a number literal like 1e999 in the body) as null.
const got = (v: unknown) => (v === undefined ? 'nothing' : typeof v === 'number' && !Number.isFinite(v) ? String(v) : JSON.stringify(v));

const MAX_TOKEN_ID = 2 ** 31 - 1;
/**
 * The most output tokens a request may ask for: 2^31 − 1, past any model's context. Unbounded, 1e308 passed as an
 * integer, and the gateway's per-backend token count (A + 1e308 − 1e308 = 0) lost the other requests' tokens for good.
 */
const MAX_OUTPUT_TOKENS = 2 ** 31 - 1;

/** Tokens of a completions `prompt`: a non-empty string, token ids, or a batch of one of them. */
export function promptTokens(prompt: unknown): number | FieldError {
  const bad = { message: `'prompt' must be a non-empty string or a non-empty list of token ids (integers from 0 to 2^31 − 1), got ${got(prompt)}`, param: 'prompt' };
  if (typeof prompt === 'string') return prompt === '' ? bad : textTokens(prompt);
  if (Array.isArray(prompt) && prompt.length > 0) {
    // vLLM holds token ids as 32-bit integers (1e300 passed Number.isInteger; -0.0 is a float in JSON's Python reading).
    if (prompt.every((x) => Number.isInteger(x) && x >= 0 && x <= MAX_TOKEN_ID && !Object.is(x, -0))) return prompt.length;
    if (prompt.length === 1) {
      const one = promptTokens(prompt[0]);
      return typeof one === 'number' ? one : bad;
    }
    if (prompt.every((x) => typeof x === 'string' || Array.isArray(x))) {
      return { message: "'prompt' as a batch of several prompts is not supported; send one request per prompt", param: 'prompt' };
    }
  }
  return bad;
}

/**
 * Tokens of a chat `messages` list: 4 per message for the role framing plus 3 for the reply priming (OpenAI's
 * published accounting), plus the text. The role is any non-empty string, as in vLLM (whose
 * CustomChatCompletionMessageParam takes `role: str`: `ipython`, Llama 3.1's tool-result role, and whatever else a
 * chat template knows). Content is a string, or a list of parts: a plain string or {type: "text", text} is text;
 * other part types such as images count 0. It may be missing only on an assistant message (tool calls).
 */
export function chatTokens(messages: unknown): number | FieldError {
  if (!Array.isArray(messages) || messages.length === 0) return { message: `'messages' must be a non-empty list of {role, content}, got ${got(messages)}`, param: 'messages' };
  let n = 3;
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return { message: `'${at}' must be an object {role, content}, got ${got(m)}`, param: at };
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || role === '') return { message: `'${at}.role' must be a non-empty string (system, user, assistant, tool, …), got ${got(role)}`, param: `${at}.role` };
    let text = '';
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      for (const [k, part] of content.entries()) {
        if (typeof part === 'string') {
          text += part;
          continue;
        }
        const p = part as { type?: unknown; text?: unknown } | null;
        if (p === null || typeof p !== 'object' || Array.isArray(p) || typeof p.type !== 'string') {
          return { message: `'${at}.content[${k}]' must be a string or a content part {type, …}, got ${got(part)}`, param: `${at}.content[${k}]` };
        }
        if (p.type === 'text') {
          if (typeof p.text !== 'string') return { message: `'${at}.content[${k}].text' must be a string, got ${got(p.text)}`, param: `${at}.content[${k}].text` };
          text += p.text;
        }
      }
    } else if (!((content === undefined || content === null) && role === 'assistant')) {
      return { message: `'${at}.content' must be a string or a list of content parts, got ${got(content)}`, param: `${at}.content` };
    }
    n += 4 + (text === '' ? 0 : textTokens(text));
  }
  return n;
}

/** A number field that must be finite and in [min, max] when present. */
function rangeError(body: Record<string, unknown>, field: string, min: number, max: number, integer = false): FieldError | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  const ok = typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max && (!integer || Number.isInteger(v));
  if (ok) return null;
  const what = integer ? 'an integer' : 'a number';
  const range = max === Infinity ? `≥ ${min}` : `in [${min}, ${max}]`;
  return { message: `'${field}' must be ${what} ${range}, got ${got(v)}`, param: field };
}

/**
 * Validates a completion (`chat` false) or chat-completion body; `model` is each server's own check. Without
 * max_tokens / max_completion_tokens, `maxTokens` is `defaultMaxTokens`: on /v1/completions that is vLLM's own
 * limit (16) and bounds `min_tokens`; on chat vLLM's limit is the context left after the prompt, which is not
 * known here, so `defaultMaxTokens` is only an estimate (raised to `min_tokens` when that is larger) and
 * `min_tokens` has no upper bound.
 */
export function completionFields(body: Record<string, unknown>, chat: boolean, defaultMaxTokens: number): CompletionFields | FieldError {
  const input = chat ? chatTokens(body.messages) : promptTokens(body.prompt);
  if (typeof input !== 'number') return input;
  // max_completion_tokens is the chat API's newer name; it wins when both are given, as in vLLM.
  const mtField = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
  const given = body[mtField] !== undefined && body[mtField] !== null;
  const mt = given ? body[mtField] : defaultMaxTokens;
  if (!Number.isInteger(mt) || (mt as number) < 1 || (mt as number) > MAX_OUTPUT_TOKENS) {
    return { message: `'${mtField}' must be an integer from 1 to 2^31 − 1, got ${got(mt)}`, param: mtField };
  }
  for (const f of ['stream', 'echo', 'logprobs', 'ignore_eos'] as const) {
    const v = body[f];
    // completions' `logprobs` is an integer; chat's is a boolean
    if (f === 'logprobs' && !chat) continue;
    if (v !== undefined && v !== null && typeof v !== 'boolean') return { message: `'${f}' must be true or false, got ${got(v)}`, param: f };
  }
  const so = body.stream_options;
  if (so !== undefined && so !== null) {
    if (typeof so !== 'object' || Array.isArray(so)) return { message: `'stream_options' must be an object {include_usage}, got ${got(so)}`, param: 'stream_options' };
    const iu = (so as { include_usage?: unknown }).include_usage;
    if (iu !== undefined && typeof iu !== 'boolean') return { message: `'stream_options.include_usage' must be true or false, got ${got(iu)}`, param: 'stream_options.include_usage' };
  }
  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== 'string' && !(Array.isArray(stop) && stop.every((x) => typeof x === 'string'))) {
    return { message: `'stop' must be a string or a list of strings, got ${got(stop)}`, param: 'stop' };
  }
  const topP = body.top_p;
  if (topP !== undefined && topP !== null && !(typeof topP === 'number' && topP > 0 && topP <= 1)) return { message: `'top_p' must be a number in (0, 1], got ${got(topP)}`, param: 'top_p' };
  const range =
    rangeError(body, 'temperature', 0, Infinity) ??
    rangeError(body, 'min_tokens', 0, given || !chat ? (mt as number) : MAX_OUTPUT_TOKENS, true) ??
    rangeError(body, 'presence_penalty', -2, 2) ??
    rangeError(body, 'frequency_penalty', -2, 2) ??
    rangeError(body, 'n', 1, Infinity, true) ??
    (chat ? null : rangeError(body, 'logprobs', 0, 20, true));
  if (range) return range;
  if (body.n !== undefined && body.n !== null && body.n !== 1) return { message: `'n' > 1 is not supported (one choice per request), got ${got(body.n)}`, param: 'n' };
  const stream = body.stream === true;
  // vLLM's request validator: "Stream options can only be defined when `stream=True`."
  if (so !== undefined && so !== null && !stream) return { message: "'stream_options' can only be given with stream: true", param: 'stream_options' };
  const minTokens = typeof body.min_tokens === 'number' ? body.min_tokens : 0;
  return { inputTokens: input, maxTokens: given || !chat ? (mt as number) : Math.max(mt as number, minTokens), stream, includeUsage: stream && (so as { include_usage?: unknown } | undefined)?.include_usage === true };
}
