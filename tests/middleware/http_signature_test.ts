import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { signedUnderSoftRevocation } from "../support/soft_revocation.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import {
  type HttpSignatureOptions,
  keyIdOf,
  PAYMENT_BODY,
  PAYMENT_TARGET,
  signHttpSignature,
  type SignInput,
} from "../support/signing.ts";

const DAY = 86_400_000;
const TARGET = PAYMENT_TARGET;
const ca = await createCa();
const otherCa = await createCa("Rogue CA");
const tpp = await issue(ca);
const rogue = await issue(otherCa);
const expired = await issue(ca, {
  notBefore: new Date(Date.now() - 400 * DAY),
  notAfter: new Date(Date.now() - 2 * DAY),
});
const blocked = await issue(ca, { serial: "0badc0de" });
const aisOnly = await issue(ca, { roles: ["PSP_AI"] });
const otherTpp = await issue(ca, { orgId: "PSDGE-NBG-999999" });
/** Serial 0x9FA1 = 40865, as in the Berlin Group guidelines' keyId example. */
const example = await issue(ca, { serial: "9fa1" });
const tppEc = await issue(ca, { keyType: "EC" });
const qwac = await issue(ca, { qcTypes: ["QWAC"] });

function policy(...parts: PolicyInput[]) {
  return buildPolicy({
    trust: { anchors: [ca.pem], blocked: [{ serial: "0badc0de" }] },
    defaults: { http_signature: { required: true } },
  }, ...parts);
}

/** The policy with these http_signature options for initiatePayment. */
function forPayments(options: LevelInput["http_signature"]) {
  return policy({ operations: { initiatePayment: { http_signature: options } } });
}

function input(headers: Record<string, string> = {}): SignInput {
  return {
    method: "POST",
    target: TARGET,
    headers: {
      "x-request-id": crypto.randomUUID(),
      "psu-ip-address": "192.168.8.78",
      "psu-id": "PSU-1234",
      "tpp-redirect-uri": "https://tpp.example/ok",
      "content-type": "application/json",
      ...headers,
    },
    body: PAYMENT_BODY,
  };
}

async function run(
  headers: Record<string, string>,
  options: { policy?: PolicyInput; body?: string } = {},
) {
  await using upstream = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  await using gateway = await startGateway({
    policy: options.policy ?? policy(),
    upstream: upstream.url,
  });
  const response = await gateway.fetch(TARGET, {
    method: "POST",
    headers,
    body: options.body ?? PAYMENT_BODY,
  });
  return {
    response,
    body: await response.json(),
    reached: upstream.received.length,
    log: gateway.log.lines,
  };
}

async function rejected(
  headers: Record<string, string>,
  expected: { status?: number; code: string; text?: RegExp; path?: string },
  options: { policy?: PolicyInput; body?: string } = {},
) {
  const { response, body, reached } = await run(headers, options);
  assert.equal(response.status, expected.status ?? 401, JSON.stringify(body));
  assert.equal(body.tppMessages[0].code, expected.code, body.tppMessages[0].text);
  if (expected.text) assert.match(body.tppMessages[0].text, expected.text);
  if (expected.path) assert.equal(body.tppMessages[0].path, expected.path);
  assert.equal(reached, 0, "a rejected request reached the upstream");
}

const signed = (options: HttpSignatureOptions = {}, signer = tpp) =>
  signHttpSignature(signer, input(), options);

Deno.test("httpSignature() accepts a Berlin Group rsa-sha256 signature and identifies the TPP", async () => {
  const { response, reached, log } = await run(await signed());
  assert.equal(response.status, 201);
  assert.equal(reached, 1);
  assert.equal(log.find((l) => l.op === "initiatePayment")?.tpp, "PSDGE-NBG-123456");
});

Deno.test("httpSignature() accepts (created) instead of date, and a reordered issuer DN", async () => {
  const names = [
    "(request-target)",
    "(created)",
    "digest",
    "x-request-id",
    "psu-id",
    "tpp-redirect-uri",
  ];
  assert.equal((await run(await signed({ headers: names }))).response.status, 201);
  const expires = Math.floor(Date.now() / 1000) + 60;
  assert.equal((await run(await signed({ headers: names, expires }))).response.status, 201);
  const reversed = tpp.cert.issuer.split(", ").reverse().join(",");
  const keyId = `SN=${tpp.cert.serialNumber},CA=${reversed}`;
  assert.equal((await run(await signed({ keyId }))).response.status, 201);
});

