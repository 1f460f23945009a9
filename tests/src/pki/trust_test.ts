import assert from "node:assert/strict";
import { PIPELINE } from "../../../middleware/mod.ts";
import { parsePolicy } from "../../../src/policy/load.ts";
import type { PolicySections } from "../../../src/sections/sections.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { TrustStore, trustStore } from "../../../src/pki/trust.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { createCa, issue, yamlString } from "../../support/pki.ts";

const DAY = 86_400_000;
const ca = await createCa();
const otherCa = await createCa("Other QTSP CA");
const intermediate = await issue(ca, { ca: true, name: "Test Issuing CA 2" });
const tpp = await issue(ca, { keyType: "EC", serial: "00ab" });
const viaIntermediate = await issue(intermediate, { keyType: "EC" });
const role = { label: "TPP certificate", path: "X-SSL-Client-Cert" };

function sections(trust: string, tppKeys = ""): PolicySections {
  return parsePolicy(
    "trust-test.yaml",
    `upstream:\n  url: http://127.0.0.1:9\ntrust:\n${trust}\n${tppKeys}`,
    { ...PIPELINE, env: () => undefined },
  );
}

function store(trust = "", tppKeys = ""): TrustStore {
  const s = sections(`  anchors: [${yamlString(ca.pem)}]\n${trust}`, tppKeys);
  return new TrustStore(s.trust, s.tpp_keys);
}

async function refused(
  promise: Promise<unknown>,
  expected: { status?: number; code: string; text: string | RegExp },
) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, expected.status ?? 401);
    assert.equal(e.code, expected.code);
    assert.equal(e.path, role.path);
    if (typeof expected.text === "string") assert.equal(e.message, expected.text);
    else assert.match(e.message, expected.text);
    return true;
  });
}

const check = async (s: TrustStore, cert: { pem: string }, now = Date.now(), group = "pis") =>
  await s.checkTpp(await parseCertificate(cert.pem), {
    ...role,
    group: group as "pis",
    now,
  });

Deno.test("TrustStore.certificate() says why a certificate cannot be read, in the role's words", async () => {
  const s = store();
  await refused(s.certificate("not a certificate!", role), {
    code: "CERTIFICATE_INVALID",
    text: "The TPP certificate cannot be read: it is neither PEM nor base64",
  });
  await refused(s.certificate("AQI=", role), {
    code: "CERTIFICATE_INVALID",
    text:
      "The TPP certificate cannot be read: it is not a well-formed DER-encoded X.509 certificate",
  });
  const info = await s.certificate(tpp.pem, role);
  assert.equal(await s.certificate(tpp.pem, role), info, "parsed once per value");
  assert.equal(info.serial, "ab");
});

Deno.test("TrustStore.checkTpp() returns the TPP id of a certificate that chains to an anchor", async () => {
  const s = store();
  assert.equal(await check(s, tpp), "PSDGE-NBG-123456");
  const info = await parseCertificate(tpp.pem);
  await s.checkTpp(info, { ...role, group: "pis", now: Date.now() });
  assert.equal(s.issuerOf(info)?.sha256, (await parseCertificate(ca.pem)).sha256);
  await refused(check(store(), await issue(otherCa, { keyType: "EC" })), {
    code: "CERTIFICATE_INVALID",
    text: "The TPP certificate does not chain to a trust anchor of the bank",
  });
});

Deno.test("TrustStore.checkTpp() builds chains through the policy's intermediates or the request's", async () => {
  await refused(check(store(), viaIntermediate), {
    code: "CERTIFICATE_INVALID",
    text: /does not chain to a trust anchor/,
  });
  const withIntermediate = store(`  intermediates: [${yamlString(intermediate.pem)}]`);
  const info = await parseCertificate(viaIntermediate.pem);
  assert.equal(
    await withIntermediate.checkTpp(info, { ...role, group: "pis", now: Date.now() }),
    "PSDGE-NBG-123456",
  );
  assert.equal(withIntermediate.issuerOf(info)?.cert.subject, intermediate.cert.subject);
  const s = store();
  const extra = [await parseCertificate(intermediate.pem)];
  assert.equal(
    await s.checkTpp(info, { ...role, group: "pis", now: Date.now(), extra }),
    "PSDGE-NBG-123456",
  );
  // The chain with the request's intermediate is its own: without it the leaf does not chain.
  await refused(check(s, viaIntermediate), { code: "CERTIFICATE_INVALID", text: /chain/ });
  // An intermediate that is no CA certificate issues nothing.
  const notCa = await issue(ca, { name: "Test Issuing CA 2" });
  const forged = await issue(notCa, { keyType: "EC" });
  await refused(
    s.checkTpp(await parseCertificate(forged.pem), {
      ...role,
      group: "pis",
      now: Date.now(),
      extra: [await parseCertificate(notCa.pem)],
    }),
    { code: "CERTIFICATE_INVALID", text: /chain/ },
  );
});

