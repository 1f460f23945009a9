import assert from "node:assert/strict";
import { psd2Roles, psd2StatementsValue, qcTypes } from "../../../src/pki/qc_statement.ts";
import { parseCertificate } from "../../../src/pki/certificate.ts";
import { createCa, issue } from "../../support/pki.ts";

Deno.test("psd2Roles() reads the roles of a PSD2 QC statement", () => {
  const value = psd2StatementsValue(["PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC"], {
    name: "NBG",
    id: "GE-NBG",
  });
  assert.deepEqual(psd2Roles(value), ["PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC"]);
  assert.throws(() => psd2Roles(new Uint8Array([0x30, 0x03, 0x02, 0x01])));
});

Deno.test("parseCertificate() takes the TPP id, roles and DNS names from a certificate", async () => {
  const ca = await createCa();
  const cert = await issue(ca, { roles: ["PSP_AI"], domains: ["tpp.example", "*.tpp.example"] });
  const info = await parseCertificate(cert.pem);
  assert.equal(info.organizationId, "PSDGE-NBG-123456");
  assert.deepEqual(info.roles, ["PSP_AI"]);
  assert.deepEqual(info.domains, ["tpp.example", "*.tpp.example"]);
  assert.equal(info.isCa, false);
  assert.equal((await parseCertificate(cert.base64)).sha256, info.sha256);
  assert.equal((await parseCertificate(ca.pem)).isCa, true);
});

Deno.test("qcTypes() reads the QC type statement, and is undefined without one", () => {
  const nca = { name: "NBG", id: "GE-NBG" };
  assert.deepEqual(qcTypes(psd2StatementsValue(["PSP_AI"], nca, ["QWAC", "QSealC"])), [
    "QWAC",
    "QSealC",
  ]);
  assert.deepEqual(qcTypes(psd2StatementsValue(["PSP_AI"], nca, ["QESig"])), ["QESig"]);
  assert.equal(qcTypes(psd2StatementsValue(["PSP_AI"], nca)), undefined);
});