Deno.test("httpSignature() verifies a UTF-8 PSU-ID as the bytes that were sent", async () => {
  // The TPP signs the header's UTF-8 bytes; the gateway reads header values one character per
  // byte and must verify those bytes, not encode them to UTF-8 a second time.
  const psuId = "ნინო ბერიძე";
  const sent = String.fromCharCode(...new TextEncoder().encode(psuId));
  const { response, body, reached } = await run({
    ...await signHttpSignature(tpp, input({ "psu-id": psuId })),
    "psu-id": sent,
  });
  assert.equal(response.status, 201, JSON.stringify(body));
  assert.equal(reached, 1);
});

Deno.test("httpSignature() answers SIGNATURE_MISSING where required", async () => {
  await rejected(input().headers, { code: "SIGNATURE_MISSING", path: "Signature" });
});

Deno.test("httpSignature() answers CERTIFICATE_MISSING without TPP-Signature-Certificate", async () => {
  const { "tpp-signature-certificate": _, ...headers } = await signed();
  await rejected(headers, { code: "CERTIFICATE_MISSING", path: "TPP-Signature-Certificate" });
});

Deno.test("httpSignature() rejects a header changed after signing", async () => {
  await rejected({ ...await signed(), "psu-id": "PSU-6666" }, {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  });
});

Deno.test("httpSignature() rejects a body changed after signing (Digest mismatch)", async () => {
  await rejected(await signed(), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "Digest",
  }, { body: PAYMENT_BODY.replace("123.50", "9123.50") });
});

const BASE = ["(request-target)", "date", "digest"];