Deno.test("TrustStore.checkTpp() takes an anchor itself as trusted, with no issuer", async () => {
  const anchored = await issue(ca, { ca: true, name: "Anchored TPP" });
  const s = sections(`  anchors: [${yamlString(anchored.pem)}]\n  roles: { pis: [] }`);
  const trust = new TrustStore(s.trust, s.tpp_keys);
  const info = await parseCertificate(anchored.pem);
  assert.equal(
    await trust.checkTpp(info, { ...role, group: "pis", now: Date.now() }),
    "PSDGE-NBG-123456",
  );
  assert.equal(trust.issuerOf(info), undefined);
  const noId = await issue(ca, { keyType: "EC", orgId: null });
  await refused(check(store(), noId), {
    code: "CERTIFICATE_INVALID",
    text: "The TPP certificate must carry the TPP id in organizationIdentifier (2.5.4.97)",
  });
});

Deno.test("TrustStore.checkTpp() refuses certificates blocked by fingerprint or by serial and issuer", async () => {
  const info = await parseCertificate(tpp.pem);
  const colons = info.sha256.toUpperCase().match(/../g)!.join(":");
  const blocked = {
    code: "CERTIFICATE_BLOCKED",
    text: "The TPP certificate (serial ab) is blocked by the bank",
  };
  await refused(check(store(`  blocked: [{ sha256: "${colons}" }]`), tpp), blocked);
  await refused(check(store(`  blocked: [{ serial: "00:AB" }]`), tpp), blocked);
  await refused(
    check(
      store(`  blocked: [{ serial: "ab", issuer: "cn=test qtsp ca,o=Test QTSP ,  C=GE" }]`),
      tpp,
    ),
    blocked,
  );
  assert.equal(
    await check(
      store(`  blocked: [{ serial: "ab", issuer: "CN=Other QTSP CA, O=Test QTSP, C=GE" }]`),
      tpp,
    ),
    "PSDGE-NBG-123456",
  );
  assert.equal(await check(store(`  blocked: [{ serial: "abc" }]`), tpp), "PSDGE-NBG-123456");
  // A blocked issuing CA blocks what it issued.
  const withIntermediate = store(
    `  intermediates: [${yamlString(intermediate.pem)}]\n  blocked: [{ serial: "${
      (await parseCertificate(intermediate.pem)).serial
    }", issuer: "CN=Test QTSP CA, O=Test QTSP, C=GE" }]`,
  );
  await refused(check(withIntermediate, viaIntermediate), {
    code: "CERTIFICATE_BLOCKED",
    text: /is blocked by the bank/,
  });
});

Deno.test("TrustStore.checkTpp() holds the dates of the certificate and its chain, with the clock skew", async () => {
  const notAfter = new Date(Math.floor(Date.now() / 1000) * 1000 + 10 * DAY);
  const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 - DAY);
  const cert = await issue(ca, { keyType: "EC", notAfter, notBefore });
  const s = store("  clock_skew: 60s");
  const end = notAfter.getTime() + 60_000;
  assert.equal(await check(s, cert, end), "PSDGE-NBG-123456");
  await refused(check(s, cert, end + 1), {
    code: "CERTIFICATE_EXPIRED",
    text: `The TPP certificate expired on ${notAfter.toISOString().replace(".000Z", "Z")}`,
  });
  const start = notBefore.getTime() - 60_000;
  assert.equal(await check(s, cert, start), "PSDGE-NBG-123456");
  await refused(check(s, cert, start - 1), {
    code: "CERTIFICATE_INVALID",
    text: `The TPP certificate is not valid before ${
      notBefore.toISOString().replace(".000Z", "Z")
    }`,
  });
  // The issuing CA's dates bound the chain's.
  const caEnd = intermediate.cert.notAfter.getTime();
  const later = await issue(intermediate, { keyType: "EC", notAfter: new Date(caEnd + 100 * DAY) });
  const chained = store(`  intermediates: [${yamlString(intermediate.pem)}]\n  clock_skew: 0s`);
  assert.equal(await check(chained, later, caEnd), "PSDGE-NBG-123456");
  await refused(check(chained, later, caEnd + 1), {
    code: "CERTIFICATE_EXPIRED",
    text: `The TPP certificate's issuing CA certificate expired on ${
      new Date(caEnd).toISOString().replace(/\.000Z$/, "Z")
    }`,
  });
  const caStart = intermediate.cert.notBefore.getTime();
  const early = await issue(intermediate, {
    keyType: "EC",
    notBefore: new Date(caStart - 100 * DAY),
  });
  assert.equal(await check(chained, early, caStart), "PSDGE-NBG-123456");
  await refused(check(chained, early, caStart - 1), {
    code: "CERTIFICATE_INVALID",
    text: /is not valid before/,
  });
});

