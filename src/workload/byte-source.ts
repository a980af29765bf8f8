import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import * as zlib from 'node:zlib';
import { Gunzip } from 'fflate';
import { UserError } from '../util/errors.ts';

/** Synchronous reads of a file's bytes, decompressed when the file is gzip (detected by its magic bytes). */
export interface ByteSource {
  /** Reads up to `length` bytes into buf[offset, …); 0 at the end. */
  read(buf: Buffer, offset: number, length: number): number;
  /** Safe to call twice. */
  close(): void;
}

/**
 * Opens a regular file for reading, turning "not found", "is a folder" and "is a pipe" into one-line UserErrors.
 * A pipe (`<(cmd)`, `/dev/stdin` fed by a pipe, a FIFO) is refused: a trace is read more than once (its format
 * is sniffed, then it is streamed), and a gzip file is recognised by reading its first bytes at offset 0.
 */
export function openTextFile(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`${path}: file not found`);
    if (code === 'EACCES') throw new UserError(`${path}: permission denied`);
    throw new UserError(`${path}: cannot read (${code ?? (e as Error).message})`);
  }
  if (stat.isDirectory()) throw new UserError(`${path}: expected a file, got a folder`);
  if (!stat.isFile()) throw new UserError(`${path}: a pipe or device, not a regular file; traces are read more than once, so save it to a file first`);
  try {
    return openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`${path}: ${code === 'EACCES' ? 'permission denied' : `cannot read (${code ?? (e as Error).message})`}`);
  }
}

/** Compressed formats we recognise only to say so (magic bytes at the start of the file). */
const OTHER_COMPRESSION: [string, number[]][] = [
  ['zip', [0x50, 0x4b, 0x03, 0x04]],
  ['bzip2', [0x42, 0x5a, 0x68]],
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
];

/**
 * A file's bytes: as they are, or inflated when it starts with the gzip magic bytes (`.csv.gz` as the Azure
 * 2025 multimodal trace ships), multi-member files included. Other archives (zip, bzip2, xz, zstd) are a
 * UserError saying to decompress first. `gzipChunkBytes`: compressed bytes inflated per step.
 */
export function openByteSource(path: string, gzipChunkBytes = 1 << 20): ByteSource {
  const fd = openTextFile(path);
  const head = Buffer.alloc(6);
  const n = readSync(fd, head, 0, head.length, 0);
  if (n >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    // zlib.crc32 came with Node 20.15; a namespace import keeps older Nodes loading the CLI for plain files.
    if (typeof zlib.crc32 !== 'function') {
      closeSync(fd);
      throw new UserError(`${path}: reading gzip files needs Node ≥ 20.15 (this is ${process.version}); decompress it first`);
    }
    return new GzipSource(path, fd, gzipChunkBytes);
  }
  for (const [name, magic] of OTHER_COMPRESSION) {
    if (n >= magic.length && magic.every((b, i) => head[i] === b)) {
      closeSync(fd);
      throw new UserError(`${path}: a ${name} archive; decompress it first (gzip files are read as they are)`);
    }
  }
  return new FileSource(fd);
}

class FileSource implements ByteSource {
  constructor(private fd: number | undefined) {}

  read(buf: Buffer, offset: number, length: number): number {
    return this.fd === undefined ? 0 : readSync(this.fd, buf, offset, length, null);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Streams a gzip file through fflate's synchronous Gunzip (Node's zlib has no synchronous streaming API:
 * its one-shot gunzipSync would hold a whole week-long trace in memory). Measured on a 247 MB CSV (56 MB
 * gzipped): 1.6 s to inflate, against about 0.9 s to parse the rows. fflate does not check the CRC-32 and
 * length in each member's trailer, so this does, with Node's crc32: a corrupt file is an error, not rows.
 */
class GzipSource implements ByteSource {
  private fd: number | undefined;
  private readonly fileBytes: number;
  private readonly input: Buffer;
  private readonly gunzip: Gunzip;
  private out: Uint8Array[] = [];
  /** Next unread byte of out[0]. */
  private at = 0;
  private ended = false;
  private crc = 0;
  private size = 0;
  /** Byte offset of the current member's header. */
  private memberStart = 0;

