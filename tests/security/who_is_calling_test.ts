/**
 * Attacks on who is calling (issue 18 items 4, 5, 6, 9, 12, 16; issue 22 item 2): one test per
 * attack, each asserting the answer the attacker gets and what did or did not reach the core (a
 * recording upstream on 127.0.0.1).
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { startGateway } from "../support/gateway.ts";
import { type Recorded, startUpstream } from "../support/upstream.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { checkoutOrderBody, initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signHttpSignature, signJws } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";

const encoder = new TextEncoder();
const PAYMENT_DIGEST = await digestOf(encoder.encode(PAYMENT_BODY));
const ca = await createCa();
const tpp = await issue(ca);
/** Another TPP, whose public certificate an attacker puts in the header. */
const victim = await issue(ca, { orgId: "PSDGE-NBG-777777" });

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

type Trust = NonNullable<PolicyInput["trust"]>;

/** A policy trusting the test CA, with these `defaults`, more parts over it and more `trust`. */
function policy(defaults: LevelInput, more: PolicyInput = {}, trust: Partial<Trust> = {}) {
  return buildPolicy({ trust: { anchors: [ca.pem], ...trust }, defaults }, more);
}

/** The bearer_token options of the tests' policies. */
const BEARER: LevelInput = {
  bearer_token: { mode: "enforce", jwks_file: jwksFile, issuer: ISSUER },
};

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
  options: { policy?: PolicyInput; env?: Record<string, string> } = {},
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

// Item 16: coverage gaps. Covering Consent-ID goes beyond the standard: the bank's option.

const CONSENT_COVERED = ["psu-id", "psu-corporate-id", "tpp-redirect-uri", "consent-id"];

Deno.test("jws: a Consent-ID added to a signed account read is refused", async () => {
  // The TPP signed a read of consent A without covering Consent-ID; consent B is put in later.
  const signed = await signJws(tpp, {
    method: "GET",
    target: "/v1/accounts",
    headers: { "x-request-id": crypto.randomUUID() },
  });
  const outcome = await send("/v1/accounts", {
    headers: { ...signed, "consent-id": "consent-of-another-psu" },
  }, {
    policy: policy({ jws_signature: { required: true, cover_when_present: CONSENT_COVERED } }),
  });
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

/** The options that bind the path and a time, beyond the standard's minimum. */
const HTTP_SIGNATURE: LevelInput = {
  http_signature: {
    required: true,
    cover: ["(request-target)", "digest", "x-request-id"],
    require_time: true,
  },
};

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

// Item 4: the certificate header from anyone.

/** The gateway's only peer in these tests is 127.0.0.1: listed, or not. */
const TERMINATOR_ELSEWHERE: Partial<Trust> = { terminators: ["10.0.0.1/32"] };
const TERMINATOR_HERE: Partial<Trust> = { terminators: ["127.0.0.1/32"] };
const CERTIFICATE_REQUIRED: LevelInput = { tpp_certificate: { form: "nginx", required: true } };
const CERTIFICATE_OPTIONAL: LevelInput = { tpp_certificate: { form: "nginx" } };

function payment(headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...headers }),
    body: PAYMENT_BODY,
  };
}

Deno.test("terminators: another TPP's certificate from a peer that is no terminator is refused", async () => {
  const outcome = await send(
    PAYMENT_TARGET,
    payment({ "x-ssl-client-cert": nginxHeader(victim) }),
    { policy: policy(CERTIFICATE_REQUIRED, {}, TERMINATOR_ELSEWHERE) },
  );
  assert.deepEqual(message(outcome), {
    status: 401,
    code: "CERTIFICATE_INVALID",
    path: "X-SSL-Client-Cert",
  });
  assert.match(outcome.body.tppMessages![0].text, /accepted only from the TLS terminator/);
  assert.equal(outcome.received.length, 0);
});

Deno.test("terminators: X-Forwarded-For from a peer that is no terminator is refused", async () => {
  const outcome = await send(
    PAYMENT_TARGET,
    payment({ "x-forwarded-for": "203.0.113.9" }),
    { policy: policy(CERTIFICATE_OPTIONAL, {}, TERMINATOR_ELSEWHERE) },
  );
  assert.deepEqual(message(outcome), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "X-Forwarded-For",
  });
  assert.equal(
    outcome.body.tppMessages![0].text,
    'Header "X-Forwarded-For" is accepted only from the TLS terminator',
  );
  assert.equal(outcome.received.length, 0);
  // The same peer without either header passes (an optional certificate).
  const plain = await send(PAYMENT_TARGET, payment(), {
    policy: policy(CERTIFICATE_OPTIONAL, {}, TERMINATOR_ELSEWHERE),
  });
  assert.equal(plain.status, 201);
});

