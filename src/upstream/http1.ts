/**
 * The gateway's HTTP/1.1 client for the upstream (`upstream.client: http1`, the default):
 * keep-alive connections over `Deno.connect` / `Deno.connectTls`, a pool per origin, the answer
 * read whole within a size limit and one deadline for the whole exchange. It does what the proxy
 * needs and no more, for about half the CPU that `fetch` spends per exchange (docs/performance.md).
 *
 * Strict where a lenient parser would let a confused answer through (RFC 9112): a malformed
 * status line or header, an obsolete line folding, conflicting Content-Length values or a header
 * section over 64 KiB fail the exchange; Transfer-Encoding wins over Content-Length and the
 * connection is then not reused. A pooled connection keeps a read pending while idle, so that one
 * the upstream closed is dropped at once instead of failing the next exchange.
 */
import type { Bytes } from "../lib/body.ts";
import { onDeadline } from "../lib/deadline.ts";
import {
  type Upstream,
  type UpstreamAnswer,
  UpstreamError,
  type UpstreamRequest,
} from "./exchange.ts";

/** Largest header section of an answer (status line and headers). */
const MAX_HEAD = 64 * 1024;
/** Idle connections kept per origin. */
const MAX_IDLE = 256;
/** An idle connection older than this is closed instead of reused (servers often close at 5 s). */
const IDLE_MS = 4_000;

const decoder = new TextDecoder();
const encoder = new TextEncoder();
/** Request headers the client writes itself. */
const FRAMING = new Set(["host", "content-length", "transfer-encoding", "connection"]);
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9][0-9][0-9])(?: [^\r\n]*)?$/;
/** What a request target must not contain: it would end the request line or the head. */
// deno-lint-ignore no-control-regex
const UNSAFE_TARGET = /[\s\x00-\x1f\x7f]/;

/** A parsed answer head. */
interface Head {
  version: 0 | 1;
  status: number;
  headers: [string, string][];
}

/** One connection and the bytes read from it that are not consumed yet. */
class Connection {
  buffer = new Uint8Array(16 * 1024);
  /** Unconsumed bytes are `buffer[start, end)`. */
  start = 0;
  end = 0;
  /** The read started while idle; the next exchange takes its result first. */
  pending?: Promise<number | null>;
  idleSince = 0;
  idle = false;
  closed = false;

  constructor(readonly conn: Deno.Conn) {}

  /** Reads more bytes after `end` (growing the buffer when full); false at the end of stream. */
  async fill(): Promise<boolean> {
    let read = this.pending;
    this.pending = undefined;
    if (!read) {
      if (this.start > 0 && this.start === this.end) this.start = this.end = 0;
      if (this.end === this.buffer.byteLength) this.#grow();
      read = this.conn.read(this.buffer.subarray(this.end));
    }
    const n = await read;
    if (n === null) return false;
    this.end += n;
    return true;
  }

  #grow() {
    const live = this.end - this.start;
    const size = live * 2 > this.buffer.byteLength
      ? this.buffer.byteLength * 2
      : this.buffer.byteLength;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(this.start, this.end));
    this.buffer = next;
    this.start = 0;
    this.end = live;
  }

  /** Starts the idle read that notices a close by the upstream. */
  watch(onEnd: () => void) {
    this.start = this.end = 0;
    const read = this.conn.read(this.buffer);
    this.pending = read;
    read.then(
      () => {
        // Bytes or the end while idle: the upstream closed it, or sent what nobody asked for.
        if (this.idle && this.pending === read) onEnd();
      },
      () => {
        if (this.idle && this.pending === read) onEnd();
      },
    );
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch {
      // Already closed by the runtime.
    }
  }
}

/** The position after the blank line that ends a head in `b[from, to)`, or -1. */
function headEnd(b: Uint8Array, from: number, to: number): number {
  for (let i = b.indexOf(10, from); i >= 0 && i < to; i = b.indexOf(10, i + 1)) {
    if (i + 1 < to && b[i + 1] === 10) return i + 2;
    if (i + 2 < to && b[i + 1] === 13 && b[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** Bytes as a string of code units 0-255 (header bytes are not UTF-8). */
function latin1(bytes: Uint8Array): string {
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] > 127) {
      ascii = false;
      break;
    }
  }
  if (ascii) return decoder.decode(bytes);
  let text = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return text;
}

function malformed(text: string): UpstreamError {
  return new UpstreamError("broken", `The upstream's answer is malformed: ${text}`);
}

/** `TOKEN_CHAR[c]` is 1 for the characters of a token (RFC 9110 5.6.2). */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN_CHAR[c.charCodeAt(0)] = 1;
}

