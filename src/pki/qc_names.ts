/**
 * The names a policy uses for PSD2 roles and QC types (ETSI TS 119 495, EN 319 412-5), apart from
 * their ASN.1 reading (src/pki/qc_statement.ts), so that the policy schema does without the ASN.1
 * libraries: those load with the first certificate.
 */

/** The QC type names a policy may accept. */
export const QC_TYPE_NAMES = ["QWAC", "QSealC", "QESig"] as const;
export type QcTypeName = typeof QC_TYPE_NAMES[number];

/** The ETSI names of the types, for error texts. */
export const QC_TYPE_LABELS: Readonly<Record<QcTypeName, string>> = {
  QWAC: "id-etsi-qct-web",
  QSealC: "id-etsi-qct-eseal",
  QESig: "id-etsi-qct-esign",
};

/** The role names a policy may require. */
export const ROLE_NAMES = ["PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC"] as const;
export type RoleName = typeof ROLE_NAMES[number];
