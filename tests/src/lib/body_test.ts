import assert from "node:assert/strict";
import { BodyBuffer, BodyLimitError, readBody, readLimited } from "../../../src/lib/body.ts";

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

Deno.test("readBody() cancels a body that is not received in time, so it is not held", async () => {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"access":'));
    },
    cancel() {
      cancelled = true;
    },
  });
  const request = new Request("http://127.0.0.1/v1/consents", {
    method: "POST",
    body: stream,
    headers: { "content-length": "40" },
  });
  await assert.rejects(
    readBody(request, { maxBytes: 1000, timeoutMs: 50 }),
    (error) => error instanceof BodyLimitError && error.reason === "timeout",
  );
  assert.ok(cancelled, "the body stream was cancelled");
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
