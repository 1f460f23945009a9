/**
 * Attacks on who is calling (issue 18 items 4, 5, 6, 9, 12, 16; issue 22 item 2): one test per
 * attack, each asserting the answer the attacker gets and what did or did not reach the core (a
 * recording upstream on 127.0.0.1).
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { type Recorded, startUpstream } from "../support/upstream.ts";
import { initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";

const encoder = new TextEncoder();
const PAYMENT_DIGEST = await digestOf(encoder.encode(PAYMENT_BODY));

/** What the attacker got and what reached the core. */
interface Outcome {
  status: number;
  body: { tppMessages?: { code: string; path?: string; text: string }[] };
  headers: Headers;
  received: Recorded[];
}

/** Sends one request through a gateway with `policy` (default: config/policy.yaml). */
async function send(
  path: string,
  init: RequestInit,
  options: { policy?: string; env?: Record<string, string> } = {},
): Promise<Outcome> {
  await using upstream = startUpstream(() => Response.json({ ok: true }, { status: 201 }));
  await using gateway = await startGateway({
    policy: options.policy,
    upstream: upstream.url,
    env: options.env,
  });
  const response = await gateway.fetch(path, init);
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : {},
    headers: response.headers,
    received: upstream.received,
  };
}

/** The first tppMessage's code and path. */
function message(outcome: Outcome) {
  const [first] = outcome.body.tppMessages ?? [];
  return { status: outcome.status, code: first?.code, path: first?.path };
}

// Item 12: Digest amplification.

Deno.test("digest: 300 copies of one value are refused unread, before any hashing", async () => {
  const outcome = await send(PAYMENT_TARGET, {
    method: "POST",
    headers: {
      ...initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      digest: Array(300).fill(PAYMENT_DIGEST).join(","),
      "x-jws-signature": "e30..c2ln",
    },
    body: PAYMENT_BODY,
  });
  assert.deepEqual(message(outcome), { status: 400, code: "FORMAT_ERROR", path: "Digest" });
  assert.match(outcome.body.tppMessages![0].text, /at most 256 characters/);
  assert.equal(outcome.received.length, 0);
});

Deno.test("digest: an algorithm given twice is refused", async () => {
  const outcome = await send(PAYMENT_TARGET, {
    method: "POST",
    headers: {
      ...initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      digest: `${PAYMENT_DIGEST}, ${PAYMENT_DIGEST.replace("SHA-256", "sha-256")}`,
      "x-jws-signature": "e30..c2ln",
    },
    body: PAYMENT_BODY,
  });
  assert.deepEqual(message(outcome), { status: 400, code: "FORMAT_ERROR", path: "Digest" });
  assert.match(outcome.body.tppMessages![0].text, /"SHA-256" at most once/);
  assert.equal(outcome.received.length, 0);
});