Deno.test("httpSignature() requires digest, x-request-id and the PSU and redirect headers sent; (request-target) where the policy covers it", async () => {
  await rejected(await signed({ headers: [...BASE, "psu-id", "tpp-redirect-uri"] }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "x-request-id"/,
  });
  await rejected(await signed({ headers: [...BASE, "x-request-id", "psu-id"] }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "tpp-redirect-uri", which the request carries/,
  });
  await rejected(
    await signed({
      headers: ["(request-target)", "date", "x-request-id", "psu-id", "tpp-redirect-uri"],
    }),
    { code: "SIGNATURE_INVALID", text: /must cover "digest"/ },
  );
  await rejected(
    await signed({
      headers: [...BASE, "x-request-id", "psu-id", "tpp-redirect-uri", "psu-corporate-id"],
    }),
    {
      code: "SIGNATURE_INVALID",
      text: /covers "psu-corporate-id" but the request has no such header/,
    },
  );
  const untargeted = await signed({
    headers: ["date", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"],
  });
  assert.equal((await run(untargeted)).response.status, 201);
  await rejected(
    untargeted,
    { code: "SIGNATURE_INVALID", text: /must cover "\(request-target\)"/ },
    { policy: forPayments({ cover: ["(request-target)", "digest", "x-request-id"] }) },
  );
});

Deno.test("httpSignature() holds a signed date or (created) to the skew, and requires one where the policy says", async () => {
  const names = ["(request-target)", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"];
  assert.equal((await run(await signed({ headers: names }))).response.status, 201);
  await rejected(await signed({ headers: names }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "date" or "\(created\)"/,
  }, { policy: forPayments({ require_time: true }) });
  const stale = new Date(Date.now() - 301_000).toUTCString();
  await rejected(await signHttpSignature(tpp, input({ date: stale })), {
    code: "SIGNATURE_INVALID",
    text: /signed Date is more than 300 s away from the bank's clock/,
  });
  await rejected(await signHttpSignature(tpp, input({ date: "yesterday" })), {
    code: "SIGNATURE_INVALID",
    path: "Date",
    text: /must be an HTTP date/,
  });
  const created = ["(request-target)", "(created)", ...names.slice(1)];
  await rejected(
    await signed({ headers: created, created: Math.floor(Date.now() / 1000) + 400 }),
    { code: "SIGNATURE_INVALID", text: /signed created is more than 300 s away/ },
  );
  await rejected(
    await signed({ headers: created, expires: Math.floor(Date.now() / 1000) - 1 }),
    { code: "SIGNATURE_INVALID", text: /The Signature has expired/ },
  );
  const tighter = forPayments({ time_skew: "10s" });
  const late = new Date(Date.now() - 20_000).toUTCString();
  await rejected(await signHttpSignature(tpp, input({ date: late })), {
    code: "SIGNATURE_INVALID",
    text: /more than 10 s away/,
  }, { policy: tighter });
});

Deno.test("httpSignature() rejects an algorithm outside the allow-list", async () => {
  await rejected(await signed({ algorithm: "hmac-sha256" }), {
    code: "SIGNATURE_INVALID",
    text: /algorithm must be one of rsa-sha256, got "hmac-sha256"/,
  });
});

Deno.test("httpSignature() rejects a keyId that does not name the certificate sent", async () => {
  await rejected(await signed({ keyId: `SN=1234,CA=${tpp.cert.issuer}` }), {
    code: "SIGNATURE_INVALID",
    text: /keyId names SN=1234/,
  });
  await rejected(await signed({ keyId: "kid-1" }), {
    code: "SIGNATURE_INVALID",
    text: /keyId must look like "SN=<hex serial>,CA=<issuer DN>"/,
  });
});

Deno.test("httpSignature() rejects a malformed Signature header", async () => {
  await rejected({ ...await signed(), signature: "keyId=abc" }, {
    code: "SIGNATURE_INVALID",
    text: /list of name="value" parameters/,
  });
});

Deno.test("httpSignature() applies the certificate checks: CA, dates, blocked list, role, same TPP", async () => {
  await rejected(await signed({}, rogue), {
    code: "CERTIFICATE_INVALID",
    path: "TPP-Signature-Certificate",
  });
  await rejected(await signed({}, expired), { code: "CERTIFICATE_EXPIRED" });
  await rejected(await signed({}, blocked), { code: "CERTIFICATE_BLOCKED" });
  await rejected(await signed({}, aisOnly), { code: "ROLE_INVALID" });
  await rejected({ ...await signed({}, otherTpp), "x-ssl-client-cert": nginxHeader(tpp) }, {
    code: "SIGNATURE_INVALID",
    text: /belongs to TPP "PSDGE-NBG-999999"/,
  });
});

Deno.test("httpSignature() accepts a keyId with a percent-encoded DN and a hex or decimal serial", async () => {
  const forms = [
    keyIdOf(example, { percent: true }),
    keyIdOf(example, { serial: "decimal" }),
    keyIdOf(example, { serial: "decimal", percent: true }),
  ];
  assert.match(forms[0], /^SN=9FA1,CA=CN=Test%20QTSP%20CA,O=Test%20QTSP,C=GE$/);
  assert.match(forms[1], /^SN=40865,/);
  for (const keyId of forms) {
    const { response, body } = await run(await signed({ keyId }, example));
    assert.equal(response.status, 201, `${keyId}: ${JSON.stringify(body)}`);
  }
});

Deno.test("httpSignature() still refuses a keyId whose serial, in hex or decimal, or issuer is not the certificate's", async () => {
  const issuer = keyIdOf(example, { percent: true }).replace(/^SN=[^,]*,/, "");
  for (const keyId of [`SN=9FA2,${issuer}`, `SN=40866,${issuer}`, `SN=A09F,${issuer}`]) {
    await rejected(await signed({ keyId }, example), {
      code: "SIGNATURE_INVALID",
      text: /keyId names SN=/,
    });
  }
  const rogueIssuer = keyIdOf(rogue, { percent: true }).replace(/^SN=[^,]*,/, "");
  await rejected(await signed({ keyId: `SN=9FA1,${rogueIssuer}` }, example), {
    code: "SIGNATURE_INVALID",
    text: /keyId names SN=9FA1/,
  });
});

Deno.test("httpSignature() without algorithm takes rsa-sha256 from an RSA certificate key", async () => {
  const headers = await signed({ algorithm: null });
  assert.doesNotMatch(headers.signature, /algorithm=/);
  const { response, body } = await run(headers);
  assert.equal(response.status, 201, JSON.stringify(body));
  await rejected({ ...headers, "psu-id": "PSU-6666" }, {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  });
  await rejected(headers, {
    code: "SIGNATURE_INVALID",
    text: /RSA key implies rsa-sha256, which is not one of rsa-sha512/,
  }, {
    policy: forPayments({ algorithms: ["rsa-sha512"] }),
  });
});

Deno.test("httpSignature() without algorithm refuses an EC certificate key", async () => {
  await rejected(await signed({ algorithm: null }, tppEc), {
    code: "SIGNATURE_INVALID",
    text: /no algorithm and the signing certificate's key is ECDSA; only RSA keys are verified/,
  });
});

Deno.test("httpSignature() accepts hs2019 (RSASSA-PSS SHA-512) only when the policy allows it", async () => {
  const withHs2019 = forPayments({ algorithms: ["rsa-sha256", "hs2019"] });
  const headers = await signed({ algorithm: "hs2019" });
  await rejected(headers, {
    code: "SIGNATURE_INVALID",
    text: /algorithm must be one of rsa-sha256, got "hs2019"/,
  });
  const { response, body } = await run(headers, { policy: withHs2019 });
  assert.equal(response.status, 201, JSON.stringify(body));
  await rejected({ ...headers, "psu-id": "PSU-6666" }, {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  }, { policy: withHs2019 });
  // A PKCS#1 v1.5 signature labelled hs2019 is not RSASSA-PSS.
  const pkcs1 = await signed();
  await rejected(
    {
      ...pkcs1,
      signature: pkcs1.signature.replace('algorithm="rsa-sha256"', 'algorithm="hs2019"'),
    },
    { code: "SIGNATURE_INVALID", text: /signature value does not verify/ },
    {
      policy: withHs2019,
    },
  );
  await rejected(await signed({ algorithm: "hs2019" }, tppEc), {
    code: "SIGNATURE_INVALID",
    text: /key does not fit the algorithm hs2019/,
  }, { policy: withHs2019 });
});

Deno.test("httpSignature() applies the policy's QC types to the signing certificate", async () => {
  const sealsOnly = forPayments({ types: ["QSealC"] });
  await rejected(await signed({}, qwac), {
    code: "CERTIFICATE_INVALID",
    text: /^The signing certificate is a QWAC \(id-etsi-qct-web\); this operation accepts QSealC$/,
    path: "TPP-Signature-Certificate",
  }, { policy: sealsOnly });
  assert.equal((await run(await signed({}, qwac))).response.status, 201);
});

Deno.test("httpSignature() passes a signer whose responder is down under soft revocation, counted for http_signature", async () => {
  const text = policy({
    trust: {
      anchors: [ca.pem],
      blocked: [{ serial: "0badc0de" }],
      revocation: { ocsp_responder: `http://127.0.0.1:${closedPort()}`, methods: ["ocsp"] },
    },
    defaults: { http_signature: { required: true, revocation: "soft" } },
  });
  const outcome = await signedUnderSoftRevocation(text, await signed(), "http_signature");
  assert.equal(outcome.status, 201, outcome.text);
  assert.equal(outcome.softPasses, 1);
});

Deno.test("httpSignature() refuses a time_skew under 1s or over 1h", async () => {
  for (const [skew, text] of [["500ms", /must be at least 1s/], ["61m", /must be at most 1h/]]) {
    await assert.rejects(
      () =>
        startGateway({
          policy: forPayments({ time_skew: skew as string }),
        }),
      text as RegExp,
    );
  }
  for (const skew of ["1s", "1h"]) {
    await using gateway = await startGateway({
      policy: forPayments({ time_skew: skew }),
    });
    assert.ok(gateway.url, skew);
  }
});

Deno.test("httpSignature() refuses a policy whose cover list leaves out digest", async () => {
  await assert.rejects(
    () =>
      startGateway({
        policy: forPayments({ cover: ["(request-target)", "x-request-id"] }),
      }),
    /cover must include "digest"/,
  );
});

Deno.test("httpSignature() verifies a UTF-8 PSU-ID whose last byte is 0xA0", async () => {
  // "Р" is D0 A0 in UTF-8: read one character per byte, the value ends in U+00A0, which
  // String.prototype.trim() took off the signed line (it is no HTTP whitespace).
  const psuId = "ПЕТР";
  const sent = String.fromCharCode(...new TextEncoder().encode(psuId));
  const { response, body, reached } = await run({
    ...await signHttpSignature(tpp, input({ "psu-id": psuId })),
    "psu-id": sent,
  });
  assert.equal(response.status, 201, JSON.stringify(body));
  assert.equal(reached, 1);
});
