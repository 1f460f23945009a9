import assert from "node:assert/strict";
import "reflect-metadata";
import { ExtendedKeyUsage, ExtendedKeyUsageExtension } from "@peculiar/x509";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, type Issued, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { freePort, opensslCa, serveBytes } from "../support/openssl_ca.ts";
import { createMetrics } from "../../src/lib/metrics.ts";
import { parseCertificate } from "../../src/pki/certificate.ts";
import { ocspRequest } from "../../src/pki/ocsp.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

const DAY = 86_400_000;
const ca = await createCa();
const otherCa = await createCa("Rogue CA");
const tpp = await issue(ca);
const rogue = await issue(otherCa);
const expired = await issue(ca, {
  notBefore: new Date(Date.now() - 400 * DAY),
  notAfter: new Date(Date.now() - 2 * DAY),
});
const justExpired = await issue(ca, {
  notBefore: new Date(Date.now() - 400 * DAY),
  notAfter: new Date(Date.now() - 10_000),
});
const future = await issue(ca, { notBefore: new Date(Date.now() + 2 * DAY) });
const blockedBySha = await issue(ca);
const blockedBySerial = await issue(ca, { serial: "0a0b0c" });
const aisOnly = await issue(ca, { roles: ["PSP_AI"] });
const pisOnly = await issue(ca, { roles: ["PSP_PI"] });
const anonymous = await issue(ca, { orgId: null });
const blockedSha = Array.from(
  new Uint8Array(await crypto.subtle.digest("SHA-256", blockedBySha.cert.rawData)),
  (b) => b.toString(16).padStart(2, "0"),
).join(":");

type Trust = NonNullable<PolicyInput["trust"]>;

/** The test CA's trust with these fields over it, a required certificate, and the parts over it. */
function policy(trust: Partial<Trust> = {}, ...parts: PolicyInput[]) {
  return buildPolicy({
    trust: {
      anchors: [ca.pem],
      blocked: [{ sha256: blockedSha }, { serial: "0A0B0C", issuer: ca.cert.subject }],
      ...trust,
    },
    defaults: { tpp_certificate: { form: "nginx", required: true } },
  }, ...parts);
}

/** The policy with these tpp_certificate options, for every operation or for the pis group. */
function certificate(
  options: LevelInput["tpp_certificate"],
  level: "defaults" | "pis" = "defaults",
) {
  return level === "defaults"
    ? policy({}, { defaults: { tpp_certificate: options } })
    : policy({}, { groups: { pis: { tpp_certificate: options } } });
}

/** A payment initiation that passes every request-hardening rule: the certificate decides. */
const PAYMENT = {
  path: "/v1/payments/domestic",
  init: { method: "POST", body: JSON.stringify(singlePayment()), headers: initiationHeaders() },
};
const ACCOUNTS = { path: "/v1/accounts", init: { headers: { "consent-id": "c-1" } } };

async function call(
  headers: Record<string, string>,
  options: { policy?: PolicyInput; request?: { path: string; init: RequestInit } } = {},
) {
  const request = options.request ?? PAYMENT;
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: options.policy ?? policy(),
    upstream: upstream.url,
  });
  const response = await gateway.fetch(request.path, {
    ...request.init,
    headers: { ...request.init.headers, "x-request-id": crypto.randomUUID(), ...headers },
  });
  const body = await response.json();
  return { response, body, upstream: upstream.received, log: gateway.log.lines };
}

async function rejected(
  headers: Record<string, string>,
  expected: { code: string; text?: RegExp; path?: string },
  options: { policy?: PolicyInput; request?: { path: string; init: RequestInit } } = {},
) {
  const { response, body, upstream } = await call(headers, options);
  assert.equal(response.status, 401, JSON.stringify(body));
  assert.equal(body.tppMessages[0].code, expected.code, body.tppMessages[0].text);
  if (expected.text) assert.match(body.tppMessages[0].text, expected.text);
  if (expected.path) assert.equal(body.tppMessages[0].path, expected.path);
  assert.equal(upstream.length, 0, "a rejected request reached the upstream");
}

Deno.test("tppCertificate() accepts an nginx URL-encoded PEM and keys the TPP id", async () => {
  const { response, upstream, log } = await call({ "x-ssl-client-cert": nginxHeader(tpp) });
  assert.equal(response.status, 200);
  assert.equal(upstream.length, 1);
  assert.equal(log.find((l) => l.op === "initiatePayment")?.tpp, "PSDGE-NBG-123456");
});

