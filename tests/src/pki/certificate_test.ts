import assert from "node:assert/strict";
import "reflect-metadata";
import { createHash } from "node:crypto";
import {
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
} from "@peculiar/x509";
import {
  certificateBytes,
  CertificateFormatError,
  normalSerial,
  ORGANIZATION_IDENTIFIER_OID,
  parseCertificate,
  pemBodies,
} from "../../../src/pki/certificate.ts";
import { QC_STATEMENTS_OID } from "../../../src/pki/qc_statement.ts";
import { createCa, issue } from "../../support/pki.ts";

const ca = await createCa();
const tpp = await issue(ca, {
  serial: "00ab0C",
  domains: ["TPP.Example.", "api.tpp.example", "tpp.example"],
  qcTypes: ["QWAC"],
  extensions: [
    new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth, "1.2.3.4"]),
    new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment),
  ],
});

function formatError(run: () => unknown, text: string) {
  assert.throws(run, (e) => e instanceof CertificateFormatError && e.message === text);
}

async function rejectsFormat(input: string | Uint8Array, text: string) {
  await assert.rejects(
    () => parseCertificate(input),
    (e) =>
      e instanceof CertificateFormatError && e.message === text &&
      e.name === "CertificateFormatError",
  );
}

Deno.test("normalSerial() writes lower-case hex without leading zeros, keeping a lone zero", () => {
  assert.equal(normalSerial("00AB0C"), "ab0c");
  assert.equal(normalSerial("0000"), "0");
  assert.equal(normalSerial("0"), "0");
  assert.equal(normalSerial("10"), "10");
  assert.equal(ORGANIZATION_IDENTIFIER_OID, "2.5.4.97");
});

