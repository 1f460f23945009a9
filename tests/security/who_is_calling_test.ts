/**
 * Attacks on who is calling (issue 18 items 4, 5, 6, 9, 12, 16; issue 22 item 2): one test per
 * attack, each asserting the answer the attacker gets and what did or did not reach the core (a
 * recording upstream on 127.0.0.1).
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { startGateway } from "../support/gateway.ts";
import { type Recorded, startUpstream } from "../support/upstream.ts";
import { createCa, issue, yamlString } from "../support/pki.ts";
import { checkoutOrderBody, initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signHttpSignature, signJws } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";

const encoder = new TextEncoder();
const PAYMENT_DIGEST = await digestOf(encoder.encode(PAYMENT_BODY));
const ca = await createCa();
const tpp = await issue(ca);

/** The bank's authorisation server: a key pair and its JWKS file. */
const ISSUER = "https://auth.bank.example";
const tokenKeys = await generateKeyPair("RS256");
const jwksFile = await Deno.makeTempFile({ suffix: ".json" });
globalThis.addEventListener("unload", () => Deno.removeSync(jwksFile));
await Deno.writeTextFile(
  jwksFile,
  JSON.stringify({ keys: [{ ...await exportJWK(tokenKeys.publicKey), kid: "k1", alg: "RS256" }] }),
);

/** A token of the bank's authorisation server; `exp: undefined` leaves the claim out. */
async function token(claims: JWTPayload = {}): Promise<string> {
  const payload: JWTPayload = {
    iss: ISSUER,
    client_id: "PSDGE-NBG-123456",
    scope: "accounts",
    exp: Math.floor(Date.now() / 1000) + 300,
    ...claims,
  };
  if ("exp" in claims && claims.exp === undefined) delete payload.exp;
  return await new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: "k1" })
    .sign(tokenKeys.privateKey);
}

/** A policy trusting the test CA, with YAML `defaults` lines (indented by 2) and more after. */
function policy(defaults: string, more = ""): string {
  return `
upstream:
  url: \${UPSTREAM_URL}
trust:
  anchors: [${yamlString(ca.pem)}]
defaults:
${defaults}
${more}`;
}

/** The bearer_token options of the tests' policies. */
const BEARER = `  bearer_token: { mode: enforce, jwks_file: ${
  yamlString(jwksFile)
}, issuer: ${ISSUER} }`;

/** A checkout order that passes every request rule: the token decides. */
const CHECKOUT = {
  path: "/api/v1/checkout/orders",
  body: JSON.stringify(checkoutOrderBody()),
};

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

// Item 16: coverage gaps.

Deno.test("jws: a Consent-ID added to a signed account read is refused", async () => {
  // The TPP signed a read of consent A without covering Consent-ID; consent B is put in later.
  const signed = await signJws(tpp, {
    method: "GET",
    target: "/v1/accounts",
    headers: { "x-request-id": crypto.randomUUID() },
  });
  const outcome = await send("/v1/accounts", {
    headers: { ...signed, "consent-id": "consent-of-another-psu" },
  }, { policy: policy("  jws_signature: { required: true }") });
  assert.deepEqual(message(outcome), {
    status: 401,
    code: "SIGNATURE_INVALID",
    path: "x-jws-signature",
  });
  assert.match(outcome.body.tppMessages![0].text, /must cover "consent-id"/);
  assert.equal(outcome.received.length, 0);
});

Deno.test("bearer: a token without exp is refused", async () => {
  const outcome = await send(CHECKOUT.path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${await token({ exp: undefined })}`,
      "content-type": "application/json",
    },
    body: CHECKOUT.body,
  }, { policy: policy(BEARER) });
  assert.deepEqual(message(outcome), { status: 401, code: "TOKEN_INVALID", path: "Authorization" });
  assert.match(outcome.body.tppMessages![0].text, /must carry the "exp" claim/);
  assert.match(outcome.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  assert.equal(outcome.received.length, 0);
});

// Item 6: HTTP Signature without the request target or a time.

/** A payment initiation as a TPP signs it with a Berlin Group HTTP signature. */
function paymentInput(headers: Record<string, string> = {}) {
  return {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...headers }),
    body: PAYMENT_BODY,
  };
}

const HTTP_SIGNATURE = "  http_signature: { required: true }";

Deno.test("http signature: a signature made for one path is refused on another", async () => {
  const signed = await signHttpSignature(tpp, paymentInput(), {
    headers: ["digest", "x-request-id"],
  });
  const outcome = await send("/v1/payments/foreign", {
    method: "POST",
    headers: signed,
    body: PAYMENT_BODY,
  }, { policy: policy(HTTP_SIGNATURE) });
  assert.deepEqual(message(outcome), { status: 401, code: "SIGNATURE_INVALID", path: "Signature" });
  assert.match(outcome.body.tppMessages![0].text, /must cover "\(request-target\)"/);
  assert.equal(outcome.received.length, 0);
});

Deno.test("http signature: a signed request replayed a day later is refused", async () => {
  const yesterday = new Date(Date.now() - 25 * 3_600_000).toUTCString();
  const signed = await signHttpSignature(tpp, paymentInput({ date: yesterday }), {
    headers: ["(request-target)", "date", "digest", "x-request-id"],
  });
  const outcome = await send(PAYMENT_TARGET, {
    method: "POST",
    headers: signed,
    body: PAYMENT_BODY,
  }, { policy: policy(HTTP_SIGNATURE) });
  assert.deepEqual(message(outcome), { status: 401, code: "SIGNATURE_INVALID", path: "Signature" });
  assert.match(outcome.body.tppMessages![0].text, /signed Date is more than 300 s away/);
  assert.equal(outcome.received.length, 0);
});

Deno.test("http signature: a signature that covers no time at all is refused", async () => {
  const signed = await signHttpSignature(tpp, paymentInput(), {
    headers: ["(request-target)", "digest", "x-request-id"],
  });
  const outcome = await send(PAYMENT_TARGET, {
    method: "POST",
    headers: signed,
    body: PAYMENT_BODY,
  }, { policy: policy(HTTP_SIGNATURE) });
  assert.deepEqual(message(outcome), { status: 401, code: "SIGNATURE_INVALID", path: "Signature" });
  assert.match(outcome.body.tppMessages![0].text, /must cover "date" or "\(created\)"/);
  assert.equal(outcome.received.length, 0);
});
