/**
 * Reading a byte stream whole, with a size limit and a deadline: the one way the gateway reads
 * request and upstream response bodies.
 */

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
 * Reads a request's or response's body whole: at once when its Content-Length is known and within
 * the limit (the fast native path), else chunk by chunk with {@link readLimited}.
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
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyLimitError("timeout")), limits.timeoutMs);
  });
  try {
    return await Promise.race([message.bytes(), deadline]) as Bytes;
  } catch (error) {
    message.body?.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads a stream to the end; throws {@link BodyLimitError} past `maxBytes` or after `timeoutMs`.
 * Errors of the stream itself (a reset connection) are thrown as they are.
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  limits: { maxBytes: number; timeoutMs?: number },
): Promise<Bytes> {
  if (!stream) return EMPTY;
  const reader = stream.getReader();
  const chunks: Bytes[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = limits.timeoutMs === undefined ? undefined : new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyLimitError("timeout")), limits.timeoutMs);
  });
  try {
    while (true) {
      const { done, value } = deadline
        ? await Promise.race([reader.read(), deadline])
        : await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBytes) throw new BodyLimitError("too_large");
      chunks.push(value as Bytes);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return chunks[0];
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}
