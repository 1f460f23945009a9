import assert from "node:assert/strict";
import { AsnParser, AsnSerializer } from "@peculiar/asn1-schema";
import { QCStatement, QCStatements } from "@peculiar/asn1-x509-qualified";
import {
  PSD2_ROLES,
  Psd2QcType,
  psd2Roles,
  psd2StatementsValue,
  QC_TYPE_LABELS,
  QC_TYPE_NAMES,
  QC_TYPES,
  QcTypeList,
  qcTypes,
  ROLE_NAMES,
  RoleOfPsp,
  RolesOfPsp,
} from "../../../src/pki/qc_statement.ts";
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

/** A qcStatements value of the given statements (id, and the DER of its info when any). */
function statementsValue(...entries: [string, ArrayBuffer?][]): ArrayBuffer {
  return AsnSerializer.serialize(
    new QCStatements(entries.map(([id, info]) => {
      const statement = new QCStatement();
      statement.statementId = id;
      // Without info the statement is written without it (QcCompliance has none).
      if (info) statement.statementInfo = info;
      else delete (statement as Partial<QCStatement>).statementInfo;
      return statement;
    })),
  );
}

/** The OIDs as ETSI EN 319 412-5 and TS 119 495 write them (not the module's constants). */
const QCTYPE = "0.4.0.1862.1.6";
const PSD2 = "0.4.0.19495.2";

function psd2Info(oids: string[]): ArrayBuffer {
  return AsnSerializer.serialize(
    new Psd2QcType({
      rolesOfPsp: new RolesOfPsp(
        oids.map((oid) => new RoleOfPsp({ roleOfPspOid: oid, roleOfPspName: "x" })),
      ),
      ncaName: "NBG",
      ncaId: "GE-NBG",
    }),
  );
}

Deno.test("psd2Roles() reads only the PSD2 statement, each known role once, in its order", () => {
  const types = AsnSerializer.serialize(new QcTypeList(["0.4.0.1862.1.6.3"]));
  const value = statementsValue(
    [QCTYPE, types],
    ["0.4.0.1862.1.1"],
    [PSD2, psd2Info(["0.4.0.19495.1.3", "1.2.3.4", "0.4.0.19495.1.1", "0.4.0.19495.1.3"])],
  );
  assert.deepEqual(psd2Roles(value), ["PSP_AI", "PSP_AS"]);
  assert.deepEqual(psd2Roles(statementsValue([QCTYPE, types])), []);
  assert.deepEqual(PSD2_ROLES, {
    "0.4.0.19495.1.1": "PSP_AS",
    "0.4.0.19495.1.2": "PSP_PI",
    "0.4.0.19495.1.3": "PSP_AI",
    "0.4.0.19495.1.4": "PSP_IC",
  });
});

Deno.test("qcTypes() reads only the QC type statement, each known type once, and refuses one without its list", () => {
  const list = (oids: string[]) => AsnSerializer.serialize(new QcTypeList(oids));
  const value = statementsValue(
    [PSD2, psd2Info(["0.4.0.19495.1.3"])],
    ["0.4.0.1862.1.1"],
    [QCTYPE, list(["0.4.0.1862.1.6.2", "1.2.3", "0.4.0.1862.1.6.2", "0.4.0.1862.1.6.1"])],
  );
  assert.deepEqual(qcTypes(value), ["QSealC", "QESig"]);
  // No QC type statement: undefined; one of unknown types only: none.
  assert.equal(qcTypes(statementsValue([PSD2, psd2Info([])])), undefined);
  // A QcType statement without its list is malformed (the parser reads its info as empty).
  assert.throws(() => qcTypes(statementsValue([QCTYPE])), /zero length/);
  assert.deepEqual(qcTypes(statementsValue([QCTYPE, list(["1.2.3"])])), []);
  assert.deepEqual(QC_TYPES, {
    "0.4.0.1862.1.6.1": "QESig",
    "0.4.0.1862.1.6.2": "QSealC",
    "0.4.0.1862.1.6.3": "QWAC",
  });
  assert.deepEqual(QC_TYPE_LABELS, {
    QWAC: "id-etsi-qct-web",
    QSealC: "id-etsi-qct-eseal",
    QESig: "id-etsi-qct-esign",
  });
  assert.deepEqual([...QC_TYPE_NAMES], ["QWAC", "QSealC", "QESig"]);
  assert.deepEqual([...ROLE_NAMES], ["PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC"]);
});

Deno.test("psd2StatementsValue() writes the role names and the NCA as given", () => {
  const value = psd2StatementsValue(["PSP_PI"], { name: "National Bank", id: "GE-NBG" });
  const [statement] = AsnParser.parse(value, QCStatements);
  const psd2 = AsnParser.parse(statement.statementInfo!, Psd2QcType);
  assert.equal(psd2.ncaName, "National Bank");
  assert.equal(psd2.ncaId, "GE-NBG");
  assert.deepEqual([...psd2.rolesOfPsp].map((r) => [r.roleOfPspOid, r.roleOfPspName]), [[
    "0.4.0.19495.1.2",
    "PSP_PI",
  ]]);
});
