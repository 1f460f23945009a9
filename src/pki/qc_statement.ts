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

/** The role names a policy may require. */
export const ROLE_NAMES = ["PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC"] as const;
export type RoleName = typeof ROLE_NAMES[number];

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

/** The DER value of a qcStatements extension with a PSD2 statement (for test certificates). */
export function psd2StatementsValue(
  roles: readonly string[],
  nca: { name: string; id: string },
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
  return AsnSerializer.serialize(new QCStatements([statement]));
}
