/**
 * TPP certificates: parsing (PEM, base64 or DER) with @peculiar/x509 and what the gateway needs
 * from them, computed once per certificate: the TPP id (organizationIdentifier, OID 2.5.4.97),
 * the PSD2 roles of the QC statement, the DNS names (CN and SubjectAltName), fingerprints.
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509Certificate,
} from "@peculiar/x509";
import { psd2Roles, QC_STATEMENTS_OID, type QcTypeName, qcTypes } from "./qc_statement.ts";
import {
  certificateBytes,
  CertificateFormatError,
  normalSerial,
  ORGANIZATION_IDENTIFIER_OID,
} from "./pem.ts";

export {
  certificateBytes,
  CertificateFormatError,
  normalSerial,
  ORGANIZATION_IDENTIFIER_OID,
  pemBodies,
} from "./pem.ts";

/** A parsed certificate with the facts the checks use. */
export interface CertificateInfo {
  cert: X509Certificate;
  /** SHA-256 of the DER, lower-case hex. */
  sha256: string;
  /** SHA-256 of the DER, base64url (the JWS `x5t#S256`). */
  x5tS256: string;
  /** Serial number, lower-case hex without leading zeros. */
  serial: string;
  /** The subject's organizationIdentifier, when present. */
  organizationId?: string;
  /** PSD2 roles from the QC statement. */
  roles: string[];
  /** DNS names: the subject CN (when it looks like a host name) and SubjectAltName dNSNames. */
  domains: string[];
  /** True when basicConstraints says this is a CA certificate. */
  isCa: boolean;
  /** QC types of the QC type statement; `undefined` when the certificate has none. */
  qcTypes?: QcTypeName[];
  /** Extended key usage OIDs; `undefined` when the extension is absent. */
  extendedKeyUsages?: string[];
  /** Key usage bits (@peculiar/x509's KeyUsageFlags); `undefined` when the extension is absent. */
  keyUsage?: number;
}

const HOST_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\.?$/i;

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64url(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function domainsOf(cert: X509Certificate): string[] {
  const names = new Set<string>();
  for (const cn of cert.subjectName.getField("CN")) {
    if (HOST_NAME.test(cn)) names.add(cn.toLowerCase().replace(/\.$/, ""));
  }
  const san = cert.getExtension(SubjectAlternativeNameExtension);
  for (const name of san?.names.items ?? []) {
    if (name.type === "dns") names.add(name.value.toLowerCase().replace(/\.$/, ""));
  }
  return [...names];
}

function statementsOf(cert: X509Certificate): { roles: string[]; qcTypes?: QcTypeName[] } {
  const extension = cert.getExtension(QC_STATEMENTS_OID);
  if (!extension) return { roles: [] };
  try {
    return { roles: psd2Roles(extension.value), qcTypes: qcTypes(extension.value) };
  } catch {
    throw new CertificateFormatError("Its qcStatements extension is malformed");
  }
}

/**
 * Parses one certificate; throws {@link CertificateFormatError} when it is not an X.509
 * certificate.
 */
export async function parseCertificate(input: string | Uint8Array): Promise<CertificateInfo> {
  const der = certificateBytes(input);
  let facts: Omit<CertificateInfo, "sha256" | "x5tS256">;
  try {
    const cert = new X509Certificate(der);
    facts = {
      cert,
      serial: normalSerial(cert.serialNumber),
      organizationId: cert.subjectName.getField(ORGANIZATION_IDENTIFIER_OID)[0],
      ...statementsOf(cert),
      domains: domainsOf(cert),
      isCa: cert.getExtension(BasicConstraintsExtension)?.ca ?? false,
      extendedKeyUsages: cert.getExtension(ExtendedKeyUsageExtension)?.usages.map(String),
      keyUsage: cert.getExtension(KeyUsagesExtension)?.usages,
    };
  } catch (error) {
    if (error instanceof CertificateFormatError) throw error;
    throw new CertificateFormatError("It is not a well-formed DER-encoded X.509 certificate");
  }
  const digest = await crypto.subtle.digest("SHA-256", der);
  return { ...facts, sha256: hex(digest), x5tS256: base64url(digest) };
}