Deno.test("tppCertificate() reads Envoy's X-Forwarded-Client-Cert", async () => {
  const xfcc = `By=spiffe://bank/edge;Hash=abc;Cert="${nginxHeader(tpp)}";Subject="CN=tpp.example"`;
  const envoy = certificate({ form: "envoy" });
  const ok = await call({ "x-forwarded-client-cert": xfcc }, { policy: envoy });
  assert.equal(ok.response.status, 200);
  await rejected({ "x-forwarded-client-cert": "By=spiffe://bank/edge;Hash=abc" }, {
    code: "CERTIFICATE_INVALID",
    text: /X-Forwarded-Client-Cert" must carry Cert=/,
  }, { policy: envoy });
});

Deno.test("tppCertificate() reads RFC 9440 Client-Cert", async () => {
  const rfc = certificate({ form: "rfc9440" });
  const ok = await call({ "client-cert": `:${tpp.base64}:` }, { policy: rfc });
  assert.equal(ok.response.status, 200);
  await rejected({ "client-cert": tpp.base64 }, {
    code: "CERTIFICATE_INVALID",
    text: /RFC 9440/,
  }, { policy: rfc });
});

Deno.test("tppCertificate() answers CERTIFICATE_MISSING where required, and passes where not", async () => {
  await rejected({}, {
    code: "CERTIFICATE_MISSING",
    text: /^Header "X-SSL-Client-Cert" must carry the TPP's certificate$/,
    path: "X-SSL-Client-Cert",
  });
  const optional = certificate({ required: false });
  assert.equal((await call({}, { policy: optional })).response.status, 200);
});

Deno.test("tppCertificate() rejects a header that holds no certificate", async () => {
  await rejected({ "x-ssl-client-cert": "not%20a%20certificate" }, {
    code: "CERTIFICATE_INVALID",
    text: /cannot be read/,
  });
  await rejected({ "x-ssl-client-cert": "%E0%A4%A" }, {
    code: "CERTIFICATE_INVALID",
    text: /URL-encoded PEM/,
  });
});

Deno.test("tppCertificate() rejects a certificate from another CA", async () => {
  await rejected({ "x-ssl-client-cert": nginxHeader(rogue) }, {
    code: "CERTIFICATE_INVALID",
    text: /TPP certificate does not chain to a trust anchor/,
  });
});

Deno.test("tppCertificate() rejects an expired and a not yet valid certificate", async () => {
  await rejected({ "x-ssl-client-cert": nginxHeader(expired) }, {
    code: "CERTIFICATE_EXPIRED",
    text: /TPP certificate expired on \d{4}-/,
  });
  await rejected({ "x-ssl-client-cert": nginxHeader(future) }, {
    code: "CERTIFICATE_INVALID",
    text: /is not valid before/,
  });
});

Deno.test("tppCertificate() allows the policy's clock skew on validity dates", async () => {
  const ok = await call({ "x-ssl-client-cert": nginxHeader(justExpired) });
  assert.equal(ok.response.status, 200);
  await rejected({ "x-ssl-client-cert": nginxHeader(justExpired) }, {
    code: "CERTIFICATE_EXPIRED",
  }, { policy: policy({ clock_skew: "0s" }) });
});

Deno.test("tppCertificate() rejects certificates blocked by fingerprint or by serial and issuer", async () => {
  await rejected({ "x-ssl-client-cert": nginxHeader(blockedBySha) }, {
    code: "CERTIFICATE_BLOCKED",
    text: /is blocked by the bank/,
  });
  await rejected({ "x-ssl-client-cert": nginxHeader(blockedBySerial) }, {
    code: "CERTIFICATE_BLOCKED",
    text: /serial a0b0c/,
  });
});

Deno.test("tppCertificate() requires an organizationIdentifier", async () => {
  await rejected({ "x-ssl-client-cert": nginxHeader(anonymous) }, {
    code: "CERTIFICATE_INVALID",
    text: /organizationIdentifier/,
  });
});

Deno.test("tppCertificate() requires PSP_PI for payments and PSP_AI for accounts and consents", async () => {
  await rejected({ "x-ssl-client-cert": nginxHeader(aisOnly) }, {
    code: "ROLE_INVALID",
    text: /PSP_PI .* it has PSP_AI/,
  });
  await rejected({ "x-ssl-client-cert": nginxHeader(pisOnly) }, {
    code: "ROLE_INVALID",
    text: /PSP_AI/,
  }, { request: ACCOUNTS });
  await rejected({ "x-ssl-client-cert": nginxHeader(pisOnly) }, { code: "ROLE_INVALID" }, {
    request: { path: "/v1/consents/c-1", init: {} },
  });
  assert.equal(
    (await call({ "x-ssl-client-cert": nginxHeader(aisOnly) }, { request: ACCOUNTS })).response
      .status,
    200,
  );
});

