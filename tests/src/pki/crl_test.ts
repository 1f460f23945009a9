import assert from "node:assert/strict";
import "reflect-metadata";
import { X509Crl, X509CrlGenerator, X509CrlReason } from "@peculiar/x509";
import {
  checkCrlDates,
  checkCrlSignature,
  CrlError,
  isIssuedBy,
  parseCrl,
  type RevocationList,
} from "../../../src/pki/crl.ts";
import { createCa, issue, type Issued } from "../../support/pki.ts";

const HOUR = 3_600_000;
const ca = await createCa();
/** Another CA of the same name, with its own key. */
const impostor = await createCa();
/** A CA whose name differs from `ca`'s only in one space. */
const lookalike = await createCa("TestQTSP CA");
const ecCa = await issue(ca, { ca: true, keyType: "EC", name: "Test QTSP CA" });

/** Seconds: a CRL carries its dates to the second. */
const THIS_UPDATE = new Date(Math.floor(Date.now() / 1000) * 1000 - HOUR);
const NEXT_UPDATE = new Date(THIS_UPDATE.getTime() + 24 * HOUR);
const REVOKED_AT = new Date(THIS_UPDATE.getTime() - 2 * HOUR);

async function crlOf(
  signer: Issued,
  options: { issuer?: string; nextUpdate?: Date | null; serials?: string[] } = {},
): Promise<X509Crl> {
  return await X509CrlGenerator.create({
    issuer: options.issuer ?? signer.cert.subject,
    thisUpdate: THIS_UPDATE,
    nextUpdate: options.nextUpdate === null ? undefined : options.nextUpdate ?? NEXT_UPDATE,
    entries: (options.serials ?? []).map((serialNumber) => ({
      serialNumber,
      revocationDate: REVOKED_AT,
      reason: X509CrlReason.keyCompromise,
    })),
    signingAlgorithm: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    signingKey: signer.keys.privateKey,
  });
}

function der(crl: X509Crl): Uint8Array {
  return new Uint8Array(crl.rawData);
}

function refused(data: Uint8Array | string, text: string): void {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  assert.throws(() => parseCrl(bytes), (error: unknown) => {
    assert.ok(error instanceof CrlError, String(error));
    assert.equal(error.name, "CrlError");
    assert.equal(error.message, text);
    return true;
  });
}

Deno.test("parseCrl() reads a DER CRL: issuer, dates and the revoked serials without leading zeros", async () => {
  const list = parseCrl(der(await crlOf(ca, { serials: ["00AB12", "1000", "0C"] })));
  assert.equal(list.issuer, "cn=test qtsp ca,o=test qtsp,c=ge");
  assert.equal(list.thisUpdate, THIS_UPDATE.getTime());
  assert.equal(list.nextUpdate, NEXT_UPDATE.getTime());
  assert.deepEqual(
    [...list.revoked],
    [["ab12", REVOKED_AT.getTime()], ["1000", REVOKED_AT.getTime()], ["c", REVOKED_AT.getTime()]],
  );
  assert.ok(list.crl instanceof X509Crl);
});

Deno.test("parseCrl() reads a CRL without nextUpdate and without entries", async () => {
  const list = parseCrl(der(await crlOf(ca, { nextUpdate: null })));
  assert.equal(list.nextUpdate, undefined);
  assert.equal(list.revoked.size, 0);
  assert.equal(list.thisUpdate, THIS_UPDATE.getTime());
});

Deno.test("parseCrl() reads a PEM CRL, with text before the block and line breaks in it", async () => {
  const crl = await crlOf(ca, { serials: ["0102"] });
  // RFC 7468's label, as openssl writes it (@peculiar/x509 writes "CRL").
  const body = crl.toString("base64").match(/.{1,64}/g)!.join("\n");
  const pem = `-----BEGIN X509 CRL-----\n${body}\n-----END X509 CRL-----\n`;
  assert.match(pem, /\n[A-Za-z0-9+/=]+\n/, "the PEM body spans lines");
  for (const text of [pem, `Test CRL\n${pem}\n`, pem.replaceAll("\n", "\r\n")]) {
    const list = parseCrl(new TextEncoder().encode(text));
    assert.deepEqual([...list.revoked.keys()], ["102"]);
    assert.equal(list.issuer, "cn=test qtsp ca,o=test qtsp,c=ge");
  }
});

Deno.test("parseCrl() refuses what is no CRL, saying why", async () => {
  refused(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]), "It is not a DER or PEM encoded CRL");
  refused(new Uint8Array(0), "It is not a DER or PEM encoded CRL");
  refused(der(await crlOf(ca)).subarray(0, 100), "It is not a DER or PEM encoded CRL");
  // A certificate is PEM, but no CRL.
  refused(ca.pem, "It is PEM without an X509 CRL block");
  refused("-----BEGIN X509 CRL-----\n", "It is PEM without an X509 CRL block");
  refused(
    "-----BEGIN X509 CRL-----\n*not base64*\n-----END X509 CRL-----\n",
    "Its PEM base64 is malformed",
  );
  // Base64 of bytes that are no CRL.
  refused(
    "-----BEGIN X509 CRL-----\nMAMCAQE=\n-----END X509 CRL-----\n",
    "It is not a DER or PEM encoded CRL",
  );
});

