/**
 * Certificates used for what they are not (issue 20 item 2): one test per attack, each asserting
 * the attacker's answer and what reached the core (a recording upstream on 127.0.0.1).
 */
import assert from "node:assert/strict";
import "reflect-metadata";
import { KeyUsageFlags, KeyUsagesExtension } from "@peculiar/x509";
import { startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signHttpSignature, signJws } from "../support/signing.ts";

const ca = await createCa();
const qsealc = await issue(ca, { qcTypes: ["QSealC"] });
const qwac = await issue(ca, { qcTypes: ["QWAC"] });
/** A natural person's signature certificate (esign): not a TPP's seal. */
const qesig = await issue(ca, { qcTypes: ["QESig"] });
/** A seal certificate whose key is for key encipherment only. */
const encipherOnly = await issue(ca, {
  qcTypes: ["QSealC"],
  extensions: [new KeyUsagesExtension(KeyUsageFlags.keyEncipherment, true)],
});
const sealing = await issue(ca, {
  qcTypes: ["QSealC"],
  extensions: [new KeyUsagesExtension(KeyUsageFlags.nonRepudiation, true)],
});

function policy(defaults: LevelInput): PolicyInput {
  return buildPolicy({ trust: { anchors: [ca.pem] }, defaults });
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

function input() {
  return {
    method: "POST",
    target: PAYMENT_TARGET,
    headers: { ...initiationHeaders(), "x-request-id": crypto.randomUUID() },
    body: PAYMENT_BODY,
  };
}

Deno.test("types: a payment signed (JWS) with a natural person's esign certificate is refused", async () => {
  const text = policy({ jws_signature: { required: true } });
  const { status, body, received } = await send(text, await signJws(qesig, input()));
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_INVALID");
  assert.match(
    body.tppMessages[0].text,
    /signing certificate is a QESig \(id-etsi-qct-esign\); this operation accepts QSealC or QWAC/,
  );
  assert.equal(received.length, 0);
  for (const signer of [qsealc, qwac]) {
    assert.equal((await send(text, await signJws(signer, input()))).status, 200);
  }
});

Deno.test("types: a QWAC signs nothing where the policy accepts QSealC only (HTTP signature)", async () => {
  const text = policy({ http_signature: { required: true, types: ["QSealC"] } });
  const { status, body, received } = await send(text, await signHttpSignature(qwac, input()));
  assert.equal(status, 401);
  assert.match(
    body.tppMessages[0].text,
    /is a QWAC \(id-etsi-qct-web\); this operation accepts QSealC/,
  );
  assert.equal(received.length, 0);
  assert.equal((await send(text, await signHttpSignature(qsealc, input()))).status, 200);
});

Deno.test("types: a seal certificate whose key may only encipher signs nothing under require_key_usage", async () => {
  const text = policy({ jws_signature: { required: true, require_key_usage: true } });
  const { status, body, received } = await send(text, await signJws(encipherOnly, input()));
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_INVALID");
  assert.match(
    body.tppMessages[0].text,
    /key usage must include digitalSignature or nonRepudiation/,
  );
  assert.equal(received.length, 0);
  assert.equal((await send(text, await signJws(sealing, input()))).status, 200);
});

Deno.test("types: a seal certificate (QSealC) presented as the transport certificate is refused", async () => {
  const text = policy({ tpp_certificate: { required: true } });
  const { status, body, received } = await send(text, {
    ...input().headers,
    "x-ssl-client-cert": nginxHeader(qsealc),
  });
  assert.equal(status, 401);
  assert.equal(body.tppMessages[0].code, "CERTIFICATE_INVALID");
  assert.match(body.tppMessages[0].text, /TPP certificate is a QSealC/);
  assert.equal(received.length, 0);
});