Deno.test("tppCertificate() takes the role mapping from the policy", async () => {
  const relaxed = policy({ roles: { pis: ["PSP_PI", "PSP_AI"] } });
  const ok = await call({ "x-ssl-client-cert": nginxHeader(aisOnly) }, { policy: relaxed });
  assert.equal(ok.response.status, 200);
});

Deno.test("trust section: a missing anchor file is a policy error naming the path", async () => {
  const broken = policy({ anchors: ["/nonexistent/qtsp-ca.pem"] });
  await assert.rejects(
    () => startGateway({ policy: broken, upstream: "http://127.0.0.1:9" }),
    /trust\.anchors\.0: cannot read file "\/nonexistent\/qtsp-ca\.pem"/,
  );
});

Deno.test("tppCertificate() refuses a policy whose terminators are no addresses", async () => {
  await assert.rejects(
    () => startGateway({ policy: policy({ terminators: ["10.0.0.0/8", "nginx.internal"] }) }),
    /trust\.terminators\.1: an IP address or CIDR/,
  );
});

// Revocation, against a CA, a CRL and OCSP responders made by openssl (tests/support/openssl_ca.ts).

const HOUR = 3_600_000;
const openCa = await opensslCa();
const goodTpp = await issue(openCa.ca);
const revokedTpp = await issue(openCa.ca);
const unknownTpp = await issue(openCa.ca);
await openCa.valid(goodTpp);
await openCa.revoke(revokedTpp);

type CertificateOptions = NonNullable<LevelInput["tpp_certificate"]>;

function revocationPolicy(
  mode: CertificateOptions["revocation"],
  revocation: Trust["revocation"],
  options: CertificateOptions = {},
) {
  return buildPolicy({
    trust: { anchors: [openCa.ca.pem], revocation },
    defaults: {
      tpp_certificate: { form: "nginx", required: true, revocation: mode, ...options },
    },
  });
}

async function revocationCall(
  cert: Issued,
  policy: PolicyInput,
  options: { now?: () => number; headers?: Record<string, string> } = {},
) {
  await using upstream = startUpstream();
  const metrics = createMetrics();
  await using gateway = await startGateway({
    policy,
    upstream: upstream.url,
    services: { metrics, ...(options.now ? { now: options.now } : {}) },
  });
  const response = await gateway.fetch(PAYMENT.path, {
    ...PAYMENT.init,
    headers: {
      ...PAYMENT.init.headers,
      "x-request-id": crypto.randomUUID(),
      "x-ssl-client-cert": nginxHeader(cert),
      ...options.headers,
    },
  });
  const body = await response.json();
  return { response, body, upstream: upstream.received, metrics, log: gateway.log.lines };
}

Deno.test("tppCertificate() revocation: a good certificate passes, a revoked one is 401 CERTIFICATE_REVOKED (OCSP)", async () => {
  await using responder = await openCa.responder();
  const policy = revocationPolicy("hard", { ocsp_responder: responder.url });
  const ok = await revocationCall(goodTpp, policy);
  assert.equal(ok.response.status, 200, JSON.stringify(ok.body));
  const no = await revocationCall(revokedTpp, policy);
  assert.equal(no.response.status, 401);
  assert.equal(no.body.tppMessages[0].code, "CERTIFICATE_REVOKED");
  assert.match(
    no.body.tppMessages[0].text,
    /TPP certificate \(serial [0-9a-f]+\) is revoked since .* \(OCSP\)/,
  );
  assert.equal(no.upstream.length, 0);
});

