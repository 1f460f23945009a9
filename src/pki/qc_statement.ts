/**
 * The PSD2 QC statement of eIDAS certificates (ETSI TS 119 495): the TPP's roles and its national
 * competent authority, carried in the qcStatements extension (RFC 3739, OID 1.3.6.1.5.5.7.1.3).
 *
 * The ASN.1 classes are declared with asn1-schema's decorator functions applied by hand, so that
 * no compiler option for legacy decorators is needed.
 */
import {
  AsnArray,
  AsnParser,
  AsnProp,
  AsnPropTypes,
  AsnSerializer,
  AsnType,
  AsnTypeTypes,
} from "@peculiar/asn1-schema";
import { id_pe_qcStatements, QCStatement, QCStatements } from "@peculiar/asn1-x509-qualified";
import type { QcTypeName } from "./qc_names.ts";

export {
  QC_TYPE_LABELS,
  QC_TYPE_NAMES,
  type QcTypeName,
  ROLE_NAMES,
  type RoleName,
} from "./qc_names.ts";

/** OID of the qcStatements certificate extension. */
export const QC_STATEMENTS_OID = id_pe_qcStatements;
/** OID of the PSD2 QC statement (id-etsi-psd2-qcStatement). */
export const PSD2_STATEMENT_OID = "0.4.0.19495.2";

/** PSD2 roles by OID (ETSI TS 119 495, id-psd2-role-psp-*). */
export const PSD2_ROLES: Readonly<Record<string, string>> = {
  "0.4.0.19495.1.1": "PSP_AS",
  "0.4.0.19495.1.2": "PSP_PI",
  "0.4.0.19495.1.3": "PSP_AI",
  "0.4.0.19495.1.4": "PSP_IC",
};

/** OID of the QC type statement (ETSI EN 319 412-5, id-etsi-qcs-QcType). */
export const QC_TYPE_STATEMENT_OID = "0.4.0.1862.1.6";

/** QC types by OID: esign, eseal (QSealC), web (QWAC). */
export const QC_TYPES: Readonly<Record<string, QcTypeName>> = {
  "0.4.0.1862.1.6.1": "QESig",
  "0.4.0.1862.1.6.2": "QSealC",
  "0.4.0.1862.1.6.3": "QWAC",
};

/** QcType ::= SEQUENCE OF OBJECT IDENTIFIER */
export class QcTypeList extends AsnArray<string> {
  constructor(items?: string[]) {
    super(items);
    Object.setPrototypeOf(this, QcTypeList.prototype);
  }
}
AsnType({ type: AsnTypeTypes.Sequence, itemType: AsnPropTypes.ObjectIdentifier })(QcTypeList);

/** RoleOfPSP ::= SEQUENCE { roleOfPspOid OBJECT IDENTIFIER, roleOfPspName UTF8String } */
export class RoleOfPsp {
  roleOfPspOid = "";
  roleOfPspName = "";
  constructor(params: Partial<RoleOfPsp> = {}) {
    Object.assign(this, params);
  }
}
AsnProp({ type: AsnPropTypes.ObjectIdentifier })(RoleOfPsp.prototype, "roleOfPspOid");
AsnProp({ type: AsnPropTypes.Utf8String })(RoleOfPsp.prototype, "roleOfPspName");

/** RolesOfPSP ::= SEQUENCE OF RoleOfPSP */
export class RolesOfPsp extends AsnArray<RoleOfPsp> {
  constructor(items?: RoleOfPsp[]) {
    super(items);
    Object.setPrototypeOf(this, RolesOfPsp.prototype);
  }
}
AsnType({ type: AsnTypeTypes.Sequence, itemType: RoleOfPsp })(RolesOfPsp);

/** PSD2QcType ::= SEQUENCE { rolesOfPSP RolesOfPSP, nCAName UTF8String, nCAId UTF8String } */
export class Psd2QcType {
  rolesOfPsp = new RolesOfPsp();
  ncaName = "";
  ncaId = "";
  constructor(params: Partial<Psd2QcType> = {}) {
    Object.assign(this, params);
  }
}
AsnProp({ type: RolesOfPsp })(Psd2QcType.prototype, "rolesOfPsp");
AsnProp({ type: AsnPropTypes.Utf8String })(Psd2QcType.prototype, "ncaName");
AsnProp({ type: AsnPropTypes.Utf8String })(Psd2QcType.prototype, "ncaId");

/**
 * The PSD2 roles in a qcStatements extension value (DER); unknown role OIDs are ignored, a
 * malformed extension is an error.
 */
export function psd2Roles(extensionValue: BufferSource): string[] {
  const statements = AsnParser.parse(extensionValue, QCStatements);
  const roles: string[] = [];
  for (const statement of statements) {
    if (statement.statementId !== PSD2_STATEMENT_OID) continue;
    const psd2 = AsnParser.parse(statement.statementInfo, Psd2QcType);
    for (const role of psd2.rolesOfPsp) {
      const name = PSD2_ROLES[role.roleOfPspOid];
      if (name && !roles.includes(name)) roles.push(name);
    }
  }
  return roles;
}

/**
 * The QC types (QWAC, QSealC, QESig) of a qcStatements extension value (DER), `undefined` when it
 * has no QC type statement; unknown type OIDs are ignored, a malformed statement is an error.
 */
export function qcTypes(extensionValue: BufferSource): QcTypeName[] | undefined {
  const statements = AsnParser.parse(extensionValue, QCStatements);
  let types: QcTypeName[] | undefined;
  for (const statement of statements) {
    if (statement.statementId !== QC_TYPE_STATEMENT_OID || !statement.statementInfo) continue;
    types ??= [];
    for (const oid of AsnParser.parse(statement.statementInfo, QcTypeList)) {
      const name = QC_TYPES[oid];
      if (name && !types.includes(name)) types.push(name);
    }
  }
  return types;
}

/**
 * The DER value of a qcStatements extension with a PSD2 statement and, when `types` are given, a
 * QC type statement (for test certificates).
 */
export function psd2StatementsValue(
  roles: readonly string[],
  nca: { name: string; id: string },
  types?: readonly QcTypeName[],
): ArrayBuffer {
  const oids = Object.fromEntries(Object.entries(PSD2_ROLES).map(([oid, name]) => [name, oid]));
  const psd2 = new Psd2QcType({
    rolesOfPsp: new RolesOfPsp(
      roles.map((name) => new RoleOfPsp({ roleOfPspOid: oids[name], roleOfPspName: name })),
    ),
    ncaName: nca.name,
    ncaId: nca.id,
  });
  const statement = new QCStatement();
  statement.statementId = PSD2_STATEMENT_OID;
  statement.statementInfo = AsnSerializer.serialize(psd2);
  const statements = [statement];
  if (types) {
    const oids = Object.fromEntries(Object.entries(QC_TYPES).map(([oid, name]) => [name, oid]));
    const qcType = new QCStatement();
    qcType.statementId = QC_TYPE_STATEMENT_OID;
    qcType.statementInfo = AsnSerializer.serialize(new QcTypeList(types.map((t) => oids[t])));
    statements.push(qcType);
  }
  return AsnSerializer.serialize(new QCStatements(statements));
}
