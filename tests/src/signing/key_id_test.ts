import assert from "node:assert/strict";
import {
  namesCertificate,
  parseDn,
  parseKeyId,
  sameIssuer,
  sameSerial,
} from "../../../src/signing/key_id.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { createCa, issue } from "../../support/pki.ts";

// createCa() writes "CN=<name>, O=Test QTSP, C=GE": a name with a comma puts an
// organizationIdentifier (2.5.4.97, as a QTSP's DN carries one) into the issuer's DN.
const ca = await createCa("EU QTSP CA, 2.5.4.97=NTRDE-HRB74346");
const tpp = await parseCertificate((await issue(ca, { serial: "00c0ffee" })).base64);

Deno.test("parseKeyId() reads SN=<serial>,CA=<DN> and nothing else", () => {
  assert.deepEqual(parseKeyId("SN=9FA1,CA=CN=D-TRUST%20CA%202-1%202015,O=D-Trust%20GmbH,C=DE"), {
    serial: "9FA1",
    issuer: "CN=D-TRUST%20CA%202-1%202015,O=D-Trust%20GmbH,C=DE",
  });
  assert.deepEqual(parseKeyId(" SN=0a , CA=C=DE "), { serial: "0a", issuer: "C=DE" });
  for (const bad of ["kid-1", "SN=,CA=C=DE", "SN=9FA1", "SN=0x9FA1,CA=C=DE", "CA=C=DE,SN=1"]) {
    assert.equal(parseKeyId(bad), undefined, bad);
  }
});

Deno.test("sameSerial() compares the hex serial in any case and with leading zeros; decimal only with decimal digits", () => {
  assert.ok(sameSerial("9FA1", "9fa1"));
  assert.ok(sameSerial("009fa1", "9fa1"));
  assert.ok(sameSerial("40865", "9fa1")); // 0x9FA1 written in decimal
  assert.ok(!sameSerial("9FA2", "9fa1"));
  assert.ok(!sameSerial("A09F", "9fa1"));
  assert.ok(sameSerial("10", "10")); // hex first: 0x10 is the certificate's 16
  assert.ok(sameSerial("16", "10")); // decimal 16 is 0x10
});

Deno.test("parseDn() unescapes RFC 4514 values, reads #BER strings, quotes and percent-encoding", () => {
  assert.deepEqual(parseDn("CN=Bank\\, Tbilisi,O=A\\2BB"), [
    "2.5.4.3=bank, tbilisi",
    "2.5.4.10=a+b",
  ]);
  // A percent-encoded comma stays inside its value; "+" joins a multi-valued RDN.
  assert.deepEqual(parseDn("O=A%2C%20B+OU=Seal,C=GE"), [
    "2.5.4.10=a, b",
    "2.5.4.11=seal",
    "2.5.4.6=ge",
  ]);
  assert.deepEqual(parseDn('CN="Quoted, Name"'), ["2.5.4.3=quoted, name"]);
  // UTF8String, BMPString and PrintableString as Java writes attributes it has no name for.
  assert.deepEqual(parseDn("2.5.4.97=#0c0e4e545244452d4852423734333436"), [
    "2.5.4.97=ntrde-hrb74346",
  ]);
  // A length that is not the bytes that follow, an odd count of hex digits.
  assert.equal(parseDn("2.5.4.97=#0c0f4e545244452d4852423734333436"), undefined);
  assert.equal(parseDn("2.5.4.97=#0c0e4e545244452d485242373433343"), undefined);
  assert.deepEqual(parseDn("CN=#1e0400e410e1"), ["2.5.4.3=\u00e4\u10e1"]);
  assert.deepEqual(parseDn("OID.2.5.4.97=X,emailAddress=A@B.GE,E=c@d.ge"), [
    "2.5.4.97=x",
    "1.2.840.113549.1.9.1=a@b.ge",
    "1.2.840.113549.1.9.1=c@d.ge",
  ]);
  for (const bad of ["", "CN", "=x", "NOSUCHNAME=x", "CN=#zz", "CN=#04024745", "CN=\\ff"]) {
    assert.equal(parseDn(bad), undefined, bad);
  }
});

Deno.test("sameIssuer() compares the DN with the certificate's issuer by OID and value, in any order", () => {
  const oid = "2.5.4.97";
  for (
    const written of [
      "CN=EU QTSP CA, 2.5.4.97=NTRDE-HRB74346, O=Test QTSP, C=GE",
      "C=GE,O=Test QTSP,organizationIdentifier=NTRDE-HRB74346,CN=EU QTSP CA",
      `cn=eu  qtsp ca,OID.${oid}=ntrde-hrb74346,o=test%20qtsp,c=GE`,
      "CN=EU QTSP CA,2.5.4.97=#130e4e545244452d4852423734333436,O=Test QTSP,C=GE",
    ]
  ) {
    assert.ok(sameIssuer(written, tpp), written);
  }
  for (
    const written of [
      "CN=EU QTSP CA,O=Test QTSP,C=GE", // organizationIdentifier left out
      "CN=EU QTSP CA,2.5.4.97=NTRDE-HRB74347,O=Test QTSP,C=GE",
      "CN=EU QTSP CA,2.5.4.97=NTRDE-HRB74346,O=Test QTSP,C=GE,C=GE",
      "CN=EU QTSP CA,2.5.4.97=NTRDE-HRB74346,OU=Test QTSP,C=GE", // O written as OU
    ]
  ) {
    assert.ok(!sameIssuer(written, tpp), written);
  }
});

Deno.test("namesCertificate() needs both the serial and the issuer", () => {
  const issuer = "CN=EU QTSP CA,2.5.4.97=NTRDE-HRB74346,O=Test QTSP,C=GE";
  assert.ok(namesCertificate({ serial: "C0FFEE", issuer }, tpp));
  assert.ok(!namesCertificate({ serial: "C0FFEF", issuer }, tpp));
  assert.ok(!namesCertificate({ serial: "C0FFEE", issuer: "CN=EU QTSP CA,C=GE" }, tpp));
});