Deno.test("terminators: under strip, another peer's certificate and X-Forwarded-For never reach the core", async () => {
  const strip: Partial<Trust> = { ...TERMINATOR_ELSEWHERE, from_other_peers: "strip" };
  const headers = { "x-ssl-client-cert": nginxHeader(victim), "x-forwarded-for": "203.0.113.9" };
  // Where a certificate is required, the request is one without.
  const required = await send(PAYMENT_TARGET, payment(headers), {
    policy: policy(CERTIFICATE_REQUIRED, {}, strip),
  });
  assert.deepEqual(message(required), {
    status: 401,
    code: "CERTIFICATE_MISSING",
    path: "X-SSL-Client-Cert",
  });
  assert.equal(required.received.length, 0);
  // Where it is optional, the request goes on unidentified, without either header.
  const optional = await send(PAYMENT_TARGET, payment(headers), {
    policy: policy(CERTIFICATE_OPTIONAL, {}, strip),
  });
  assert.equal(optional.status, 201);
  assert.equal(optional.received.length, 1);
  assert.equal(optional.received[0].headers.get("x-ssl-client-cert"), null);
  assert.equal(optional.received[0].headers.get("x-forwarded-for"), "127.0.0.1");
});

Deno.test("terminators: another peer's certificate and stapled OCSP headers never reach the core, even when proxy.forward_headers names them", async () => {
  const strip: Partial<Trust> = { ...TERMINATOR_ELSEWHERE, from_other_peers: "strip" };
  const forwarded: PolicyInput = {
    defaults: { proxy: { forward_headers: ["X-SSL-Client-Cert", "X-SSL-Client-OCSP"] } },
  };
  const headers = { "X-SSL-Client-Cert": nginxHeader(victim), "X-SSL-Client-OCSP": "AAAA" };
  const optional: LevelInput = {
    tpp_certificate: { form: "nginx", ocsp_header: "X-SSL-Client-OCSP" },
  };
  const outcome = await send(PAYMENT_TARGET, payment(headers), {
    policy: policy(optional, forwarded, strip),
  });
  assert.equal(outcome.status, 201);
  assert.equal(outcome.received.length, 1);
  assert.equal(outcome.received[0].headers.get("x-ssl-client-cert"), null);
  assert.equal(outcome.received[0].headers.get("x-ssl-client-ocsp"), null);
  // From the terminator the certificate is the TPP's to pass on; a staple is read, never forwarded.
  const terminated = await send(
    PAYMENT_TARGET,
    payment({ "X-SSL-Client-Cert": nginxHeader(tpp), "X-SSL-Client-OCSP": "AAAA" }),
    { policy: policy(optional, forwarded, TERMINATOR_HERE) },
  );
  assert.equal(terminated.status, 201);
  assert.equal(terminated.received[0].headers.get("x-ssl-client-ocsp"), null);
});

Deno.test("terminators: the terminator's certificate header identifies the TPP (and loopback is the default)", async () => {
  for (const trust of [TERMINATOR_HERE, {}]) {
    const outcome = await send(
      PAYMENT_TARGET,
      payment({ "x-ssl-client-cert": nginxHeader(tpp), "x-forwarded-for": "203.0.113.9" }),
      { policy: policy(CERTIFICATE_REQUIRED, {}, trust) },
    );
    assert.equal(outcome.status, 201);
    assert.equal(outcome.received.length, 1);
    assert.equal(outcome.received[0].headers.get("x-forwarded-for"), "203.0.113.9, 127.0.0.1");
  }
});

// Item 9: the client address behind the terminator.

const PER_CLIENT: PolicyInput = {
  groups: {
    products: {
      rate_limit: { limits: { per_client: { key: ["client_ip"], limit: 2, window: "1m" } } },
    },
  },
};

Deno.test("client address: one client behind the terminator cannot exhaust the others' per-client limit", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(CERTIFICATE_OPTIONAL, PER_CLIENT, TERMINATOR_HERE),
    upstream: upstream.url,
  });
  const read = async (forwardedFor: string) => {
    const response = await gateway.fetch("/v1/products/deposits", {
      headers: { "x-forwarded-for": forwardedFor },
    });
    await response.body?.cancel();
    return response.status;
  };
  const statuses = [];
  for (const chain of ["203.0.113.1", "203.0.113.1"]) statuses.push(await read(chain));
  // The client writes any address it likes left of the one the terminator appended.
  statuses.push(await read("198.51.100.7, 203.0.113.1"));
  // Another client behind the same terminator has its own count.
  statuses.push(await read("203.0.113.2"));
  assert.deepEqual(statuses, [200, 200, 429, 200]);
  assert.equal(upstream.received.length, 3);
});

