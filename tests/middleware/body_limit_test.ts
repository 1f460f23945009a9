import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { sendRaw } from "../support/fuzz.ts";

const ID = "0d9e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a";
const POLICY = passthroughPolicy({
  defaults: { body_limit: { max_bytes: 64, read_timeout: "300ms" } },
});

Deno.test("bodyLimit() answers 413 beyond max_bytes and forwards nothing", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const response = await gateway.fetch("/v1/consents", {
    method: "POST",
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body: JSON.stringify({ padding: "x".repeat(100) }),
  });
  assert.equal(response.status, 413);
  assert.deepEqual((await response.json()).tppMessages[0], {
    category: "ERROR",
    code: "PAYLOAD_TOO_LARGE",
    text: "The request body must not exceed 64 bytes",
  });
  assert.equal(upstream.received.length, 0);
  // A chunked upload without Content-Length is cut off at the same limit.
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode("x".repeat(20)));
      controller.close();
    },
  });
  const chunked = await gateway.fetch("/v1/consents", {
    method: "POST",
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body: stream,
  });
  assert.equal(chunked.status, 413);
  await chunked.body?.cancel();
  assert.equal(upstream.received.length, 0);
});

Deno.test("bodyLimit() forwards the exact bytes it read", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const body = '{"a": "ünïcode",\n "b": 1}';
  const response = await gateway.fetch("/v1/consents", {
    method: "POST",
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body,
  });
  await response.body?.cancel();
  assert.equal(upstream.received[0].body, body);
});

/**
 * Sends a request head and the first bytes of its body on a raw connection and reads the answer
 * (up to its Content-Length: the server may keep the connection open for the rest of the body).
 */
async function partialUpload(base: string, head: string, first: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(base).port) });
  // No answer within 5 s fails the test instead of hanging it.
  const bound = setTimeout(() => conn.close(), 5000);
  await conn.write(new TextEncoder().encode(head + first));
  const started = performance.now();
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of conn.readable.values({ preventCancel: true })) {
    text += decoder.decode(chunk, { stream: true });
    const end = text.indexOf("\r\n\r\n");
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
    if (end >= 0 && text.length - end - 4 >= length) break;
  }
  clearTimeout(bound);
  conn.close();
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  return {
    status: Number(text.split(" ")[1]),
    body: JSON.parse(body),
    ms: performance.now() - started,
  };
}

Deno.test("bodyLimit() answers 408 REQUEST_TIMEOUT to a body not received in time", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const head = "POST /v1/consents HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
    `X-Request-ID: ${ID}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n`;
  const answer = await partialUpload(gateway.url, head, '{"access":');
  assert.equal(answer.status, 408);
  assert.deepEqual(answer.body.tppMessages[0], {
    category: "ERROR",
    code: "REQUEST_TIMEOUT",
    text: "The request body was not received in time",
  });
  assert.ok(answer.ms >= 250, `answered after ${answer.ms} ms, before the read deadline`);
  assert.equal(upstream.received.length, 0);
});

/** A streamed body of `count` pieces of `size` bytes of JSON whitespace around `{}`. */
function inPieces(count: number, size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === count) return controller.close();
      const piece = new Uint8Array(size).fill(0x20);
      if (sent === 0) piece[0] = 0x7b; // {
      if (sent === count - 1) piece[size - 1] = 0x7d; // }
      controller.enqueue(piece);
      sent++;
    },
  }, { highWaterMark: 0 });
}

Deno.test("bodyLimit() answers 400 to a body in pieces smaller than min_chunk_bytes, and forwards it when they are not", async () => {
  await using upstream = startUpstream();
  const policy = (min?: number) =>
    passthroughPolicy({
      defaults: {
        body_limit: { max_bytes: 100_000, ...(min === undefined ? {} : { min_chunk_bytes: min }) },
      },
    });
  const post = (
    gateway: { fetch(path: string, init?: RequestInit): Promise<Response> },
    body: ReadableStream,
  ) =>
    gateway.fetch("/v1/consents", {
      method: "POST",
      headers: { "x-request-id": crypto.randomUUID(), "content-type": "application/json" },
      body,
    });
  {
    // The default, 64 bytes: 200 pieces of 2 bytes are refused, 30 pieces of 64 pass.
    await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
    const small = await post(gateway, inPieces(200, 2));
    assert.equal(small.status, 400);
    assert.deepEqual((await small.json()).tppMessages[0], {
      category: "ERROR",
      code: "FORMAT_ERROR",
      path: "body",
      text:
        "The request body arrived in pieces of fewer than 64 bytes on average; send it with Content-Length or in larger chunks",
    });
    assert.equal(upstream.received.length, 0);
    const even = await post(gateway, inPieces(30, 64));
    await even.body?.cancel();
    assert.equal(even.status, 200);
    assert.equal(upstream.received.at(-1)?.body.length, 30 * 64);
  }
  {
    // 0 lifts the bound: the same small pieces are read whole and forwarded.
    await using gateway = await startGateway({ policy: policy(0), upstream: upstream.url });
    const small = await post(gateway, inPieces(200, 2));
    await small.body?.cancel();
    assert.equal(small.status, 200);
    assert.equal(upstream.received.at(-1)?.body.length, 400);
  }
});

Deno.test("bodyLimit() answers 400 to a body the client breaks off before its declared length", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const answer = await sendRaw(Number(new URL(gateway.url).port), {
    method: "POST",
    target: "/v1/consents",
    headers: [["x-request-id", ID], ["content-type", "application/json"]],
    body: '{"access": {"allPsd2": "allAccounts"}}',
    truncateAt: 10,
  });
  assert.equal(answer.status, 400);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(answer.body)).tppMessages[0], {
    category: "ERROR",
    code: "FORMAT_ERROR",
    path: "body",
    text: "The request body ended before it was complete",
  });
  assert.equal(upstream.received.length, 0);
});
