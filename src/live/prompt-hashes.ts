/**
 * Block hashes of a live request's prompt, the live plane's stand-in for a trace's `hash_ids`: the gateway gives
 * them to the `prefix-aware` router and the emulator to its prefix cache (`--enable-prefix-caching`), so both see
 * two prompts share a cached prefix exactly as far as their text (or token ids) agree, block by block.
 *
 * Without a tokenizer a block is `PROMPT_HASH_BLOCK_TOKENS` tokens as tokens.ts counts text (4 UTF-8 bytes a token):
 * 64 bytes of the prompt, or 16 ids of a token-id prompt. A chat's messages are read as their role, a newline and
 * their text (the text parts `chatTokens` counts), each message ended by a 0 byte. Hash k is chained over the hash
 * of block k − 1 (FNV-1a, two 32-bit lanes folded into a 53-bit safe integer), so it stands for the whole prompt up
 * to the end of block k; a trailing partial block gets none (vLLM caches full blocks only).
 */
export const PROMPT_HASH_BLOCK_TOKENS = 16;
const BYTES_PER_TOKEN = 4;

/** Hashes of the full blocks of a completion's `prompt` or a chat's `messages` (already validated); [] when none. */
export function promptBlockHashes(body: Record<string, unknown>, chat: boolean): number[] {
  if (!chat && Array.isArray(body.prompt) && body.prompt.every((x) => typeof x === 'number')) return idBlocks(body.prompt as number[]);
  const text = chat ? chatText(body.messages) : typeof body.prompt === 'string' ? body.prompt : Array.isArray(body.prompt) && typeof body.prompt[0] === 'string' ? body.prompt[0] : '';
  return byteBlocks(Buffer.from(text, 'utf8'));
}

function chatText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  let s = '';
  for (const m of messages as { role?: unknown; content?: unknown }[]) {
    s += `${String(m.role)}\n`;
    if (typeof m.content === 'string') s += m.content;
    else if (Array.isArray(m.content)) {
      for (const p of m.content as unknown[]) {
        if (typeof p === 'string') s += p;
        else if (p !== null && typeof p === 'object' && (p as { type?: unknown }).type === 'text') s += String((p as { text?: unknown }).text);
      }
    }
    s += '\u0000';
  }
  return s;
}

const FNV_PRIME = 0x01000193;

function byteBlocks(buf: Buffer): number[] {
  return chained(buf.length, PROMPT_HASH_BLOCK_TOKENS * BYTES_PER_TOKEN, (i) => buf[i]!);
}

function idBlocks(ids: readonly number[]): number[] {
  return chained(ids.length, PROMPT_HASH_BLOCK_TOKENS, (i) => ids[i]!);
}

/** One hash per full block of `size` of the `n` values, each over every value up to the end of its block. */
function chained(n: number, size: number, at: (i: number) => number): number[] {
  const out: number[] = [];
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let end = size; end <= n; end += size) {
    for (let i = end - size; i < end; i++) {
      const v = at(i);
      a = Math.imul(a ^ (v & 0xffff), FNV_PRIME);
      b = Math.imul(b ^ (v >>> 16) ^ (v & 0xff) ^ 0x5a, FNV_PRIME);
    }
    // Two 32-bit lanes as one non-negative safe integer (21 bits of one, 32 of the other).
    out.push((b >>> 11) * 2 ** 32 + (a >>> 0));
  }
  return out;
}