Deno.test("isIssuedBy() matches the CRL's issuer with the CA's subject, in any case but not with other spacing", async () => {
  const list = parseCrl(der(await crlOf(ca)));
  assert.equal(isIssuedBy(list, ca.cert), true);
  assert.equal(
    isIssuedBy(list, impostor.cert),
    true,
    "the name alone matches; the signature tells",
  );
  assert.equal(isIssuedBy(list, lookalike.cert), false);
  const other = parseCrl(der(await crlOf(ca, { issuer: "CN=Other CA, O=Test QTSP, C=GE" })));
  assert.equal(isIssuedBy(other, ca.cert), false);
  const upper = parseCrl(der(await crlOf(ca, { issuer: "CN=TEST QTSP CA, O=TEST QTSP, C=GE" })));
  assert.equal(isIssuedBy(upper, ca.cert), true);
});

function listWith(thisUpdate: number, nextUpdate?: number): RevocationList {
  return { issuer: "cn=x", thisUpdate, nextUpdate, revoked: new Map(), crl: undefined! };
}

function datesProblem(list: RevocationList, now: number): string | undefined {
  try {
    checkCrlDates(list, { now, skewMs: 60_000, maxAgeMs: HOUR });
    return undefined;
  } catch (error) {
    assert.ok(error instanceof CrlError, String(error));
    return error.message;
  }
}

Deno.test("checkCrlDates() refuses a CRL whose thisUpdate lies beyond the clock skew in the future", () => {
  const now = Date.parse("2026-11-26T08:00:00.000Z");
  assert.equal(datesProblem(listWith(now + 60_000, now + HOUR), now), undefined);
  assert.equal(
    datesProblem(listWith(now + 60_001, now + HOUR), now),
    "Its thisUpdate 2026-11-26T08:01:00.001Z lies in the future",
  );
});

Deno.test("checkCrlDates() refuses a CRL past its nextUpdate beyond the clock skew", () => {
  const now = Date.parse("2026-11-26T08:00:00.000Z");
  assert.equal(datesProblem(listWith(now - 2 * HOUR, now - 60_000), now), undefined);
  assert.equal(
    datesProblem(listWith(now - 2 * HOUR, now - 60_001), now),
    "It expired at its nextUpdate 2026-11-26T07:58:59.999Z",
  );
  // An old thisUpdate is no problem while nextUpdate holds.
  assert.equal(datesProblem(listWith(now - 100 * HOUR, now + HOUR), now), undefined);
});

Deno.test("checkCrlDates() believes a CRL without nextUpdate for at most maxAgeMs after its thisUpdate", () => {
  const now = Date.parse("2026-11-26T08:00:00.000Z");
  assert.equal(datesProblem(listWith(now - HOUR), now), undefined);
  assert.equal(datesProblem(listWith(now), now), undefined);
  assert.equal(
    datesProblem(listWith(now - HOUR - 1), now),
    "It is older than the policy allows (thisUpdate 2026-11-26T06:59:59.999Z)",
  );
});

Deno.test("checkCrlSignature() accepts the issuer's signature only", async () => {
  const list = parseCrl(der(await crlOf(ca, { serials: ["01"] })));
  await checkCrlSignature(list, ca.cert);
  for (const stranger of [impostor, lookalike, ecCa]) {
    await assert.rejects(checkCrlSignature(list, stranger.cert), (error: unknown) => {
      assert.ok(error instanceof CrlError, String(error));
      assert.equal(error.message, "Its signature does not verify with the issuer's key");
      return true;
    });
  }
});

Deno.test("checkCrlSignature() refuses a CRL whose outer signature algorithm differs from the signed one", async () => {
  const bytes = der(await crlOf(ca, { serials: ["01"] }));
  // sha256WithRSAEncryption (1.2.840.113549.1.1.11) in the CRL's outer AlgorithmIdentifier (the
  // last one) made sha1WithRSAEncryption (1.2.840.113549.1.1.5): the signature itself is unchanged.
  const oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
  let last = -1;
  for (let i = 0; i + oid.length <= bytes.length; i++) {
    if (oid.every((b, j) => bytes[i + j] === b)) last = i;
  }
  bytes[last + oid.length - 1] = 0x05;
  const list = parseCrl(bytes);
  await assert.rejects(checkCrlSignature(list, ca.cert), (error: unknown) => {
    assert.ok(error instanceof CrlError, String(error));
    assert.equal(error.message, "Its signature does not verify with the issuer's key");
    return true;
  });
});