  constructor(
    private readonly path: string,
    fd: number,
    chunkBytes: number,
  ) {
    this.fd = fd;
    this.input = Buffer.allocUnsafe(chunkBytes);
    this.fileBytes = fstatSync(fd).size;
    this.gunzip = new Gunzip((data) => {
      this.crc = zlib.crc32(data, this.crc);
      this.size = (this.size + data.length) % 2 ** 32;
      if (data.length > 0) this.out.push(data);
    });
    // A new member starts at `offset`: the previous one's trailer is the 8 bytes before it.
    this.gunzip.onmember = (offset) => {
      this.checkTrailer(offset);
      this.memberStart = offset;
    };
  }

  read(buf: Buffer, offset: number, length: number): number {
    while (this.out.length === 0 && !this.ended && this.fd !== undefined) this.inflateMore();
    let n = 0;
    while (n < length && this.out.length > 0) {
      const chunk = this.out[0]!;
      const take = Math.min(length - n, chunk.length - this.at);
      buf.set(chunk.subarray(this.at, this.at + take), offset + n);
      n += take;
      this.at += take;
      if (this.at === chunk.length) {
        this.out.shift();
        this.at = 0;
      }
    }
    return n;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.out = [];
  }

  private inflateMore(): void {
    const n = readSync(this.fd!, this.input, 0, this.input.length, null);
    try {
      // fflate keeps a reference to the pushed bytes until it has consumed them, so hand it a copy.
      this.gunzip.push(Uint8Array.prototype.slice.call(this.input, 0, n), n === 0);
    } catch (e) {
      if (this.endsInZeroPadding()) {
        this.ended = true;
        return;
      }
      const msg = (e as Error).message;
      throw new UserError(`${this.path}: not valid gzip data (${msg === 'unexpected EOF' ? `truncated: the file ends at byte ${this.fileBytes}, inside the compressed data${this.memberStart > 0 ? ` of the member at byte ${this.memberStart}` : ''}` : msg})`);
    }
    if (n === 0) {
      this.ended = true;
      this.checkComplete();
      this.checkTrailer(this.fileBytes, true);
    }
  }

  /**
   * gzip(1) ignores zeros after the last member (tape-block padding). When what follows a member is not a gzip
   * header, that is the case if the last member's trailer (the CRC-32 and length of everything inflated since)
   * ends where the file's trailing zeros begin, or up to 8 bytes into them (a trailer may end in zero bytes).
   */
  private endsInZeroPadding(): boolean {
    if (this.fd === undefined || this.out.length === 0 && this.size === 0) return false;
    const tailBytes = Math.min(this.fileBytes, 1 << 16);
    const tail = Buffer.alloc(tailBytes);
    if (readSync(this.fd, tail, 0, tailBytes, this.fileBytes - tailBytes) !== tailBytes) return false;
    let last = tailBytes - 1;
    while (last >= 0 && tail[last] === 0) last--;
    if (last === tailBytes - 1 || last < 0) return false;
    for (let end = last + 1; end <= Math.min(last + 8, tailBytes); end++) {
      if (end >= 8 && tail.readUInt32LE(end - 8) === this.crc >>> 0 && tail.readUInt32LE(end - 4) === this.size) return true;
    }
    return false;
  }

