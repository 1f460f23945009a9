import assert from "node:assert/strict";
import "reflect-metadata";
import { z } from "zod";
import {
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
} from "@peculiar/x509";
import { PIPELINE } from "../../../middleware/mod.ts";
import { parsePolicy } from "../../../src/policy/load.ts";
import { defaultServices } from "../../../src/policy/services.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { TrustStore } from "../../../src/pki/trust.ts";
import {
  certificateGuard,
  type CertificateUse,
  certificateUseFields,
} from "../../../src/pki/certificate_use.ts";
import type { QcTypeName } from "../../../src/pki/qc_statement.ts";
import { createCa, issue, yamlString } from "../../support/pki.ts";
import { closedPort } from "../../support/upstream.ts";

const ca = await createCa();
const plain = await parseCertificate((await issue(ca, { keyType: "EC" })).pem);
const typed = async (qcTypes: QcTypeName[]) =>
  await parseCertificate((await issue(ca, { keyType: "EC", qcTypes })).pem);
const qwac = await typed(["QWAC"]);
const qsealc = await typed(["QSealC"]);
const both = await typed(["QESig", "QSealC"]);
const withUsages = async (extensions: (KeyUsagesExtension | ExtendedKeyUsageExtension)[]) =>
  await parseCertificate((await issue(ca, { keyType: "EC", extensions })).pem);

const TRANSPORT: CertificateUse = {
  kind: "transport",
  label: "TPP certificate",
  path: "X-SSL-Client-Cert",
  check: "tpp_certificate",
};
const SIGNING: CertificateUse = {
  kind: "signing",
  label: "signing certificate",
  path: "x-jws-signature",
  check: "jws_signature",
};

function sections(trust = "") {
  return parsePolicy(
    "certificate-use-test.yaml",
    `upstream:\n  url: http://127.0.0.1:9\ntrust:\n  anchors: [${yamlString(ca.pem)}]\n${trust}`,
    { ...PIPELINE, env: () => undefined },
  );
}

function guard(
  options: Record<string, unknown>,
  use: CertificateUse,
  trust = "",
) {
  const s = sections(trust);
  const store = new TrustStore(s.trust, s.tpp_keys);
  const parsed = z.object(certificateUseFields(use.kind)).parse(options);
  const services = defaultServices({ log: memoryLogger() });
  return {
    store,
    services,
    check: certificateGuard(parsed, use, { store, sections: s, services, group: "pis" }),
  };
}

async function refused(promise: Promise<void>, use: CertificateUse, text: string) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, 401);
    assert.equal(e.code, "CERTIFICATE_INVALID");
    assert.equal(e.path, use.path);
    assert.equal(e.message, text);
    return true;
  });
}

Deno.test("certificateUseFields() defaults: QWAC for transport, QSealC or QWAC for signing, nothing required", () => {
  const transport = z.object(certificateUseFields("transport")).parse({});
  assert.deepEqual(transport, {
    types: ["QWAC"],
    require_type: false,
    require_key_usage: false,
    revocation: "off",
  });
  const signing = z.object(certificateUseFields("signing")).parse({});
  assert.deepEqual(signing.types, ["QSealC", "QWAC"]);
  assert.throws(() => z.object(certificateUseFields("signing")).parse({ types: [] }));
  const describe = (kind: "transport" | "signing", key: string) =>
    (certificateUseFields(kind) as Record<string, z.ZodType>)[key].description ?? "";
  assert.match(describe("transport", "types"), /transport certificate may declare/);
  assert.match(describe("signing", "types"), /signing certificate may declare/);
  assert.match(describe("transport", "require_key_usage"), /extended key usage clientAuth/);
  assert.match(describe("signing", "require_key_usage"), /digitalSignature or nonRepudiation/);
  assert.match(describe("signing", "require_type"), /declares no QC type/);
});

Deno.test("certificateGuard() accepts a declared QC type the use accepts, refuses another", async () => {
  await guard({}, TRANSPORT).check(qwac);
  await refused(
    guard({}, TRANSPORT).check(qsealc),
    TRANSPORT,
    "The TPP certificate is a QSealC (id-etsi-qct-eseal); this operation accepts QWAC",
  );
  await guard({}, SIGNING).check(qsealc);
  await guard({}, SIGNING).check(both);
  await refused(
    guard({ types: ["QWAC", "QSealC"] }, TRANSPORT).check(await typed(["QESig"])),
    TRANSPORT,
    "The TPP certificate is a QESig (id-etsi-qct-esign); this operation accepts QWAC or QSealC",
  );
  await refused(
    guard({ types: ["QWAC"] }, SIGNING).check(both),
    SIGNING,
    "The signing certificate is a QESig (id-etsi-qct-esign), QSealC (id-etsi-qct-eseal); this operation accepts QWAC",
  );
});

