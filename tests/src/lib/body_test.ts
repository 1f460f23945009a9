import assert from "node:assert/strict";
import {
  BodyBuffer,
  BodyLimitError,
  FREE_PIECES,
  readBody,
  readLimited,
  SMALL_BODY_BYTES,
} from "../../../src/lib/body.ts";

/** A stream that never pauses: one-byte chunks, always ready, `total` of them (or forever). */
function oneByteChunks(total = Infinity): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ < total) controller.enqueue(new Uint8Array([97]));
      else controller.close();
    },
  });
}

Deno.test("readLimited() keeps its deadline when the stream never pauses", async () => {
  // Found by fuzzing (a chunked upload in one-byte chunks): the deadline timer never ran while
  // chunks kept coming, and the read went on until the size limit instead.
  const error = await readLimited(oneByteChunks(), { maxBytes: 400_000, timeoutMs: 50 }).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(error instanceof BodyLimitError, String(error));
  assert.equal(error.reason, "timeout");
});

Deno.test("readLimited() puts many small chunks together byte for byte", async () => {
  const bytes = await readLimited(oneByteChunks(100_000), { maxBytes: 100_000 });
  assert.equal(bytes.byteLength, 100_000);
  assert.ok(bytes.every((b) => b === 97));
  await assert.rejects(
    readLimited(oneByteChunks(100_001), { maxBytes: 100_000 }),
    (e) => e instanceof BodyLimitError && e.reason === "too_large",
  );
});

/** `count` chunks, the i-th (from 0) of `size(i)` bytes; `pulled` counts the chunks handed over. */
function pieces(count: number, size: (i: number) => number) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled < count) controller.enqueue(new Uint8Array(size(pulled++)));
      else controller.close();
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled };
}

const fragmented = (e: unknown) => e instanceof BodyLimitError && e.reason === "fragmented";

Deno.test("readLimited() stops a body in pieces averaging under minPieceBytes once its free pieces are read", async () => {
  const read = (count: number, size: (i: number) => number) =>
    readLimited(pieces(count, size).stream, { maxBytes: 1_000_000, minPieceBytes: 64 });
  // A megabyte in one-byte chunks: refused at the first piece past the free ones, not read whole.
  const tiny = pieces(1_048_576, () => 1);
  await assert.rejects(
    readLimited(tiny.stream, { maxBytes: 2_000_000, minPieceBytes: 64 }),
    fragmented,
  );
  assert.equal(tiny.pulled(), FREE_PIECES + 1);
  await assert.rejects(read(100, () => 63), fragmented);
  // The free pieces alone pass however small they are, and so do pieces of the bound's size,
  // the last one short.
  assert.equal((await read(FREE_PIECES, () => 1)).byteLength, FREE_PIECES);
  const even = await read(FREE_PIECES + 1, (i) => i < FREE_PIECES ? 64 : 1);
  assert.equal(even.byteLength, FREE_PIECES * 64 + 1);
  // Exactly at the bound passes: 16 one-byte pieces and one of 1008 bytes make 1024 = 16 * 64.
  const bound = await read(FREE_PIECES + 1, (i) => i < FREE_PIECES ? 1 : FREE_PIECES * 63);
  assert.equal(bound.byteLength, FREE_PIECES * 64);
  // Small pieces early are made up for by a large one after them.
  const made = await read(100, (i) => i < FREE_PIECES ? 1 : 2048);
  assert.equal(made.byteLength, FREE_PIECES + (100 - FREE_PIECES) * 2048);
  // Without the bound (the upstream's answers), one-byte pieces are read whole.
  const unbounded = await readLimited(pieces(1000, () => 1).stream, { maxBytes: 100_000 });
  assert.equal(unbounded.byteLength, 1000);
});

Deno.test("readLimited() returns a single chunk as it is and an empty stream as no bytes", async () => {
  const chunk = new Uint8Array([1, 2, 3]);
  const one = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(chunk);
      controller.close();
    },
  });
  assert.equal(await readLimited(one, { maxBytes: 10 }), chunk);
  const none = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  assert.equal((await readLimited(none, { maxBytes: 10 })).byteLength, 0);
  assert.equal((await readLimited(null, { maxBytes: 10 })).byteLength, 0);
});

/** A request whose body sends its first bytes and then waits; `events` records what it saw. */
function stalledRequest(declared: number) {
  const events: string[] = [];
  let stream!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller;
      controller.enqueue(new TextEncoder().encode('{"access":'));
    },
    cancel() {
      events.push("cancelled");
    },
  });
  const request = new Request("http://127.0.0.1/v1/consents", {
    method: "POST",
    body,
    headers: { "content-length": String(declared) },
  });
  return { request, events, breakOff: () => stream.error(new Error("connection reset")) };
}

Deno.test("readBody() cancels a large body that is not received in time, so it is not held", async () => {
  const { request, events } = stalledRequest(SMALL_BODY_BYTES + 1);
  await assert.rejects(
    readBody(request, { maxBytes: 100_000, timeoutMs: 50 }),
    (error) => error instanceof BodyLimitError && error.reason === "timeout",
  );
  assert.deepEqual(events, ["cancelled"]);
});

