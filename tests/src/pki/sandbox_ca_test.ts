import assert from "node:assert/strict";
import { makeTestCa } from "../../../src/cli/test_ca.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { checkCrlSignature, parseCrl } from "../../../src/pki/crl.ts";
import {
  issueTppCertificate,
  loadSandboxCa,
  orgCountry,
  type SandboxCa,
  sandboxCrl,
} from "../../../src/pki/sandbox_ca.ts";
import { loadX509 } from "../../../src/pki/x509.ts";

const { KeyUsageFlags, CRLDistributionPointsExtension } = await loadX509();
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

async function sandboxCa(): Promise<{ ca: SandboxCa; dir: string }> {
  const dir = await Deno.makeTempDir();
  await makeTestCa(dir, "Sandbox QTSP CA");
  return { ca: await loadSandboxCa(dir), dir };
}

Deno.test("issueTppCertificate() makes a QWAC with the roles, organisation id, QC type, clientAuth and CRL", async () => {
  const { ca, dir } = await sandboxCa();
  try {
    const issued = await issueTppCertificate(ca, {
      type: "QWAC",
      orgId: "PSDLT-BOL-LB000123",
      roles: ["PSP_AI", "PSP_IC"],
      domains: ["api.tpp.example"],
      crlUrl: "http://127.0.0.1:8081/sandbox/ca/crl",
    });
    const info = await parseCertificate(issued.certificate);
    assert.equal(info.organizationId, "PSDLT-BOL-LB000123");
    assert.deepEqual(info.roles, ["PSP_AI", "PSP_IC"]);
    assert.deepEqual(info.qcTypes, ["QWAC"]);
    assert.ok(info.extendedKeyUsages?.includes(CLIENT_AUTH));
    assert.ok(info.domains.includes("api.tpp.example"));
    assert.equal(info.isCa, false);
    assert.match(info.cert.subject, /C=LT/);
    assert.equal(info.serial, issued.serial.replace(/^0+/, ""));
    assert.ok(await info.cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true }));
    const cdp = info.cert.getExtension(CRLDistributionPointsExtension);
    assert.equal(
      cdp?.distributionPoints[0].distributionPoint?.fullName?.[0].uniformResourceIdentifier,
      "http://127.0.0.1:8081/sandbox/ca/crl",
    );
    // The key is the certificate's: it signs what the certificate's key verifies.
    const key = await crypto.subtle.importKey(
      "pkcs8",
      Uint8Array.fromBase64(issued.key.replace(/-----[A-Z ]+-----|\s/g, "")),
      { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const data = new TextEncoder().encode("sealed");
    const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, data);
    const publicKey = await info.cert.publicKey.export();
    assert.ok(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", publicKey, signature, data));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issueTppCertificate() makes a QSealC for signing: digitalSignature and nonRepudiation, no clientAuth", async () => {
  const { ca, dir } = await sandboxCa();
  try {
    const issued = await issueTppCertificate(ca, {
      type: "QSealC",
      orgId: "PSDGE-NBG-123456",
      roles: ["PSP_PI"],
      keyType: "EC",
    });
    const info = await parseCertificate(issued.certificate);
    assert.deepEqual(info.qcTypes, ["QSealC"]);
    assert.equal(info.extendedKeyUsages, undefined);
    assert.equal(
      info.keyUsage! & (KeyUsageFlags.digitalSignature | KeyUsageFlags.nonRepudiation),
      KeyUsageFlags.digitalSignature | KeyUsageFlags.nonRepudiation,
    );
    assert.equal(info.cert.publicKey.algorithm.name, "ECDSA");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sandboxCrl() is signed by the sandbox CA, current, and lists the revoked serials", async () => {
  const { ca, dir } = await sandboxCa();
  try {
    const list = parseCrl(new Uint8Array(await sandboxCrl(ca, ["0badc0de"])));
    await checkCrlSignature(list, ca.cert);
    assert.ok(list.thisUpdate <= Date.now() && list.nextUpdate! > Date.now());
    assert.deepEqual([...list.revoked.keys()], ["badc0de"]);
    const other = await sandboxCa();
    await assert.rejects(() => checkCrlSignature(list, other.ca.cert));
    await Deno.remove(other.dir, { recursive: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("orgCountry() reads the country of an organisation identifier and refuses other forms", () => {
  assert.equal(orgCountry("PSDGE-NBG-123456"), "GE");
  assert.throws(() => orgCountry("GE-NBG-123456"), /must look like PSDGE-NBG-123456/);
  assert.throws(() => orgCountry("PSDge-NBG-1"), /must look like/);
});