Deno.test("tppCertificate() revocation: a certificate unknown to the responder is 401 CERTIFICATE_INVALID, soft or hard", async () => {
  await using responder = await openCa.responder();
  for (const mode of ["soft", "hard"] as const) {
    const no = await revocationCall(
      unknownTpp,
      revocationPolicy(mode, { ocsp_responder: responder.url }),
    );
    assert.equal(no.response.status, 401);
    assert.equal(no.body.tppMessages[0].code, "CERTIFICATE_INVALID");
    assert.match(no.body.tppMessages[0].text, /unknown to its issuer's OCSP responder/);
    assert.equal(no.upstream.length, 0);
  }
});

Deno.test("tppCertificate() revocation: a responder that is down passes under soft (counted) and is 503 under hard", async () => {
  const down = { ocsp_responder: `http://127.0.0.1:${freePort()}`, methods: ["ocsp" as const] };
  const soft = await revocationCall(goodTpp, revocationPolicy("soft", down));
  assert.equal(soft.response.status, 200);
  assert.equal(soft.upstream.length, 1);
  assert.equal(soft.metrics.revocationSoftPasses.value({ check: "tpp_certificate" }), 1);
  assert.ok(soft.log.some((l) => l.msg === "revocation source unavailable"));
  const hard = await revocationCall(goodTpp, revocationPolicy("hard", down));
  assert.equal(hard.response.status, 503);
  assert.equal(hard.body.tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
  assert.match(hard.body.tppMessages[0].text, /revocation status of the TPP certificate/);
  assert.ok(Number(hard.response.headers.get("retry-after")) >= 1);
  assert.equal(hard.upstream.length, 0);
});

Deno.test("tppCertificate() revocation: an expired response and one signed by a stranger are not believed", async () => {
  await using shortLived = await openCa.responder({ minutes: 1 });
  const later = () => Date.now() + HOUR;
  const expired = await revocationCall(
    revokedTpp,
    revocationPolicy("hard", { ocsp_responder: shortLived.url, methods: ["ocsp"] }),
    { now: later },
  );
  assert.equal(expired.response.status, 503, "an expired response was believed");
  assert.ok(expired.log.some((l) => /expired at its nextUpdate/.test(String(l.error))));

  await using stranger = await openCa.responder({ signer: "stranger" });
  const forged = await revocationCall(
    revokedTpp,
    revocationPolicy("hard", { ocsp_responder: stranger.url, methods: ["ocsp"] }),
  );
  assert.equal(forged.response.status, 503, "a stranger's response was believed");
  assert.equal(forged.upstream.length, 0);
  assert.ok(forged.log.some((l) => /did not authorise/.test(String(l.error))));
});

Deno.test("tppCertificate() revocation: a CRL made by openssl ca -gencrl and served over HTTP", async () => {
  const crl = await openCa.crl();
  await using server = serveBytes(() => crl);
  const policy = revocationPolicy("hard", { crls: [server.url], methods: ["crl"] });
  assert.equal((await revocationCall(goodTpp, policy)).response.status, 200);
  const no = await revocationCall(revokedTpp, policy);
  assert.equal(no.response.status, 401);
  assert.equal(no.body.tppMessages[0].code, "CERTIFICATE_REVOKED");
  assert.match(no.body.tppMessages[0].text, /\(CRL\)/);
});

Deno.test("tppCertificate() revocation: an OCSP response stapled by the terminator is used and not forwarded", async () => {
  const stapled = async (cert: Issued) => {
    await using responder = await openCa.responder();
    const info = await parseCertificate(cert.pem);
    const request = await ocspRequest(info.cert, openCa.ca.cert);
    const answer = await fetch(responder.url, { method: "POST", body: request as BodyInit });
    return btoa(String.fromCharCode(...new Uint8Array(await answer.arrayBuffer())));
  };
  // The responder is down: only the staple can answer.
  const policy = revocationPolicy(
    "hard",
    { ocsp_responder: `http://127.0.0.1:${freePort()}`, methods: ["ocsp"] },
    { ocsp_header: "X-SSL-Client-OCSP" },
  );
  const ok = await revocationCall(goodTpp, policy, {
    headers: { "x-ssl-client-ocsp": await stapled(goodTpp) },
  });
  assert.equal(ok.response.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.upstream[0].headers.get("x-ssl-client-ocsp"), null);
  const no = await revocationCall(revokedTpp, policy, {
    headers: { "x-ssl-client-ocsp": await stapled(revokedTpp) },
  });
  assert.equal(no.body.tppMessages[0].code, "CERTIFICATE_REVOKED");
  // A staple about another certificate is ignored: the responder (down) decides.
  const other = await revocationCall(revokedTpp, policy, {
    headers: { "x-ssl-client-ocsp": await stapled(goodTpp) },
  });
  assert.equal(other.response.status, 503);
});

Deno.test("tppCertificate() revocation: a staple in RFC 9440 form is read, an unreadable one is none", async () => {
  await using responder = await openCa.responder();
  const info = await parseCertificate(goodTpp.pem);
  const request = await ocspRequest(info.cert, openCa.ca.cert);
  const answer = await fetch(responder.url, { method: "POST", body: request as BodyInit });
  const staple = btoa(String.fromCharCode(...new Uint8Array(await answer.arrayBuffer())));
  const policy = revocationPolicy(
    "hard",
    { ocsp_responder: `http://127.0.0.1:${freePort()}`, methods: ["ocsp"] },
    { ocsp_header: "X-SSL-Client-OCSP" },
  );
  const rfc = await revocationCall(goodTpp, policy, {
    headers: { "x-ssl-client-ocsp": ` :${staple}: ` },
  });
  assert.equal(rfc.response.status, 200, JSON.stringify(rfc.body));
  // Not base64: no staple, so the responder (down) decides.
  const unreadable = await revocationCall(goodTpp, policy, {
    headers: { "x-ssl-client-ocsp": "not base64!" },
  });
  assert.equal(unreadable.response.status, 503, JSON.stringify(unreadable.body));
  assert.equal(unreadable.upstream.length, 0);
});

Deno.test("tppCertificate() revocation: colons strip only as the RFC 9440 pair around the whole value", async () => {
  await using responder = await openCa.responder();
  const policy = revocationPolicy("hard", { ocsp_responder: responder.url }, {
    ocsp_header: "X-SSL-Client-OCSP",
  });
  // Colons inside a value, or only at one end, make it no base64: no staple at all, so the
  // responder decides and nothing is logged as an ignored staple ("AAAA" with the colons taken out
  // would be base64 of bytes that are no OCSP response).
  for (const value of ["AAA:A:", ":AAAA:AAAA"]) {
    const call = await revocationCall(goodTpp, policy, { headers: { "x-ssl-client-ocsp": value } });
    assert.equal(call.response.status, 200, JSON.stringify(call.body));
    assert.equal(
      call.log.some((line) => line.msg === "stapled OCSP response ignored"),
      false,
      value,
    );
  }
});

// Certificate types (QC type statement) and extended key usage.

const qwac = await issue(ca, { qcTypes: ["QWAC"] });
const qsealc = await issue(ca, { qcTypes: ["QSealC"] });
const clientAuth = await issue(ca, {
  qcTypes: ["QWAC"],
  extensions: [new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth])],
});
const serverAuthOnly = await issue(ca, {
  qcTypes: ["QWAC"],
  extensions: [new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth])],
});