Deno.test("TrustStore.checkTpp() requires one of the roles the group needs", async () => {
  const s = store("  roles: { pis: [PSP_PI, PSP_IC], ais: [] }");
  const aisOnly = await issue(ca, { keyType: "EC", roles: ["PSP_AI", "PSP_AS"] });
  await refused(check(s, aisOnly), {
    code: "ROLE_INVALID",
    text:
      "The TPP certificate must carry the PSD2 role PSP_PI or PSP_IC for this operation; it has PSP_AI, PSP_AS",
  });
  const none = await issue(ca, { keyType: "EC", roles: [] });
  await refused(check(s, none), { code: "ROLE_INVALID", text: /for this operation; it has none$/ });
  assert.equal(await check(s, none, Date.now(), "ais"), "PSDGE-NBG-123456");
  const ic = await issue(ca, { keyType: "EC", roles: ["PSP_IC"] });
  assert.equal(await check(s, ic), "PSDGE-NBG-123456");
});

Deno.test("TrustStore.signingKey() finds the policy's TPP keys by x5t#S256 first, then by kid", async () => {
  const other = await issue(ca, { keyType: "EC" });
  const s = store(
    "",
    `tpp_keys:\n  - { tpp: PSDGE-NBG-123456, kid: k1, certificate: ${
      yamlString(tpp.pem)
    } }\n  - { tpp: PSDGE-NBG-123456, certificate: ${yamlString(other.pem)} }`,
  );
  const first = await parseCertificate(tpp.pem);
  const second = await parseCertificate(other.pem);
  assert.equal((await s.signingKey({ kid: "k1" }))?.sha256, first.sha256);
  assert.equal((await s.signingKey({ x5tS256: second.x5tS256 }))?.sha256, second.sha256);
  assert.equal(
    (await s.signingKey({ x5tS256: second.x5tS256, kid: "k1" }))?.sha256,
    second.sha256,
  );
  assert.equal(await s.signingKey({ x5tS256: "nothing", kid: "k1" }), undefined);
  assert.equal(await s.signingKey({ kid: "k2" }), undefined);
  assert.equal(await s.signingKey({ kid: "" }), undefined);
  assert.equal(await s.signingKey({}), undefined);
});

Deno.test("TrustStore.publicKey() imports a key once per algorithm, and again after a failure", async () => {
  const s = store();
  const info = await parseCertificate(tpp.pem);
  const key = s.publicKey(info, "ES256");
  assert.equal(s.publicKey(info, "ES256"), key);
  assert.equal((await key).algorithm.name, "ECDSA");
  const wrong = s.publicKey(info, "RS256");
  await assert.rejects(wrong);
  assert.notEqual(s.publicKey(info, "RS256"), wrong, "a failed import is not kept");
  await assert.rejects(s.publicKey(info, "RS256"));
});

Deno.test("trustStore() makes one store per policy", () => {
  const a = sections(`  anchors: [${yamlString(ca.pem)}]`);
  const b = sections(`  anchors: [${yamlString(ca.pem)}]`);
  assert.equal(trustStore(a), trustStore(a));
  assert.notEqual(trustStore(a), trustStore(b));
});

Deno.test("TrustStore.checkTpp() refuses a certificate from a CA that only takes an anchor's name", async () => {
  const impostor = await createCa("Test QTSP CA");
  await refused(check(store(), await issue(impostor, { keyType: "EC" })), {
    code: "CERTIFICATE_INVALID",
    text: "The TPP certificate does not chain to a trust anchor of the bank",
  });
});

Deno.test("TrustStore.checkTpp() keeps a chain per leaf and list of intermediates sent", async () => {
  const s = store();
  const info = await parseCertificate(viaIntermediate.pem);
  const at = { ...role, group: "pis" as const, now: Date.now() };
  const good = [await parseCertificate(intermediate.pem)];
  assert.equal(await s.checkTpp(info, { ...at, extra: good }), "PSDGE-NBG-123456");
  // Another list of the same length is another chain: this one does not reach an anchor.
  const other = [await parseCertificate(otherCa.pem)];
  await refused(s.checkTpp(info, { ...at, extra: other }), {
    code: "CERTIFICATE_INVALID",
    text: /chain/,
  });
});