Deno.test("readBody() gives up on a small body at its deadline, and a later break is no crash", async () => {
  const { request, events, breakOff } = stalledRequest(SMALL_BODY_BYTES);
  const started = performance.now();
  await assert.rejects(
    readBody(request, { maxBytes: 100_000, timeoutMs: 50 }),
    (error) => error instanceof BodyLimitError && error.reason === "timeout",
  );
  assert.ok(performance.now() - started >= 50, "not before the deadline");
  // Read at once (it cannot be cancelled): the client's break after the 408 must not surface as
  // an unhandled rejection, which would end the process (and fail this test).
  assert.deepEqual(events, []);
  breakOff();
  await new Promise((resolve) => setTimeout(resolve, 10));
});

Deno.test("readBody() reads a small body at once and a large one through its stream alike", async () => {
  for (const size of [1, SMALL_BODY_BYTES, SMALL_BODY_BYTES + 1, 3 * SMALL_BODY_BYTES]) {
    const sent = new Uint8Array(size).map((_, i) => i % 251);
    const request = new Request("http://127.0.0.1/v1/consents", {
      method: "POST",
      body: sent,
      headers: { "content-length": String(size) },
    });
    assert.deepEqual(await readBody(request, { maxBytes: 100_000, timeoutMs: 1000 }), sent);
  }
});

Deno.test("BodyBuffer copies pieces it does not own, and keeps an owned first piece as it is", () => {
  const piece = new Uint8Array([1, 2, 3]);
  const copied = new BodyBuffer(10);
  copied.add(piece);
  piece[0] = 9;
  assert.deepEqual(copied.bytes(), new Uint8Array([1, 2, 3]));
  const owned = new BodyBuffer(10);
  owned.add(piece, { owned: true });
  assert.equal(owned.bytes(), piece);
  owned.add(new Uint8Array([4]));
  assert.deepEqual(owned.bytes(), new Uint8Array([9, 2, 3, 4]));
  assert.throws(
    () => owned.add(new Uint8Array(7)),
    (e) => e instanceof BodyLimitError && e.reason === "too_large",
  );
});

/** A request with `body` as a stream of one chunk, with or without its Content-Length. */
function streamed(body: Uint8Array, declared?: number) {
  const events: string[] = [];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(body);
      controller.close();
    },
    cancel() {
      events.push("cancelled");
    },
  });
  const headers: Record<string, string> = declared === undefined
    ? {}
    : { "content-length": String(declared) };
  const request = new Request("http://127.0.0.1/v1/consents", {
    method: "POST",
    body: stream,
    headers,
  });
  return { request, events };
}

Deno.test("readBody() holds a body without a Content-Length to the limit", async () => {
  const { request } = streamed(new Uint8Array(11));
  await assert.rejects(
    readBody(request, { maxBytes: 10 }),
    (error) => error instanceof BodyLimitError && error.reason === "too_large",
  );
  const fits = streamed(new Uint8Array([1, 2, 3])).request;
  assert.deepEqual(await readBody(fits, { maxBytes: 3 }), new Uint8Array([1, 2, 3]));
});

Deno.test("readBody() refuses a declared length over the limit without reading, and cancels it", async () => {
  const { request, events } = streamed(new Uint8Array(11), 11);
  await assert.rejects(
    readBody(request, { maxBytes: 10, timeoutMs: 1000 }),
    (error) => error instanceof BodyLimitError && error.reason === "too_large",
  );
  assert.deepEqual(events, ["cancelled"]);
  const exact = streamed(new Uint8Array(10), 10).request;
  assert.equal((await readBody(exact, { maxBytes: 10, timeoutMs: 1000 })).byteLength, 10);
});

Deno.test("readBody() without a deadline reads a declared body whole", async () => {
  const sent = new Uint8Array(SMALL_BODY_BYTES + 5).fill(7);
  for (const body of [sent.subarray(0, 5), sent]) {
    const { request } = streamed(body, body.byteLength);
    assert.deepEqual(await readBody(request, { maxBytes: 100_000 }), body);
  }
});

Deno.test("readBody() passes on at once the break of a small body before its deadline", async () => {
  const { request, breakOff } = stalledRequest(100);
  const reading = readBody(request, { maxBytes: 1000, timeoutMs: 5000 });
  breakOff();
  // The break's own error, not the deadline's BodyLimitError ("timeout"), ended the read.
  await assert.rejects(reading, (error) => !(error instanceof BodyLimitError));
});

Deno.test("readBody() without a deadline waits for a slow small body", async () => {
  const first = new TextEncoder().encode('{"access":');
  const rest = new TextEncoder().encode("{}}");
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first);
      setTimeout(() => {
        controller.enqueue(rest);
        controller.close();
      }, 100);
    },
  });
  const request = new Request("http://127.0.0.1/v1/consents", {
    method: "POST",
    body,
    headers: { "content-length": String(first.byteLength + rest.byteLength) },
  });
  const bytes = await readBody(request, { maxBytes: 1000 });
  assert.equal(new TextDecoder().decode(bytes), '{"access":{}}');
});

Deno.test("readBody() refuses a declared length over the limit when there is no body to cancel", async () => {
  const request = new Request("http://127.0.0.1/v1/consents", {
    method: "POST",
    headers: { "content-length": "11" },
  });
  await assert.rejects(
    readBody(request, { maxBytes: 10 }),
    (error) => error instanceof BodyLimitError && error.reason === "too_large",
  );
});
