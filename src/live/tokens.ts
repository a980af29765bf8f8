/**
 * Token counting for the live plane without a real tokenizer. Prompt text counts ⌈UTF-8 bytes / 4⌉ tokens
 * (at least 1): the usual rule of thumb for English BPE vocabularies, deterministic and cheap. A prompt given
 * as token ids counts exactly (chat framing: `chatTokens` in openai-request.ts). The emulator and the gateway use
 * the same functions, so the gateway's estimate of a request's prompt equals what the emulator will count.
 */

export function textTokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

const WORDS = [' the', ' model', ' says', ' hello', ' from', ' a', ' simulated', ' GPU', ',', ' and', ' then', ' more', ' tokens', ' follow', ' here', '.'];

/** The text of output token i: a fixed cycle of short words (one word = one token). */
export function syntheticToken(i: number): string {
  return WORDS[i % WORDS.length]!;
}
