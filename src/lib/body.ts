/**
 * Reading a byte stream whole, with a size limit and a deadline: the one way the gateway reads
 * request and upstream response bodies.
 */
import { onDeadline } from "./deadline.ts";

/** Why a limited read stopped early. */
export class BodyLimitError extends Error {
  constructor(readonly reason: "too_large" | "timeout") {
    super(reason === "too_large" ? "Body exceeds the size limit" : "Body not received in time");
    this.name = "BodyLimitError";
  }
}

/** Bytes of a body, always backed by an ArrayBuffer (what fetch and Response accept). */
export type Bytes = Uint8Array<ArrayBuffer>;

const EMPTY: Bytes = new Uint8Array(0);

/**
 * Reads a request's or response's body whole: at once when its Content-Length is known, within
 * the limit and no deadline is set (the fast native path), else chunk by chunk with
 * {@link readLimited}, which cancels the body when it stops early.
 */
export async function readBody(
  message: Request | Response,
  limits: { maxBytes: number; timeoutMs?: number },
): Promise<Bytes> {
  // `.body` is not touched on the fast path: the getter builds a stream, and a body read through
  // a stream is slower than `bytes()`.
  const declared = message.headers.get("content-length");
  if (declared === null) return message.body ? readLimited(message.body, limits) : EMPTY;
  if (Number(declared) > limits.maxBytes) {
    await message.body?.cancel().catch(() => {});
    throw new BodyLimitError("too_large");
  }
  if (limits.timeoutMs === undefined) return await message.bytes() as Bytes;
  // With a deadline, through a reader that can be cancelled: a `bytes()` still waiting for a slow
  // client cannot be stopped, and would keep reading (and holding) its body after the 408.
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
 * timer from running.
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  limits: { maxBytes: number; timeoutMs?: number },
): Promise<Bytes> {
  if (!stream) return EMPTY;
  const reader = stream.getReader();
  const until = limits.timeoutMs === undefined ? Infinity : performance.now() + limits.timeoutMs;
  let timedOut = false;
  const clear = limits.timeoutMs === undefined ? undefined : onDeadline(limits.timeoutMs, () => {
    timedOut = true;
    reader.cancel().catch(() => {});
  });
  let first: Bytes | undefined;
  let whole: Bytes = EMPTY;
  let size = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (timedOut || performance.now() > until) throw new BodyLimitError("timeout");
      if (done) break;
      if (size + value.byteLength > limits.maxBytes) throw new BodyLimitError("too_large");
      if (size === 0 && first === undefined) {
        // One chunk is the common case: kept as it is, no copy.
        first = value as Bytes;
        size = value.byteLength;
        continue;
      }
      if (first !== undefined) {
        whole = grow(EMPTY, 0, size + value.byteLength, limits.maxBytes);
        whole.set(first);
        first = undefined;
      } else if (size + value.byteLength > whole.byteLength) {
        whole = grow(whole, size, size + value.byteLength, limits.maxBytes);
      }
      whole.set(value, size);
      size += value.byteLength;
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clear?.();
  }
  if (first !== undefined) return first;
  return size === whole.byteLength ? whole : whole.slice(0, size);
}

/** A buffer of at least `needed` bytes (doubling, at most `max`) holding the first `used` bytes. */
function grow(buffer: Bytes, used: number, needed: number, max: number): Bytes {
  const grown = new Uint8Array(Math.min(max, Math.max(needed, buffer.byteLength * 2, 16_384)));
  grown.set(buffer.subarray(0, used));
  return grown;
}