Deno.test("client address: a client_ip_header is believed only from a terminator, and its last value counts", async () => {
  const perClient = (trust: Partial<Trust>) =>
    policy(
      { ...CERTIFICATE_OPTIONAL, rate_limit: { client_ip_header: "X-Real-IP" } },
      PER_CLIENT,
      trust,
    );
  const statuses = async (trust: Partial<Trust>, values: string[]) => {
    await using upstream = startUpstream();
    await using gateway = await startGateway({ policy: perClient(trust), upstream: upstream.url });
    const seen = [];
    for (const value of values) {
      const response = await gateway.fetch("/v1/products/deposits", {
        headers: { "x-real-ip": value },
      });
      await response.body?.cancel();
      seen.push(response.status);
    }
    return { seen, reached: upstream.received.length };
  };
  // Directly at the gateway, a new X-Real-IP per request does not make a new client.
  const direct = await statuses(TERMINATOR_ELSEWHERE, ["192.0.2.1", "192.0.2.2", "192.0.2.3"]);
  assert.deepEqual(direct, { seen: [200, 200, 429], reached: 2 });
  // From the terminator, the last value is the client.
  const behind = await statuses(TERMINATOR_HERE, [
    "203.0.113.1",
    "198.51.100.7, 203.0.113.1",
    "192.0.2.9,203.0.113.1",
    "203.0.113.2",
  ]);
  assert.deepEqual(behind, { seen: [200, 200, 429, 200], reached: 3 });
});

// Item 5: a token of one TPP used with another TPP's certificate.

/** RFC 8705: the base64url SHA-256 of the certificate's DER. */
async function thumbprint(cert: { cert: { rawData: ArrayBuffer } }): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", cert.cert.rawData));
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A checkout order with the token and the transport certificate of the test's choosing. */
async function checkout(tokenText: string, certificate: typeof tpp, bearer = BEARER) {
  return await send(CHECKOUT.path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${tokenText}`,
      "content-type": "application/json",
      "x-ssl-client-cert": nginxHeader(certificate),
    },
    body: CHECKOUT.body,
  }, { policy: policy({ ...CERTIFICATE_REQUIRED, ...bearer }) });
}

Deno.test("token binding: a token bound to one TPP's certificate is refused with another's", async () => {
  // The victim's token, bound to the victim's certificate, presented with the attacker's own.
  const stolen = await token({
    client_id: "PSDGE-NBG-777777",
    cnf: { "x5t#S256": await thumbprint(victim) },
  });
  const outcome = await checkout(stolen, tpp);
  assert.deepEqual(message(outcome), { status: 401, code: "TOKEN_INVALID", path: "Authorization" });
  assert.match(outcome.body.tppMessages![0].text, /bound to another certificate/);
  assert.equal(outcome.received.length, 0);
  // With the certificate it is bound to, the same token is good.
  const own = await checkout(stolen, victim);
  assert.equal(own.status, 201);
  assert.equal(own.received.length, 1);
});

Deno.test("token binding: a token whose client_id names another TPP than the certificate is refused", async () => {
  const bound: LevelInput = {
    bearer_token: { ...BEARER.bearer_token, certificate_claim: "client_id" },
  };
  const stolen = await token({ client_id: "PSDGE-NBG-777777" });
  const outcome = await checkout(stolen, tpp, bound);
  assert.deepEqual(message(outcome), { status: 401, code: "TOKEN_INVALID", path: "Authorization" });
  assert.match(
    outcome.body.tppMessages![0].text,
    /"client_id" claim must be the transport certificate's TPP "PSDGE-NBG-123456"/,
  );
  assert.equal(outcome.received.length, 0);
  const own = await checkout(await token({ client_id: "PSDGE-NBG-123456" }), tpp, bound);
  assert.equal(own.status, 201);
  assert.equal(own.received.length, 1);
});

// Issue 22 item 2: a scope that protects nothing.

const ACCOUNTS_READ: RequestInit = {
  headers: { "x-request-id": crypto.randomUUID(), "consent-id": "consent-1" },
};

Deno.test("scopes: an account read without a token is refused where the group sets scopes", async () => {
  const outcome = await send("/v1/accounts", ACCOUNTS_READ, {
    policy: policy(BEARER, { groups: { ais: { bearer_token: { scopes: ["accounts"] } } } }),
  });
  assert.deepEqual(message(outcome), { status: 401, code: "TOKEN_UNKNOWN", path: "Authorization" });
  assert.equal(outcome.headers.get("www-authenticate"), 'Bearer realm="xs2a-edge"');
  assert.equal(outcome.received.length, 0);
  // Only the policy's own required: false lets it through.
  const optional = await send("/v1/accounts", ACCOUNTS_READ, {
    policy: policy(BEARER, {
      groups: { ais: { bearer_token: { scopes: ["accounts"], required: false } } },
    }),
  });
  assert.equal(optional.status, 201);
  assert.equal(optional.received.length, 1);
});

Deno.test("catalogue: the installment calculator without Authorization is refused with token verification off", async () => {
  // The default policy: bearer_token off.
  const outcome = await send("/v1/services/installment/calculate?amount=100.00&client_id=m1", {
    headers: { "x-request-id": crypto.randomUUID(), "content-type": "application/json" },
  });
  assert.deepEqual(message(outcome), { status: 401, code: "TOKEN_UNKNOWN", path: "Authorization" });
  assert.equal(outcome.headers.get("www-authenticate"), 'Bearer realm="xs2a-edge"');
  assert.equal(outcome.received.length, 0);
});