/** The head's lines walked with `indexOf` (no split, no expression per line: it runs per answer). */
function parseHead(text: string): Head {
  let next = text.indexOf("\n");
  if (next < 0) next = text.length;
  const statusLine = text.slice(0, text.charCodeAt(next - 1) === 13 ? next - 1 : next);
  const status = STATUS_LINE.exec(statusLine);
  if (!status) throw malformed("status line");
  const headers: [string, string][] = [];
  for (let at = next + 1; at < text.length; at = next + 1) {
    next = text.indexOf("\n", at);
    if (next < 0) next = text.length;
    const stop = next > at && text.charCodeAt(next - 1) === 13 ? next - 1 : next;
    // The head ends with an empty line.
    if (stop === at) continue;
    const colon = text.indexOf(":", at);
    if (colon <= at || colon >= stop) throw malformed("header line");
    for (let i = at; i < colon; i++) {
      if (TOKEN_CHAR[text.charCodeAt(i)] !== 1) throw malformed("header name");
    }
    const value = text.slice(colon + 1, stop).trim();
    for (let i = 0; i < value.length; i++) {
      const unit = value.charCodeAt(i);
      if (unit === 13 || unit === 0) throw malformed("header value");
    }
    headers.push([text.slice(at, colon).toLowerCase(), value]);
  }
  return { version: status[1] === "1" ? 1 : 0, status: Number(status[2]), headers };
}

/** How the body of an answer is delimited (RFC 9112 6.3). */
type Framing =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

function framingOf(head: Head, method: string): { framing: Framing; reusable: boolean } {
  let reusable = head.version === 1;
  let encoding: string | undefined;
  let length: string | undefined;
  for (const [name, value] of head.headers) {
    if (name === "connection" && /(^|,)\s*close\s*(,|$)/i.test(value)) reusable = false;
    else if (name === "transfer-encoding") {
      encoding = encoding === undefined ? value : `${encoding}, ${value}`;
    } else if (name === "content-length") {
      for (const part of value.split(",")) {
        const one = part.trim();
        if (!/^[0-9]{1,15}$/.test(one)) throw malformed("Content-Length");
        if (length !== undefined && length !== one) throw malformed("conflicting Content-Length");
        length = one;
      }
    }
  }
  const status = head.status;
  if (method === "HEAD" || status === 204 || status === 304) {
    return { framing: { kind: "none" }, reusable };
  }
  if (encoding !== undefined) {
    // Transfer-Encoding wins; with a Content-Length beside it the answer is suspect: the
    // connection is not reused.
    const chunked = /(^|,)\s*chunked\s*$/i.test(encoding);
    return {
      framing: chunked ? { kind: "chunked" } : { kind: "close" },
      reusable: reusable && chunked && length === undefined,
    };
  }
  if (length !== undefined) {
    return { framing: { kind: "length", length: Number(length) }, reusable };
  }
  return { framing: { kind: "close" }, reusable: false };
}

/** Collects body bytes up to a limit. */
class Collector {
  bytes: Bytes = new Uint8Array(0);
  size = 0;
  constructor(readonly maxBytes: number) {}

  add(chunk: Uint8Array) {
    if (chunk.byteLength === 0) return;
    const size = this.size + chunk.byteLength;
    if (size > this.maxBytes) {
      throw new UpstreamError("too_large", "The upstream's answer is too large");
    }
    if (size > this.bytes.byteLength) {
      const next = new Uint8Array(
        Math.max(size, Math.min(this.maxBytes, this.bytes.byteLength * 2)),
      );
      next.set(this.bytes.subarray(0, this.size));
      this.bytes = next;
    }
    this.bytes.set(chunk, this.size);
    this.size = size;
  }

  result(): Bytes {
    return this.size === this.bytes.byteLength ? this.bytes : this.bytes.slice(0, this.size);
  }
}

/** Where an origin's connections go, and its idle ones. */
interface Endpoint {
  hostname: string;
  port: number;
  tls: boolean;
  /** The Host header. */
  host: string;
  idle: Connection[];
}

/** The HTTP/1.1 upstream client. */
export class Http1Upstream implements Upstream {
  readonly #endpoints = new Map<string, Endpoint>();
  #closed = false;
  /** Connections opened so far (for tests). */
  opened = 0;

