/**
 * Security: a request body in tiny chunks. Every chunk Deno's server hands over costs the gateway's
 * thread a callback, about 8 us however small the chunk: a megabyte sent in one-byte chunks (6 MB
 * on the wire) kept the thread busy for 8.5 s of CPU before its 413, and slowed every other request
 * meanwhile (a GET beside it waited 0.5 s); 750 KB/s of such uploads kept the gateway saturated. A
 * body whose chunks average fewer than `body_limit.min_chunk_bytes` (64) past its first 16 is now
 * refused there, over a real connection as a TPP would send it.
 */
import assert from "node:assert/strict";
import { fuzzRig, sendRaw } from "../support/fuzz.ts";
import { singlePayment } from "../support/requests.ts";

const HEADERS: [string, string][] = [
  ["psu-ip-address", "192.168.8.78"],
  ["content-type", "application/json"],
  ["tpp-redirect-uri", "https://tpp.example/return"],
];

function post(port: number, body: string, chunks: number[]) {
  return sendRaw(port, {
    method: "POST",
    target: "/v1/payments/sepa-credit-transfers",
    headers: [["x-request-id", crypto.randomUUID()], ...HEADERS],
    body,
    chunks,
  });
}

const FRAGMENTED = {
  category: "ERROR",
  code: "FORMAT_ERROR",
  path: "body",
  text:
    "The request body arrived in pieces of fewer than 64 bytes on average; send it with Content-Length or in larger chunks",
};

Deno.test("a payment in one-byte chunks is refused (400 body), never forwarded; in chunks of 64 bytes it passes", async () => {
  await using rig = await fuzzRig();
  const port = Number(new URL(rig.gateway.url).port);
  const body = JSON.stringify(singlePayment());
  const tiny = await post(port, body, [1]);
  assert.equal(tiny.status, 400);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(tiny.body)).tppMessages, [FRAGMENTED]);
  assert.equal(rig.upstream.received.length, 0);
  const even = await post(port, body, [64]);
  assert.equal(even.status, 201);
  assert.equal(rig.upstream.received.length, 1);
});

Deno.test("a megabyte in one-byte chunks is refused after its first chunks (400), not read to its 413", async () => {
  await using rig = await fuzzRig();
  const port = Number(new URL(rig.gateway.url).port);
  const answer = await post(port, "x".repeat(1_048_577), [1]);
  assert.equal(answer.status, 400);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(answer.body)).tppMessages, [FRAGMENTED]);
  assert.equal(rig.upstream.received.length, 0);
});
