/**
 * The HTTP/1.1 wire format of the gateway's upstream client (RFC 9112), as pure functions over
 * bytes: the request head written, where an answer's head ends, the head parsed, how its body is
 * framed, and chunked framing decoded as it arrives. No I/O: the connection (connection.ts) feeds
 * them what it read, and tests and fuzzers call them directly.
 *
 * Strict where a lenient parser would let a confused answer through: a malformed status line or
 * header, a byte RFC 9110 does not allow in a header name or value, an obsolete line folding,
 * conflicting Content-Length values or a header section over 64 KiB are {@link UpstreamError}
 * `broken`; Transfer-Encoding wins over Content-Length and the connection is then not reused.
 */
import { UpstreamError, type UpstreamRequest } from "../exchange.ts";

/** Largest header section of an answer (status line and headers), and of its trailers. */
export const MAX_HEAD = 64 * 1024;
/** Longest chunk-size line (size, extensions and CRLF). */
const MAX_CHUNK_LINE = 4096;

const decoder = new TextDecoder();
const encoder = new TextEncoder();
/** Request headers the client writes itself. */
const FRAMING = new Set(["host", "content-length", "transfer-encoding", "connection"]);
/** Status codes are 100 to 599 (RFC 9110 15): a Response cannot carry any other. */
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5][0-9][0-9])(?: [^\r\n]*)?$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(;.*)?$/;
/** What a request target must not contain: it would end the request line or the head. */
// deno-lint-ignore no-control-regex
const UNSAFE_TARGET = /[\s\x00-\x1f\x7f]/;

/** A parsed answer head. */
export interface Head {
  /** The minor version: HTTP/1.0 or HTTP/1.1. */
  version: 0 | 1;
  status: number;
  /** Header pairs with lower-case names, in the order received. */
  headers: [string, string][];
}

/** How the body of an answer is delimited (RFC 9112 6.3). */
export type Framing =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

/** The answer breaks the protocol: {@link UpstreamError} `broken`. */
export function malformed(text: string): UpstreamError {
  return new UpstreamError("broken", `The upstream's answer is malformed: ${text}`);
}

/**
 * The request's head and body as bytes to write: request line, Host, the caller's headers (its
 * framing headers dropped: the client frames the request) and the body's Content-Length.
 * Throws on a target that would end the request line, and on a header that is not a byte string.
 */