Deno.test("tppCertificate() accepts a QWAC and refuses a QSealC as transport certificate by default", async () => {
  assert.equal((await call({ "x-ssl-client-cert": nginxHeader(qwac) })).response.status, 200);
  await rejected({ "x-ssl-client-cert": nginxHeader(qsealc) }, {
    code: "CERTIFICATE_INVALID",
    text: /TPP certificate is a QSealC \(id-etsi-qct-eseal\); this operation accepts QWAC/,
  });
});

Deno.test("tppCertificate() takes the accepted types from the policy, and can require a declared type", async () => {
  const both = certificate({ types: ["QWAC", "QSealC"] }, "pis");
  assert.equal(
    (await call({ "x-ssl-client-cert": nginxHeader(qsealc) }, { policy: both })).response.status,
    200,
  );
  // The test certificates of the other tests declare no type: they pass unless it is required.
  const strict = certificate({ require_type: true }, "pis");
  await rejected({ "x-ssl-client-cert": nginxHeader(tpp) }, {
    code: "CERTIFICATE_INVALID",
    text: /declares no QC type .* accepts QWAC/,
  }, { policy: strict });
  assert.equal(
    (await call({ "x-ssl-client-cert": nginxHeader(qwac) }, { policy: strict })).response.status,
    200,
  );
});

Deno.test("tppCertificate() requires the extended key usage clientAuth when the policy asks", async () => {
  const strict = certificate({ require_key_usage: true }, "pis");
  assert.equal(
    (await call({ "x-ssl-client-cert": nginxHeader(clientAuth) }, { policy: strict })).response
      .status,
    200,
  );
  for (const cert of [serverAuthOnly, qwac]) {
    await rejected({ "x-ssl-client-cert": nginxHeader(cert) }, {
      code: "CERTIFICATE_INVALID",
      text: /extended key usage must include clientAuth/,
    }, { policy: strict });
  }
  assert.equal(
    (await call({ "x-ssl-client-cert": nginxHeader(serverAuthOnly) })).response.status,
    200,
  );
});
