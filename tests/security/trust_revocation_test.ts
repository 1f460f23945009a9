/**
 * Attacks with revoked certificates (issue 20 item 1): one test per attack, each asserting the
 * attacker's answer and what reached the core (a recording upstream on 127.0.0.1). The CA, its
 * CRL and its OCSP responders are made by openssl (tests/support/openssl_ca.ts).
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { issue, type Issued, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signHttpSignature, signJws } from "../support/signing.ts";
import { freePort, opensslCa } from "../support/openssl_ca.ts";
import { parseCertificate } from "../../src/pki/certificate.ts";
import { ocspRequest } from "../../src/pki/ocsp.ts";

const ca = await opensslCa();
const tpp = await issue(ca.ca);
const stolen = await issue(ca.ca);
await ca.valid(tpp);
await ca.revoke(stolen);

function policy(
  revocation: NonNullable<PolicyInput["trust"]>["revocation"],
  defaults: LevelInput,
): PolicyInput {
  return buildPolicy({ trust: { anchors: [ca.ca.pem], revocation }, defaults });
}

async function send(policyText: PolicyInput, headers: Record<string, string>) {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: policyText, upstream: upstream.url });
  const response = await gateway.fetch(PAYMENT_TARGET, {
    method: "POST",
    body: PAYMENT_BODY,
    headers,
  });
  return { status: response.status, body: await response.json(), received: upstream.received };
}

function paymentHeaders(): Record<string, string> {
  return { ...initiationHeaders(), "x-request-id": crypto.randomUUID() };
}

async function staple(cert: Issued, url: string): Promise<string> {
  const request = await ocspRequest((await parseCertificate(cert.pem)).cert, ca.ca.cert);
  const answer = await fetch(url, { method: "POST", body: request as BodyInit });
  return btoa(String.fromCharCode(...new Uint8Array(await answer.arrayBuffer())));
}

Deno.test("revocation: a payment signed (JWS) with a revoked signing certificate is refused", async () => {
  await using responder = await ca.responder();
  const text = policy(
    { ocsp_responder: responder.url },
    { jws_signature: { required: true, revocation: "soft" } },
  );
  const input = {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: paymentHeaders(),
    body: PAYMENT_BODY,
  };
  const { status, body, received } = await send(text, await signJws(stolen, input));
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_REVOKED");
  assert.match(body.tppMessages[0].text, /signing certificate .* is revoked/);
  assert.equal(received.length, 0);
  const ok = await send(text, await signJws(tpp, { ...input, headers: paymentHeaders() }));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.received.length, 1);
});

Deno.test("revocation: a payment with an HTTP signature by a revoked certificate is refused", async () => {
  await using responder = await ca.responder();
  const text = policy(
    { ocsp_responder: responder.url },
    { http_signature: { required: true, revocation: "hard" } },
  );
  const input = {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: paymentHeaders(),
    body: PAYMENT_BODY,
  };
  const { status, body, received } = await send(text, await signHttpSignature(stolen, input));
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_REVOKED");
  assert.equal(received.length, 0);
});

Deno.test("revocation: a good staple of another certificate does not clear a revoked one", async () => {
  await using responder = await ca.responder();
  const goodStaple = await staple(tpp, responder.url);
  const text = policy(
    { ocsp_responder: responder.url },
    {
      tpp_certificate: { required: true, revocation: "hard", ocsp_header: "X-SSL-Client-OCSP" },
    },
  );
  const { status, body, received } = await send(text, {
    ...paymentHeaders(),
    "x-ssl-client-cert": nginxHeader(stolen),
    "x-ssl-client-ocsp": goodStaple,
  });
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_REVOKED");
  assert.equal(received.length, 0);
});

Deno.test("revocation: a staple signed by a stranger does not clear a certificate when the responder is blocked", async () => {
  await using stranger = await ca.responder({ signer: "stranger" });
  const forged = await staple(stolen, stranger.url);
  const text = policy(
    { ocsp_responder: `http://127.0.0.1:${freePort()}`, methods: ["ocsp"] },
    {
      tpp_certificate: { required: true, revocation: "hard", ocsp_header: "X-SSL-Client-OCSP" },
    },
  );
  const { status, body, received } = await send(text, {
    ...paymentHeaders(),
    "x-ssl-client-cert": nginxHeader(stolen),
    "x-ssl-client-ocsp": forged,
  });
  assert.equal(status, 503);
  assert.equal(body.tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
  assert.equal(received.length, 0);
});