export function encodeRequest(request: UpstreamRequest, host: string): Uint8Array {
  if (UNSAFE_TARGET.test(request.target)) {
    throw new Error(`Unsafe request target ${JSON.stringify(request.target)}`);
  }
  let head = `${request.method} ${request.target} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of request.headers) {
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
  return bytes;
}

/** The position after the blank line that ends a head in `b[from, to)`, or -1. */
export function headEnd(b: Uint8Array, from: number, to: number): number {
  for (let i = b.indexOf(10, from); i >= 0 && i < to; i = b.indexOf(10, i + 1)) {
    if (i + 1 < to && b[i + 1] === 10) return i + 2;
    if (i + 2 < to && b[i + 1] === 13 && b[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** Bytes as a string of code units 0-255 (header bytes are not UTF-8). */
export function latin1(bytes: Uint8Array): string {
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

/** `TOKEN_CHAR[c]` is 1 for the characters of a token (RFC 9110 5.6.2). */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN_CHAR[c.charCodeAt(0)] = 1;
}

/**
 * Whether a code unit may stand in a field value (RFC 9110 5.5): visible characters, obs-text
 * (128-255), space and tab. Any other (NUL, CR, the other controls, DEL) must never reach the
 * runtime's HTTP writer, which panics on them and takes the process down.
 */
function valueUnit(unit: number): boolean {
  return unit >= 0x20 ? unit !== 0x7f : unit === 0x09;
}

/**
 * Parses an answer head (status line, header lines, the empty line), given as the bytes
 * {@link headEnd} delimits. The lines are walked with `indexOf` (no split, no expression per
 * line: it runs per answer).
 */
export function parseHead(bytes: Uint8Array): Head {
  const text = latin1(bytes);
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
    // The value without the spaces and tabs around it (only those: RFC 9110 5.5 OWS).
    let from = colon + 1;
    let to = stop;
    while (from < to && isBlank(text.charCodeAt(from))) from++;
    while (to > from && isBlank(text.charCodeAt(to - 1))) to--;
    for (let i = from; i < to; i++) {
      if (!valueUnit(text.charCodeAt(i))) throw malformed("header value");
    }
    headers.push([text.slice(at, colon).toLowerCase(), text.slice(from, to)]);
  }
  return { version: status[1] === "1" ? 1 : 0, status: Number(status[2]), headers };
}

/** A space or a tab. */
function isBlank(unit: number): boolean {
  return unit === 0x20 || unit === 0x09;
}

/**
 * How the answer's body is framed, and whether its connection may carry another exchange: not
 * after `Connection: close`, HTTP/1.0, a body framed by the connection's end, or a
 * Transfer-Encoding beside a Content-Length.
 */
export function framingOf(head: Head, method: string): { framing: Framing; reusable: boolean } {
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

/** Where the decoding of a chunked body stands between reads. */
export interface ChunkedState {
  /**
   * What comes next: a chunk-size line, chunk data, the CRLF that ends a chunk's data, a
   * trailer line, or nothing (the body is complete).
   */
  stage: "size" | "data" | "data_end" | "trailer" | "done";
  /** Data bytes of the current chunk not read yet. */
  left: number;
  /** Bytes of trailer lines so far. */
  trailerBytes: number;
}

/** The state before the first chunk. */
export function chunkedStart(): ChunkedState {
  return { stage: "size", left: 0, trailerBytes: 0 };
}

/** Longest line of each stage, without its CRLF. */
const LINE_LIMIT = { size: MAX_CHUNK_LINE, data_end: 0, trailer: MAX_HEAD } as const;

/**
 * The line at `b[from, to)` without its line end, and the position after it; `undefined` while
 * the line is incomplete; throws when an incomplete line is already longer than `max`. A CR at
 * the end of what arrived may be the first half of the line end: it does not count.
 */
function line(
  b: Uint8Array,
  from: number,
  to: number,
  max: number,
): { text: string; next: number } | undefined {
  const at = b.indexOf(10, from);
  if (at >= 0 && at < to) {
    const stop = at > from && b[at - 1] === 13 ? at - 1 : at;
    return { text: latin1(b.subarray(from, stop)), next: at + 1 };
  }
  const length = to > from && b[to - 1] === 13 ? to - from - 1 : to - from;
  if (length > max) throw malformed("chunk line too long");
  return undefined;
}

/**
 * Decodes the chunked framing in `b[from, to)` as far as it goes: each piece of chunk data is
 * handed to `take` (a view of `b`, to be copied), `state` advances, and the position up to which
 * bytes were consumed is returned; the rest (an incomplete line) waits for more bytes. Trailer
 * fields are read and dropped. The body is complete when `state.stage` is `done`.
 */
export function decodeChunked(
  state: ChunkedState,
  b: Uint8Array,
  from: number,
  to: number,
  take: (data: Uint8Array) => void,
): number {
  let at = from;
  while (state.stage !== "done") {
    if (state.stage === "data") {
      const n = Math.min(state.left, to - at);
      if (n === 0) return at;
      take(b.subarray(at, at + n));
      at += n;
      state.left -= n;
      if (state.left === 0) state.stage = "data_end";
      continue;
    }
    const found = line(b, at, to, LINE_LIMIT[state.stage]);
    if (!found) return at;
    at = found.next;
    if (state.stage === "size") {
      const size = CHUNK_SIZE.exec(found.text);
      if (!size) throw malformed("chunk size");
      state.left = parseInt(size[1], 16);
      state.stage = state.left === 0 ? "trailer" : "data";
    } else if (state.stage === "data_end") {
      if (found.text !== "") throw malformed("chunk not ended by CRLF");
      state.stage = "size";
    } else if (found.text === "") {
      state.stage = "done";
    } else {
      state.trailerBytes += found.text.length;
      if (state.trailerBytes > MAX_HEAD) throw malformed("trailer section too large");
    }
  }
  return at;
}
