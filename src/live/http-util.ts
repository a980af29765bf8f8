import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { UserError } from '../util/errors.ts';

/** An OpenAI-style error body: `{ error: { message, type, param, code } }` (`param`: the request field at fault). */
export function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null, headers: Record<string, string> = {}, param: string | null = null): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { message, type, param, code } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The paths the gateway and the emulator serve, with the method each takes (a 405's `Allow` header). */
export const SERVER_ROUTES: ReadonlyMap<string, string> = new Map([
  ['/v1/completions', 'POST'],
  ['/v1/chat/completions', 'POST'],
  ['/v1/models', 'GET, HEAD'],
  ['/metrics', 'GET, HEAD'],
  ['/health', 'GET, HEAD'],
]);

/** GET, or HEAD (RFC 9110 §9.3.2: wherever GET is; node:http sends a HEAD response's headers without its body). */
export function isGet(method: string | undefined): boolean {
  return method === 'GET' || method === 'HEAD';
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export class BodyTooLarge extends Error {}

/** Reads a request body up to `limitBytes`; rejects with BodyTooLarge beyond it. */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > limitBytes) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      parts.push(c);
    });
    req.on('end', () => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/**
 * Why a request body may not be read as JSON, from its Content-Type; null when it may. Only `application/json`
 * (any parameters) is read, as vLLM's `validate_json_request` allows: a missing type, curl's default form encoding
 * or `text/plain` (which a browser may post cross-site without a preflight) is refused.
 */
export function nonJsonContentType(headers: IncomingHttpHeaders): string | null {
  const type = headers['content-type'];
  const media = (type ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json') return null;
  return `Unsupported Media Type: Content-Type must be application/json, got ${type === undefined ? 'none' : `'${type}'`} (curl: add -H 'Content-Type: application/json')`;
}

/** Parses a JSON object body; a string describing the problem when it is not one. */
export function parseJsonObject(buf: Buffer): Record<string, unknown> | string {
  let v: unknown;
  try {
    v = JSON.parse(buf.toString('utf8'));
  } catch (e) {
    return `request body is not valid JSON (${(e as Error).message})`;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'request body must be a JSON object';
  return v as Record<string, unknown>;
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is in use',
  EADDRNOTAVAIL: 'the address is not on this machine',
  EACCES: 'permission denied',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (DNS not answering)',
  EAI_FAIL: 'the host name does not resolve',
  EINVAL: 'not a valid listen address',
};

/** Listens, turning a bad or unusable address (in use, not local, no permission, unknown host) into a one-line UserError. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  // Node reads '' as "every interface": a listen address must be given, never defaulted to all by accident.
  if (host.trim() === '') return Promise.reject(new UserError(`cannot listen on '${host}': expected a non-empty listen address (an empty one means every interface)`));
  return new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const why = LISTEN_ERRORS[e.code ?? ''];
      if (why) reject(new UserError(`cannot listen on ${host}:${port}: ${why} (${e.code})`));
      else reject(e);
    });
    server.listen(port, host, () => resolve());
  });
}