Deno.test("certificateBytes() reads PEM, base64, base64url and DER bytes alike", () => {
  const der = new Uint8Array(tpp.cert.rawData);
  assert.deepEqual(certificateBytes(tpp.pem), der);
  assert.deepEqual(certificateBytes(tpp.base64), der);
  assert.deepEqual(
    certificateBytes(`  ${tpp.base64.slice(0, 10)}\n ${tpp.base64.slice(10)} `),
    der,
  );
  const url = tpp.base64.replace(/\+/g, "-").replace(/\//g, "_");
  assert.deepEqual(certificateBytes(url), der);
  const copy = certificateBytes(der);
  assert.deepEqual(copy, der);
  assert.notEqual(copy, der, "DER input is copied");
  assert.deepEqual(
    certificateBytes("-----BEGIN CERTIFICATE-----\nAQI=\n-----END CERTIFICATE-----"),
    new Uint8Array([1, 2]),
  );
});

Deno.test("certificateBytes() refuses text that is no base64, and base64 that does not decode", () => {
  for (const text of ["", "MII B!", "=AQI", "AQI=x", "AQ.I"]) {
    formatError(() => certificateBytes(text), "It is neither PEM nor base64");
  }
  formatError(() => certificateBytes("A"), "Its base64 is malformed");
  formatError(() => certificateBytes("AQI=="), "Its base64 is malformed");
});

Deno.test("parseCertificate() takes the serial, TPP id, roles, types and key usages", async () => {
  const info = await parseCertificate(tpp.pem);
  assert.equal(info.serial, "ab0c");
  assert.equal(info.organizationId, "PSDGE-NBG-123456");
  assert.deepEqual(info.roles, ["PSP_PI", "PSP_AI"]);
  assert.deepEqual(info.qcTypes, ["QWAC"]);
  assert.deepEqual([...info.extendedKeyUsages ?? []], ["1.3.6.1.5.5.7.3.2", "1.2.3.4"]);
  assert.equal(info.keyUsage, KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment);
  assert.equal(info.isCa, false);
  assert.equal(info.cert.serialNumber, tpp.cert.serialNumber);

  const bare = await parseCertificate(ca.pem);
  assert.equal(bare.isCa, true);
  assert.equal(bare.organizationId, undefined);
  assert.deepEqual(bare.roles, []);
  assert.equal(bare.qcTypes, undefined);
  assert.equal(bare.extendedKeyUsages, undefined);
  assert.equal(bare.keyUsage, KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign);
  const plain = await parseCertificate((await issue(ca, { orgId: null })).pem);
  assert.equal(plain.organizationId, undefined);
  assert.equal(plain.keyUsage, undefined);
  assert.equal(plain.qcTypes, undefined);
});

Deno.test("parseCertificate() takes the fingerprints of the DER: hex and base64url", async () => {
  const der = new Uint8Array(tpp.cert.rawData);
  const info = await parseCertificate(der);
  assert.equal(info.sha256, createHash("sha256").update(der).digest("hex"));
  assert.equal(info.x5tS256, createHash("sha256").update(der).digest("base64url"));
  // Fingerprints with "+", "/" and padding in standard base64 are the ones that tell.
  for (let i = 0; i < 6; i++) {
    const other = await issue(ca, { keyType: "EC" });
    const { x5tS256 } = await parseCertificate(other.base64);
    assert.equal(
      x5tS256,
      createHash("sha256").update(new Uint8Array(other.cert.rawData)).digest("base64url"),
    );
  }
});

Deno.test("parseCertificate() takes DNS names from a host-like CN and the SubjectAltName, once each", async () => {
  const info = await parseCertificate(tpp.pem);
  assert.deepEqual(info.domains, ["tpp.example", "api.tpp.example"]);
  for (
    const [cn, domains] of [
      ["Acme Payments Ltd", []],
      ["*.Wild.example", ["*.wild.example"]],
      ["x.y", []],
      ["-bad.example", []],
      ["bad-.example", []],
      ["a.example.", ["a.example"]],
      ["api.eu.tpp.example", ["api.eu.tpp.example"]],
      ["tpp.example2", []],
      [`${"a".repeat(63)}.example`, [`${"a".repeat(63)}.example`]],
      [`${"a".repeat(64)}.example`, []],
      ["a.b.*.example", []],
      ["host.example extra", []],
    ] as const
  ) {
    const cert = await issue(ca, { name: cn, domains: [], keyType: "EC" });
    assert.deepEqual((await parseCertificate(cert.pem)).domains, domains, cn);
  }
});

Deno.test("parseCertificate() takes only the dNSNames of the SubjectAltName", async () => {
  // A CA certificate from the test issuer has no SubjectAltName of its own: only this one.
  const cert = await issue(ca, {
    ca: true,
    keyType: "EC",
    name: "Acme Payments Ltd",
    extensions: [
      new SubjectAlternativeNameExtension([
        { type: "email", value: "ops@tpp.example" },
        { type: "dns", value: "Pay.TPP.example" },
        { type: "ip", value: "192.0.2.1" },
        { type: "url", value: "https://tpp.example/" },
      ]),
    ],
  });
  assert.deepEqual((await parseCertificate(cert.pem)).domains, ["pay.tpp.example"]);
});

Deno.test("parseCertificate() says why a certificate cannot be read", async () => {
  await rejectsFormat("not a certificate!", "It is neither PEM nor base64");
  await rejectsFormat("AQI=", "It is not a well-formed DER-encoded X.509 certificate");
  // A CA certificate gets no qcStatements of its own from the test issuer: only the broken one.
  const onlyBroken = await issue(ca, {
    ca: true,
    keyType: "EC",
    extensions: [new Extension(QC_STATEMENTS_OID, false, new Uint8Array([0x30, 0x03, 0x02]))],
  });
  await rejectsFormat(onlyBroken.pem, "Its qcStatements extension is malformed");
});

Deno.test("pemBodies() splits a bundle into its certificates' bodies", () => {
  const bundle = `intro\n${tpp.pem}\nbetween\n${ca.pem}trailer`;
  assert.deepEqual(pemBodies(bundle), [tpp.base64, ca.base64]);
  assert.deepEqual(pemBodies("no certificate"), []);
});
