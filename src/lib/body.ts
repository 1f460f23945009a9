/**
 * Reading a byte stream whole, with a size limit and a deadline: the one way the gateway reads
 * request and upstream response bodies.
 */
import { onDeadline, withDeadline } from "./deadline.ts";

const REASONS = {
  too_large: "Body exceeds the size limit",
  timeout: "Body not received in time",
  fragmented: "Body arrives in pieces too small",
};

/** Why a limited read stopped early. */
export class BodyLimitError extends Error {
  constructor(readonly reason: keyof typeof REASONS) {
    super(REASONS[reason]);
    this.name = "BodyLimitError";
  }
}

/** What a limited read allows: size, time, and the least average size of its pieces. */
export interface BodyLimits {
  maxBytes: number;
  timeoutMs?: number;
  /**
   * Least average bytes per piece (the last one aside), held from piece {@link FREE_PIECES} + 1 on:
   * below it the read stops with `fragmented`. Every piece a stream hands over costs the gateway's
   * thread a callback (about 8 us): a megabyte in one-byte chunks took 8.5 s of CPU.
   */
  minPieceBytes?: number;
}

/** Pieces of a body read before their average size is held to `minPieceBytes`. */
export const FREE_PIECES = 16;

/** Bytes of a body, always backed by an ArrayBuffer (what fetch and Response accept). */
export type Bytes = Uint8Array<ArrayBuffer>;

const EMPTY: Bytes = new Uint8Array(0);

/**
 * Declared bodies up to this size are read at once even with a deadline (see {@link readBody}):
 * every single payment, consent, authorisation and checkout order the documents show fits.
 */
export const SMALL_BODY_BYTES = 16_384;

/**
 * Reads a request's or response's body whole. A body with a Content-Length within the limit is
 * read at once (`bytes()`, the runtime's native path) when no deadline is set or the body is
 * small ({@link SMALL_BODY_BYTES}); any other is read chunk by chunk with {@link readLimited},
 * which cancels the body when it stops early.
 *
 * A `bytes()` cannot be stopped: after the deadline of a small body, what the client still sends
 * (never more than its declared length) is read and dropped when it ends or the connection
 * closes. Through a stream, a payment initiation's body cost about 10 us more CPU
 * (docs/performance.md); the larger bodies, whose holding would matter, still go that way.
 */
export async function readBody(message: Request | Response, limits: BodyLimits): Promise<Bytes> {
  // `.body` is not touched on the fast path: the getter builds a stream.
  const declared = message.headers.get("content-length");
  if (declared === null) return message.body ? readLimited(message.body, limits) : EMPTY;
  const length = Number(declared);
  if (length > limits.maxBytes) {
    await message.body?.cancel().catch(() => {});
    throw new BodyLimitError("too_large");
  }
  if (limits.timeoutMs === undefined) return await message.bytes() as Bytes;
  if (length <= SMALL_BODY_BYTES) {
    // A read the client breaks off after the deadline rejects into a promise already settled,
    // never as an unhandled rejection.
    return await withDeadline(
      message.bytes() as Promise<Bytes>,
      limits.timeoutMs,
      () => new BodyLimitError("timeout"),
    );
  }
  return readLimited(message.body, limits);
}

/**
 * Reads a stream to the end; throws {@link BodyLimitError} past `maxBytes` or after `timeoutMs`.
 * Errors of the stream itself (a reset connection) are thrown as they are.
 *
 * Chunks are copied into one growing buffer rather than kept: a chunked upload in one-byte chunks
 * would otherwise leave hundreds of thousands of small buffers alive, whose garbage collection
 * made the read quadratic (a 160 kB body took 50 s). The deadline is checked after every chunk as
 * well as by a timer (shared, `src/deadline.ts`), because a stream that never pauses can keep the
 * timer from running. Past {@link FREE_PIECES} chunks their average size is held to
 * `minPieceBytes`, because each chunk costs a callback however small it is.
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  limits: BodyLimits,
): Promise<Bytes> {
  if (!stream) return EMPTY;
  const reader = stream.getReader();
  const until = limits.timeoutMs === undefined ? Infinity : performance.now() + limits.timeoutMs;
  let timedOut = false;
  const clear = limits.timeoutMs === undefined ? undefined : onDeadline(limits.timeoutMs, () => {
    timedOut = true;
    reader.cancel().catch(() => {});
  });
  const body = new BodyBuffer(limits.maxBytes);
  const least = limits.minPieceBytes ?? 0;
  let pieces = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (timedOut || performance.now() > until) throw new BodyLimitError("timeout");
      if (done) break;
      // A stream hands each chunk over: the first may be kept as it is.
      body.add(value, { owned: true });
      // The piece just read is not counted against the average: it may be the last, short one.
      if (++pieces > FREE_PIECES && body.size < (pieces - 1) * least) {
        throw new BodyLimitError("fragmented");
      }
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clear?.();
  }
  return body.bytes();
}

/**
 * Bytes appended into one growing buffer, within a size limit: what a body read in pieces (a
 * stream's chunks, the upstream client's reads) is put together in. The buffer doubles, so a body
 * in many small pieces costs linear time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BodyBuffer } from "./body.ts";
 *
 * const body = new BodyBuffer(1024);
 * body.add(new Uint8Array([1, 2]));
 * body.add(new Uint8Array([3]));
 * assert.deepEqual(body.bytes(), new Uint8Array([1, 2, 3]));
 * ```
 */
export class BodyBuffer {
  /** A first piece kept as it was handed over (the common case of one piece: no copy). */
  #first: Bytes | undefined;
  #whole: Bytes = EMPTY;
  #size = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes added so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends a piece; throws {@link BodyLimitError} `too_large` past `maxBytes`. The piece is
   * copied, unless it is `owned` (never written to again by the caller) and the first one.
   */
  add(piece: Uint8Array, options?: { owned?: boolean }): void {
    if (piece.byteLength === 0) return;
    const size = this.#size + piece.byteLength;
    if (size > this.maxBytes) throw new BodyLimitError("too_large");
    if (this.#size === 0 && options?.owned) {
      this.#first = piece as Bytes;
      this.#size = size;
      return;
    }
    if (this.#first !== undefined) {
      this.#whole = grow(EMPTY, 0, size, this.maxBytes);
      this.#whole.set(this.#first);
      this.#first = undefined;
    } else if (size > this.#whole.byteLength) {
      this.#whole = grow(this.#whole, this.#size, size, this.maxBytes);
    }
    this.#whole.set(piece, this.#size);
    this.#size = size;
  }

  /** The bytes added, in one buffer of their exact length. */
  bytes(): Bytes {
    if (this.#first !== undefined) return this.#first;
    return this.#size === this.#whole.byteLength ? this.#whole : this.#whole.slice(0, this.#size);
  }
}

/**
 * A buffer of at least `needed` bytes (doubling, at least 16 KiB, at most `max`) holding the first
 * `used` bytes of `buffer`: how every growing byte buffer of the gateway grows.
 */
export function grow(buffer: Uint8Array, used: number, needed: number, max = Infinity): Bytes {
  const grown = new Uint8Array(Math.min(max, Math.max(needed, buffer.byteLength * 2, 16_384)));
  grown.set(buffer.subarray(0, used));
  return grown;
}