  async send(request: UpstreamRequest): Promise<UpstreamAnswer> {
    if (UNSAFE_TARGET.test(request.target)) {
      throw new Error(`Unsafe request target ${JSON.stringify(request.target)}`);
    }
    const endpoint = this.#endpoint(request.origin);
    let connection: Connection | undefined;
    let timedOut = false;
    let abortConnect: ((error: Error) => void) | undefined;
    const clear = onDeadline(request.timeoutMs, () => {
      timedOut = true;
      connection?.close();
      abortConnect?.(new Error("The deadline passed while connecting"));
    });
    let answered = false;
    try {
      connection = this.#take(endpoint) ?? await new Promise<Connection>((resolve, reject) => {
        abortConnect = reject;
        this.#connect(endpoint).then((opened) => {
          if (timedOut) opened.close();
          resolve(opened);
        }, reject);
      });
      await this.#write(connection, request, endpoint.host);
      const { head, framing, reusable } = await this.#readHead(connection, request.method);
      answered = true;
      const body = await this.#readBody(connection, framing, request.maxBytes);
      clear();
      if (reusable && connection.start === connection.end && !timedOut) {
        this.#release(endpoint, connection);
      } else connection.close();
      return {
        status: head.status,
        headers: head.headers,
        body,
        closeDelimited: framing.kind === "close",
      };
    } catch (error) {
      clear();
      connection?.close();
      if (timedOut) {
        throw new UpstreamError("timeout", "The upstream did not answer in time", { cause: error });
      }
      if (error instanceof UpstreamError) throw error;
      if (!connection) {
        throw new UpstreamError("refused", "The upstream could not be reached", { cause: error });
      }
      throw new UpstreamError(
        answered ? "broken" : "reset",
        "The upstream broke the connection",
        { cause: error },
      );
    }
  }

  close(): void {
    this.#closed = true;
    for (const endpoint of this.#endpoints.values()) {
      for (const connection of endpoint.idle) connection.close();
      endpoint.idle.length = 0;
    }
  }

  #endpoint(origin: string): Endpoint {
    let endpoint = this.#endpoints.get(origin);
    if (!endpoint) {
      const url = new URL(origin);
      const tls = url.protocol === "https:";
      endpoint = {
        hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: Number(url.port) || (tls ? 443 : 80),
        tls,
        host: url.host,
        idle: [],
      };
      this.#endpoints.set(origin, endpoint);
    }
    return endpoint;
  }

  #take(endpoint: Endpoint): Connection | undefined {
    const idle = endpoint.idle;
    const now = performance.now();
    while (idle.length > 0) {
      const connection = idle.pop()!;
      connection.idle = false;
      if (connection.closed) continue;
      if (now - connection.idleSince > IDLE_MS) {
        connection.close();
        continue;
      }
      connection.conn.ref();
      return connection;
    }
    return undefined;
  }

  #release(endpoint: Endpoint, connection: Connection) {
    const idle = endpoint.idle;
    if (this.#closed || idle.length >= MAX_IDLE) {
      connection.close();
      return;
    }
    connection.idle = true;
    connection.idleSince = performance.now();
    connection.conn.unref();
    connection.watch(() => {
      connection.close();
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
    });
    idle.push(connection);
  }

  async #connect(endpoint: Endpoint): Promise<Connection> {
    const { hostname, port } = endpoint;
    let conn: Deno.Conn;
    if (endpoint.tls) {
      const tls = await Deno.connectTls({ hostname, port, alpnProtocols: ["http/1.1"] });
      // The handshake here, not at the first write: a refused certificate means the request
      // never left, which a write's failure could not tell.
      await tls.handshake().catch((error) => {
        tls.close();
        throw error;
      });
      conn = tls;
    } else conn = await Deno.connect({ hostname, port });
    this.opened++;
    return new Connection(conn);
  }

  async #write(connection: Connection, request: UpstreamRequest, host: string) {
    let head = `${request.method} ${request.target} HTTP/1.1\r\nhost: ${host}\r\n`;
    for (const [name, value] of request.headers) {
      // The client frames the request: a caller's framing headers would contradict it.
      if (!FRAMING.has(name)) head += `${name}: ${value}\r\n`;
    }
    const body = request.body;
    if (body && body.byteLength > 0) head += `content-length: ${body.byteLength}\r\n`;
    else if (request.method !== "GET" && request.method !== "DELETE") {
      head += "content-length: 0\r\n";
    }
    head += "\r\n";
    // Header values are byte strings (code units 0-255, as Headers holds them): one byte each.
    const size = body ? body.byteLength : 0;
    const bytes = new Uint8Array(head.length + size);
    // As UTF-8, a head of ASCII only takes one byte per character; any other character more.
    const encoded = encoder.encodeInto(head, bytes.subarray(0, head.length));
    if (encoded.read !== head.length || encoded.written !== head.length) {
      for (let i = 0; i < head.length; i++) {
        const unit = head.charCodeAt(i);
        if (unit > 255) throw new Error("A request header is not a byte string");
        bytes[i] = unit;
      }
    }
    if (body && size > 0) bytes.set(body, head.length);
    for (let written = 0; written < bytes.byteLength;) {
      written += await connection.conn.write(bytes.subarray(written));
    }
  }

  async #readHead(connection: Connection, method: string) {
    while (true) {
      let end = -1;
      let scanned = connection.start;
      while (
        (end = headEnd(
          connection.buffer,
          Math.max(connection.start, scanned - 2),
          connection.end,
        )) < 0
      ) {
        if (connection.end - connection.start > MAX_HEAD) {
          throw malformed("header section too large");
        }
        scanned = connection.end;
        if (!(await connection.fill())) {
          if (connection.end > connection.start) {
            throw new UpstreamError("reset", "The upstream closed the connection inside a head");
          }
          throw new Error("The connection was closed before an answer");
        }
      }
      if (end - connection.start > MAX_HEAD) throw malformed("header section too large");
      const head = parseHead(latin1(connection.buffer.subarray(connection.start, end)));
      connection.start = end;
      // Interim answers (100 Continue, 103 Early Hints) precede the final one.
      if (head.status >= 100 && head.status < 200) {
        if (head.status === 101) throw malformed("unexpected protocol switch");
        continue;
      }
      return { head, ...framingOf(head, method) };
    }
  }

  async #readBody(connection: Connection, framing: Framing, maxBytes: number): Promise<Bytes> {
    if (framing.kind === "none") return new Uint8Array(0);
    if (framing.kind === "length") {
      return await this.#readLength(connection, framing.length, maxBytes);
    }
    const collector = new Collector(maxBytes);
    if (framing.kind === "close") {
      while (true) {
        collector.add(connection.buffer.subarray(connection.start, connection.end));
        connection.start = connection.end;
        if (!(await connection.fill())) return collector.result();
      }
    }
    await this.#readChunked(connection, collector);
    return collector.result();
  }

  async #readLength(connection: Connection, length: number, maxBytes: number): Promise<Bytes> {
    if (length > maxBytes) {
      throw new UpstreamError("too_large", "The upstream's answer is too large");
    }
    const body: Bytes = new Uint8Array(length);
    const have = Math.min(length, connection.end - connection.start);
    body.set(connection.buffer.subarray(connection.start, connection.start + have));
    connection.start += have;
    let size = have;
    while (size < length) {
      const n = await connection.conn.read(body.subarray(size));
      if (n === null) throw malformed("answer shorter than its Content-Length");
      size += n;
    }
    return body;
  }

  /** Reads a line (without its CRLF) of at most `max` bytes. */
  async #line(connection: Connection, max: number): Promise<string> {
    while (true) {
      const at = connection.buffer.indexOf(10, connection.start);
      if (at >= 0 && at < connection.end) {
        const stop = at > connection.start && connection.buffer[at - 1] === 13 ? at - 1 : at;
        const line = latin1(connection.buffer.subarray(connection.start, stop));
        connection.start = at + 1;
        return line;
      }
      if (connection.end - connection.start > max) throw malformed("chunk line too long");
      if (!(await connection.fill())) throw malformed("chunked answer cut off");
    }
  }

  async #readChunked(connection: Connection, collector: Collector) {
    while (true) {
      const line = await this.#line(connection, 4096);
      const size = /^([0-9A-Fa-f]{1,12})[ \t]*(;.*)?$/.exec(line);
      if (!size) throw malformed("chunk size");
      let left = parseInt(size[1], 16);
      if (left === 0) break;
      while (left > 0) {
        if (connection.start === connection.end && !(await connection.fill())) {
          throw malformed("chunked answer cut off");
        }
        const take = Math.min(left, connection.end - connection.start);
        collector.add(connection.buffer.subarray(connection.start, connection.start + take));
        connection.start += take;
        left -= take;
      }
      if ((await this.#line(connection, 0)) !== "") throw malformed("chunk not ended by CRLF");
    }
    // Trailer fields, up to the empty line; not passed on.
    let trailers = 0;
    while (true) {
      const line = await this.#line(connection, MAX_HEAD);
      if (line === "") return;
      trailers += line.length;
      if (trailers > MAX_HEAD) throw malformed("trailer section too large");
    }
  }
}
