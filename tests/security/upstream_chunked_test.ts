/**
 * Issue 18.3: chunked framing split across reads. When the CR and the LF that end a chunk's data
 * came in separate TCP segments, the answer failed with "chunk line too long" (503; for a write,
 * "outcome unknown"). Any split of any framing byte sequence must parse: these tests feed answers
 * byte by byte.
 */
import assert from "node:assert/strict";
import { rawAnswer, type RawPart, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy } from "../support/policies.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

function policy(client: "http1" | "fetch") {
  return buildPolicy({ upstream: { url: "${UPSTREAM_URL}", client } });
}

const BODY = JSON.stringify({ transactionStatus: "RCVD", paymentId: "pay-1" });

/** The chunked answer of a created payment: two chunks, an extension and a trailer. */
const CHUNKED =
  rawAnswer(201, ["content-type: application/json", "transfer-encoding: chunked"], "", {
    length: false,
  }) +
  `10;ext=1\r\n${BODY.slice(0, 16)}\r\n${(BODY.length - 16).toString(16)}\r\n${
    BODY.slice(16)
  }\r\n0\r\nx-trailer: t\r\n\r\n`;

/** The answer one byte per write, each after a pause, so that each arrives in its own read. */
function byteByByte(answer: string): RawPart[] {
  return [...answer].map((byte) => ({ bytes: byte, delayMs: 1 }));
}

async function pay(gateway: { fetch(path: string, init?: RequestInit): Promise<Response> }) {
  return await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
    body: JSON.stringify(singlePayment()),
  });
}

Deno.test("a chunk's CR and LF in separate reads: the payment's answer passes, not 503 outcome unknown", async () => {
  const end = CHUNKED.indexOf(BODY.slice(0, 16)) + 16;
  await using core = startFaultyUpstream({
    kind: "raw",
    // Everything up to the CR after the first chunk's data, then the rest a moment later.
    parts: [{ bytes: CHUNKED.slice(0, end + 1) }, { bytes: CHUNKED.slice(end + 1), delayMs: 50 }],
  });
  await using gateway = await startGateway({ policy: policy("http1"), upstream: core.url });
  const response = await pay(gateway);
  assert.equal(response.status, 201);
  assert.equal(await response.text(), BODY);
  assert.equal(core.requests.length, 1);
});

Deno.test("answers fed byte by byte pass whole through both clients: chunked, by length, by the end, after 1xx", async () => {
  const answers: [string, string][] = [
    ["chunked", CHUNKED],
    ["length", rawAnswer(201, ["content-type: application/json"], BODY)],
    ["interim", "HTTP/1.1 100 Continue\r\n\r\n" + rawAnswer(201, [], BODY)],
    ["bare LF", rawAnswer(201, [], BODY).replaceAll("\r\n", "\n")],
    [
      "close",
      rawAnswer(201, ["content-type: application/json", "connection: close"], BODY, {
        length: false,
      }),
    ],
  ];
  for (const client of ["http1", "fetch"] as const) {
    for (const [name, answer] of answers) {
      await using core = startFaultyUpstream({
        kind: "raw",
        parts: byteByByte(answer),
        then: name === "close" ? "close" : "keep",
      });
      await using gateway = await startGateway({ policy: policy(client), upstream: core.url });
      const response = await pay(gateway);
      assert.equal(response.status, 201, `${client} ${name}`);
      assert.equal(await response.text(), BODY, `${client} ${name}`);
      assert.equal(core.requests.length, 1, `${client} ${name}: executed once`);
    }
  }
});
