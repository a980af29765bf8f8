/**
 * Token counting for the live plane without a real tokenizer. Prompt text counts ⌈UTF-8 bytes / 4⌉ tokens
 * (at least 1): the usual rule of thumb for English BPE vocabularies, deterministic and cheap. A prompt given
 * as token ids counts exactly. Chat messages add 4 tokens each for the role framing plus 3 for the reply
 * priming (OpenAI's published accounting for its chat format). The emulator and the gateway use the same
 * functions, so the gateway's estimate of a request's prompt equals what the emulator will count.
 */

export function textTokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

/** Tokens of a completions `prompt`: a string, token ids, or a batch of one of them; undefined if malformed. */
export function promptTokens(prompt: unknown): number | undefined {
  if (typeof prompt === 'string') return textTokens(prompt);
  if (Array.isArray(prompt)) {
    if (prompt.length === 0) return undefined;
    if (prompt.every((x) => Number.isInteger(x) && x >= 0)) return prompt.length;
    if (prompt.length === 1) return promptTokens(prompt[0]);
  }
  return undefined;
}

/** Tokens of a chat `messages` array; undefined if it is not a list of {role, content}. */
export function chatTokens(messages: unknown): number | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  let n = 3;
  for (const m of messages) {
    if (m === null || typeof m !== 'object') return undefined;
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string') return undefined;
    let text = '';
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      for (const part of content) if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') text += (part as { text: string }).text;
    } else if (content !== null && content !== undefined) return undefined;
    n += 4 + (text === '' ? 0 : textTokens(text));
  }
  return n;
}

const WORDS = [' the', ' model', ' says', ' hello', ' from', ' a', ' simulated', ' GPU', ',', ' and', ' then', ' more', ' tokens', ' follow', ' here', '.'];

/** The text of output token i: a fixed cycle of short words (one word = one token). */
export function syntheticToken(i: number): string {
  return WORDS[i % WORDS.length]!;
}
