/**
 * One keep-alive connection to the upstream and the bytes read from it that are not consumed yet:
 * it writes a request and reads an answer's head and body, with the wire format's parsers
 * (wire.ts). A connection in the pool keeps a read pending while idle, so that one the upstream
 * closed is dropped at once instead of failing the next exchange.
 */
import { BodyBuffer, type Bytes, grow } from "../../lib/body.ts";
import { UpstreamError } from "../exchange.ts";
import {
  chunkedStart,
  decodeChunked,
  type Framing,
  framingOf,
  type Head,
  headEnd,
  malformed,
  MAX_HEAD,
  parseHead,
} from "./wire.ts";

/** An answer's head and what it says of the body and of the connection. */
export interface AnswerHead {
  head: Head;
  framing: Framing;
  reusable: boolean;
}

/** One connection to the upstream. */
export class Connection {
  buffer: Uint8Array = new Uint8Array(16 * 1024);
  /** Unconsumed bytes are `buffer[start, end)`. */
  start = 0;
  end = 0;
  /** The read started while idle; the next exchange takes its result first. */
  pending?: Promise<number | null>;
  idleSince = 0;
  idle = false;
  closed = false;

  constructor(readonly conn: Deno.Conn) {}

  /** Whether every byte read so far was consumed. */
  get drained(): boolean {
    return this.start === this.end;
  }

  /** Reads more bytes after `end` (making room when full); false at the end of stream. */
  async fill(): Promise<boolean> {
    let read = this.pending;
    this.pending = undefined;
    if (!read) {
      if (this.start > 0 && this.start === this.end) this.start = this.end = 0;
      if (this.end === this.buffer.byteLength) this.#makeRoom();
      read = this.conn.read(this.buffer.subarray(this.end));
    }
    const n = await read;
    if (n === null) return false;
    this.end += n;
    return true;
  }

  /** Moves the unconsumed bytes to the front, and grows the buffer when they fill it. */
  #makeRoom() {
    if (this.start > 0) {
      this.buffer.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    if (this.end === this.buffer.byteLength) {
      this.buffer = grow(this.buffer, this.end, this.end + 1);
    }
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

  /** Writes all of `bytes`. */
  async write(bytes: Uint8Array): Promise<void> {
    for (let written = 0; written < bytes.byteLength;) {
      written += await this.conn.write(bytes.subarray(written));
    }
  }

  /** Reads the final answer's head (interim 1xx answers are skipped). */
  async readHead(method: string): Promise<AnswerHead> {
    while (true) {
      let end = -1;
      let scanned = this.start;
      while ((end = headEnd(this.buffer, Math.max(this.start, scanned - 2), this.end)) < 0) {
        if (this.end - this.start > MAX_HEAD) throw malformed("header section too large");
        scanned = this.end;
        if (!(await this.fill())) {
          if (this.end > this.start) {
            throw new UpstreamError("reset", "The upstream closed the connection inside a head");
          }
          throw new Error("The connection was closed before an answer");
        }
      }
      if (end - this.start > MAX_HEAD) throw malformed("header section too large");
      const head = parseHead(this.buffer.subarray(this.start, end));
      this.start = end;
      // Interim answers (100 Continue, 103 Early Hints) precede the final one.
      if (head.status >= 100 && head.status < 200) {
        if (head.status === 101) throw malformed("unexpected protocol switch");
        continue;
      }
      return { head, ...framingOf(head, method) };
    }
  }

  /** Reads the answer's body whole; past `maxBytes` it is `BodyLimitError` `too_large`. */
  async readBody(framing: Framing, maxBytes: number): Promise<Bytes> {
    if (framing.kind === "none") return new Uint8Array(0);
    if (framing.kind === "length") return await this.#readLength(framing.length, maxBytes);
    const body = new BodyBuffer(maxBytes);
    if (framing.kind === "close") {
      while (true) {
        body.add(this.buffer.subarray(this.start, this.end));
        this.start = this.end;
        if (!(await this.fill())) return body.bytes();
      }
    }
    const state = chunkedStart();
    const take = (data: Uint8Array) => body.add(data);
    while (true) {
      this.start = decodeChunked(state, this.buffer, this.start, this.end, take);
      if (state.stage === "done") return body.bytes();
      if (!(await this.fill())) throw malformed("chunked answer cut off");
    }
  }

  async #readLength(length: number, maxBytes: number): Promise<Bytes> {
    if (length > maxBytes) {
      throw new UpstreamError("too_large", "The upstream's answer is too large");
    }
    const body: Bytes = new Uint8Array(length);
    const have = Math.min(length, this.end - this.start);
    body.set(this.buffer.subarray(this.start, this.start + have));
    this.start += have;
    let size = have;
    while (size < length) {
      const n = await this.conn.read(body.subarray(size));
      if (n === null) throw malformed("answer shorter than its Content-Length");
      size += n;
    }
    return body;
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

/** Opens a connection; over TLS the handshake is done here. */
export async function connect(
  endpoint: { hostname: string; port: number; tls: boolean },
): Promise<Connection> {
  const { hostname, port } = endpoint;
  if (!endpoint.tls) return new Connection(await Deno.connect({ hostname, port }));
  const tls = await Deno.connectTls({ hostname, port, alpnProtocols: ["http/1.1"] });
  // The handshake here, not at the first write: a refused certificate means the request never
  // left, which a write's failure could not tell.
  await tls.handshake().catch((error) => {
    tls.close();
    throw error;
  });
  return new Connection(tls);
}
