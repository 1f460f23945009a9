import assert from "node:assert/strict";
import { makeTestCa } from "../../../src/cli/test_ca.ts";
import { issueTppCertificate, loadSandboxCa } from "../../../src/pki/sandbox_ca.ts";
import {
  loadTppSigner,
  signHttpRequest,
  signJwsRequest,
  type TppSigner,
} from "../../../src/signing/tpp_signer.ts";
import { gatewayApp } from "../../support/gateway.ts";
import { buildPolicy } from "../../support/policies.ts";
import { initiationHeaders, singlePayment } from "../../support/requests.ts";
import { startUpstream } from "../../support/upstream.ts";

const dir = await Deno.makeTempDir();
await makeTestCa(dir);
const ca = await loadSandboxCa(dir);
const caPem = await Deno.readTextFile(`${dir}/qtsp-ca.pem`);
await Deno.remove(dir, { recursive: true });

async function signer(keyType: "RSA" | "EC"): Promise<TppSigner> {
  const issued = await issueTppCertificate(ca, {
    type: "QSealC",
    orgId: "PSDGE-NBG-123456",
    roles: ["PSP_PI", "PSP_AI"],
    keyType,
  });
  return await loadTppSigner(issued.certificate, issued.key);
}

const BODY = new TextEncoder().encode(JSON.stringify(singlePayment()));

/**
 * A payment initiation signed by `sign`, sent with `body` to a gateway whose policy requires the
 * scheme's signature covering (request-target) too; its status and what reached the core.
 */
async function send(
  check: "jws_signature" | "http_signature",
  sign: (headers: Record<string, string>) => Promise<Record<string, string>>,
  body = BODY,
) {
  await using core = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  await using gateway = await gatewayApp({
    policy: buildPolicy({
      trust: { anchors: [caPem] },
      defaults: {
        [check]: {
          required: true,
          cover: ["digest", "x-request-id", "(request-target)"],
          cover_when_present: ["psu-id", "psu-corporate-id", "tpp-redirect-uri", "consent-id"],
          types: ["QSealC"],
          require_type: true,
          require_key_usage: true,
        },
      },
    }),
    upstream: core.url,
  });
  const headers = await sign(initiationHeaders({
    "x-request-id": crypto.randomUUID(),
    "psu-id": "PSU-OK",
    "tpp-redirect-uri": "https://tpp.example/ok",
  }));
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers,
    body,
  });
  return { status: response.status, body: await response.json(), reached: core.received.length };
}

const request = (headers: Record<string, string>) => ({
  method: "POST",
  target: "/v1/payments/domestic",
  headers,
  body: BODY,
});

for (const keyType of ["RSA", "EC"] as const) {
  Deno.test(`signJwsRequest() signs (${keyType}) a request the gateway's jws_signature accepts`, async () => {
    const tpp = await signer(keyType);
    const sent = await send("jws_signature", (headers) => signJwsRequest(tpp, request(headers)));
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.equal(sent.reached, 1);
  });
}

Deno.test("signHttpRequest() signs (RSA) a request the gateway's http_signature accepts", async () => {
  const tpp = await signer("RSA");
  const sent = await send("http_signature", (headers) => signHttpRequest(tpp, request(headers)));
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  assert.equal(sent.reached, 1);
  // rsa-sha256 is the only algorithm for which the gateway (and the standard's example) verify a
  // key: an EC key is refused before anything is sent.
  const ec = await signer("EC");
  await assert.rejects(() => signHttpRequest(ec, request({})), /needs an RSA key/);
});

Deno.test("signJwsRequest() binds the body and the headers it covers", async () => {
  const tpp = await signer("RSA");
  const other = new TextEncoder().encode(JSON.stringify({
    ...singlePayment(),
    instructedAmount: { currency: "EUR", amount: "999.00" },
  }));
  const tampered = await send(
    "jws_signature",
    (headers) => signJwsRequest(tpp, request(headers)),
    other,
  );
  assert.equal(tampered.status, 400, JSON.stringify(tampered.body));
  assert.equal(tampered.reached, 0);
  const redirected = await send("jws_signature", async (headers) => ({
    ...await signJwsRequest(tpp, request(headers)),
    "tpp-redirect-uri": "https://attacker.example/ok",
  }));
  assert.equal(redirected.status, 401, JSON.stringify(redirected.body));
  assert.equal(redirected.body.tppMessages[0].code, "SIGNATURE_INVALID");
});

Deno.test("signHttpRequest() covers the date, the request target and what the request carries", async () => {
  const tpp = await signer("RSA");
  const headers = await signHttpRequest(
    tpp,
    request({ "X-Request-ID": "99391c7e-ad88-49ec-a2ad-99ddcb1f7721", "Consent-ID": "c-1" }),
  );
  assert.match(
    headers.signature,
    /headers="\(request-target\) date digest x-request-id consent-id"/,
  );
  assert.match(headers.signature, new RegExp(`keyId="SN=${tpp.serial.toUpperCase()},CA=CN=`));
  assert.equal(headers["tpp-signature-certificate"], tpp.certificate.toBase64());
});

Deno.test("loadTppSigner() refuses a key that is no PKCS#8 PEM", async () => {
  const issued = await issueTppCertificate(ca, {
    type: "QSealC",
    orgId: "PSDGE-NBG-123456",
    roles: ["PSP_PI"],
  });
  await assert.rejects(
    () =>
      loadTppSigner(issued.certificate, issued.key.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY")),
    /PKCS#8/,
  );
});