Deno.test("certificateGuard() takes a certificate without QC type unless the policy requires one", async () => {
  await guard({}, TRANSPORT).check(plain);
  await guard({}, TRANSPORT).check({ ...plain, qcTypes: [] });
  const strict = guard({ require_type: true, types: ["QWAC", "QSealC"] }, TRANSPORT);
  await refused(
    strict.check(plain),
    TRANSPORT,
    "The TPP certificate declares no QC type (QcType statement 0.4.0.1862.1.6); this operation accepts QWAC or QSealC",
  );
  await refused(
    strict.check({ ...plain, qcTypes: [] }),
    TRANSPORT,
    "The TPP certificate declares no QC type (QcType statement 0.4.0.1862.1.6); this operation accepts QWAC or QSealC",
  );
  await strict.check(qwac);
});

Deno.test("certificateGuard() requires clientAuth of a transport certificate when the policy asks", async () => {
  const strict = guard({ require_key_usage: true }, TRANSPORT);
  const text = "The TPP certificate's extended key usage must include clientAuth";
  await refused(strict.check(plain), TRANSPORT, text);
  await refused(
    strict.check(await withUsages([new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth])])),
    TRANSPORT,
    text,
  );
  await strict.check(
    await withUsages([
      new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth, ExtendedKeyUsage.clientAuth]),
    ]),
  );
  // Key usage bits do not count for transport, and without require_key_usage nothing does.
  await refused(
    strict.check(await withUsages([new KeyUsagesExtension(KeyUsageFlags.digitalSignature)])),
    TRANSPORT,
    text,
  );
  await guard({}, TRANSPORT).check(plain);
});

Deno.test("certificateGuard() requires digitalSignature or nonRepudiation of a signing certificate when the policy asks", async () => {
  const strict = guard({ require_key_usage: true }, SIGNING);
  const text =
    "The signing certificate's key usage must include digitalSignature or nonRepudiation";
  await refused(strict.check(plain), SIGNING, text);
  await refused(
    strict.check(await withUsages([new KeyUsagesExtension(KeyUsageFlags.keyEncipherment)])),
    SIGNING,
    text,
  );
  await refused(
    strict.check(await withUsages([new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth])])),
    SIGNING,
    text,
  );
  for (const bits of [KeyUsageFlags.digitalSignature, KeyUsageFlags.nonRepudiation]) {
    await strict.check(
      await withUsages([new KeyUsagesExtension(bits | KeyUsageFlags.keyEncipherment)]),
    );
  }
  await guard({}, SIGNING).check(plain);
});

Deno.test("certificateGuard() checks revocation only where the policy turns it on", async () => {
  const down =
    `  revocation: { ocsp_responder: "http://127.0.0.1:${closedPort()}", methods: [ocsp] }`;
  // Off: no responder is asked, whatever the trust section says.
  const off = guard({}, SIGNING, down);
  await off.check(plain);
  assert.equal(off.services.metrics.revocationSoftPasses.value({ check: "jws_signature" }), 0);
  // Soft: the responder is down, the certificate passes, counted under the check.
  const soft = guard({ revocation: "soft" }, SIGNING, down);
  await soft.store.checkTpp(plain, { ...SIGNING, group: "pis", now: Date.now() });
  await soft.check(plain);
  assert.equal(soft.services.metrics.revocationSoftPasses.value({ check: "jws_signature" }), 1);
  // Hard: a certificate whose issuer is unknown (never verified) cannot be checked.
  const hard = guard({ revocation: "hard" }, SIGNING);
  await refused(
    hard.check(plain),
    SIGNING,
    "The signing certificate names no OCSP responder or CRL distribution point, and the policy gives none",
  );
  // Hard, the issuer known, the responder down: 503.
  const hardDown = guard({ revocation: "hard" }, SIGNING, down);
  await hardDown.store.checkTpp(plain, { ...SIGNING, group: "pis", now: Date.now() });
  await assert.rejects(
    hardDown.check(plain),
    (e) => e instanceof GatewayError && e.status === 503 && /revocation status/.test(e.message),
  );
});