  /**
   * At the end of the file: the last member must hold its whole header, some compressed data (an empty deflate
   * stream is 2 bytes) and the 8-byte trailer. fflate raises "unexpected EOF" for a file cut inside the compressed
   * data, but inflates nothing and says nothing when it ends inside the header (the first few bytes of a .gz).
   */
  private checkComplete(): void {
    const have = this.fileBytes - this.memberStart;
    const head = Buffer.alloc(Math.min(have, 1 << 16));
    const got = readSync(this.fd!, head, 0, head.length, this.memberStart);
    const end = gzipHeaderEnd(head.subarray(0, got));
    // A header longer than the window read (a 64 KiB file name) is not judged here; the trailer check still runs.
    if (end === undefined ? got === have : end + 2 + 8 > have) {
      throw new UserError(`${this.path}: not valid gzip data (truncated: the file ends at byte ${this.fileBytes}, inside ${end === undefined ? 'the gzip header' : 'the compressed data'}${this.memberStart > 0 ? ` of the member at byte ${this.memberStart}` : ''})`);
    }
  }

  /**
   * When the file ends inside the header of a further member, fflate never announces that member (onmember comes
   * once its header is whole), so the trailer check at the end of the file reads the wrong 8 bytes. That member's
   * start, if so: a place where the current member's trailer (its CRC-32 and length) ends, followed to the end of
   * the file by an unfinished gzip header; undefined otherwise.
   */
  private cutInNextHeader(): number | undefined {
    const from = Math.max(this.memberStart, this.fileBytes - (1 << 16) - 8);
    const tail = Buffer.alloc(this.fileBytes - from);
    if (readSync(this.fd!, tail, 0, tail.length, from) !== tail.length) return undefined;
    for (let end = tail.length - 1; end >= 8; end--) {
      if (tail.readUInt32LE(end - 8) !== this.crc >>> 0 || tail.readUInt32LE(end - 4) !== this.size) continue;
      const rest = tail.subarray(end);
      const magic = [0x1f, 0x8b, 0x08];
      if (rest.subarray(0, 3).every((b, i) => b === magic[i]) && gzipHeaderEnd(rest) === undefined) return from + end;
    }
    return undefined;
  }

  private checkTrailer(memberEnd: number, atEof = false): void {
    const t = Buffer.alloc(8);
    const read = memberEnd - this.memberStart >= 8 && readSync(this.fd!, t, 0, 8, memberEnd - 8) === 8;
    const crcOk = read && t.readUInt32LE(0) === this.crc >>> 0;
    const sizeOk = read && t.readUInt32LE(4) === this.size;
    if (!crcOk || !sizeOk) {
      // At the end of the file, a file cut short inside (or just before) its trailer has neither field right; one
      // right and one wrong is a damaged byte.
      const cut = atEof && !crcOk && !sizeOk;
      const next = cut ? this.cutInNextHeader() : undefined;
      if (next !== undefined) {
        throw new UserError(`${this.path}: not valid gzip data (truncated: the file ends at byte ${this.fileBytes}, inside the gzip header of the member at byte ${next})`);
      }
      throw new UserError(`${this.path}: ${cut ? 'corrupt or truncated' : 'corrupt'} gzip data (the CRC-32 or length in the trailer at byte ${memberEnd - 8} does not match the inflated data${cut ? '; a file cut short loses its trailer' : ''})`);
    }
    this.crc = 0;
    this.size = 0;
  }
}

/**
 * The length of the gzip member header at the start of `b` (RFC 1952 §2.3: 10 fixed bytes, then the optional
 * extra field, file name, comment and header CRC its flags announce), or undefined when `b` ends inside it.
 */
export function gzipHeaderEnd(b: Uint8Array): number | undefined {
  if (b.length < 10) return undefined;
  const flags = b[3]!;
  let p = 10;
  if (flags & 0x04) {
    if (p + 2 > b.length) return undefined;
    p += 2 + (b[p]! | (b[p + 1]! << 8));
  }
  for (const bit of [0x08, 0x10]) {
    if (!(flags & bit)) continue;
    while (p < b.length && b[p] !== 0) p++;
    if (p >= b.length) return undefined;
    p++;
  }
  if (flags & 0x02) p += 2;
  return p <= b.length ? p : undefined;
}
