/**
 * The sandbox CA: a stand-in QTSP that issues test eIDAS certificates to TPPs (a QWAC for the
 * transport, a QSealC for signing, with the PSD2 QC statement: roles, national competent
 * authority, organizationIdentifier) and signs a CRL of its own, so that a staging gateway can
 * run the production policy (QC types, key usages, revocation `hard`) with this CA as its only
 * trust anchor. The CA itself is `makeTestCa()` (src/cli/test_ca.ts): a directory with
 * `qtsp-ca.pem` and an owner-only `qtsp-ca.key`. Never a production trust anchor.
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  CRLDistributionPointsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509Certificate,
  X509CertificateGenerator,
  X509CrlGenerator,
} from "@peculiar/x509";
import { psd2StatementsValue, QC_STATEMENTS_OID } from "./qc_statement.ts";
import { ORGANIZATION_IDENTIFIER_OID } from "./pem.ts";
import type { RoleName } from "./qc_names.ts";

const DAY = 86_400_000;
const CA_ALGORITHM = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };

/** An organizationIdentifier of ETSI TS 119 495: PSD, country, NCA id, authorisation number. */
export const ORGANIZATION_ID = /^PSD([A-Z]{2})-([A-Z0-9]{2,8})-[A-Za-z0-9._-]+$/;

/** The sandbox CA, loaded from its directory. */
export interface SandboxCa {
  cert: X509Certificate;
  privateKey: CryptoKey;
}

/** What a test TPP certificate is for: the transport (QWAC) or sealing requests (QSealC). */
export type TppCertificateType = "QWAC" | "QSealC";

/** What the tester chooses of a test TPP certificate. */
export interface TppCertificateRequest {
  type: TppCertificateType;
  /** organizationIdentifier, for example `PSDGE-NBG-123456`. */
  orgId: string;
  roles: readonly RoleName[];
  /** The TPP's legal name (O). */
  organisation?: string;
  /** dNSNames of a QWAC; the first is also its CN. */
  domains?: readonly string[];
  /** Where the gateway fetches the CA's CRL (the CRL distribution point). */
  crlUrl?: string;
  /** Validity in days from now. */
  days?: number;
  keyType?: "RSA" | "EC";
}

/** A certificate and its private key, as PEM. */
export interface IssuedPem {
  certificate: string;
  /** PKCS#8. */
  key: string;
  /** Serial number, hex. */
  serial: string;
}

/** PEM of DER bytes under `label`. */
export function pemOf(label: string, der: ArrayBuffer | Uint8Array): string {
  const lines = new Uint8Array(der).toBase64().match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN ${label}-----\n${lines}\n-----END ${label}-----\n`;
}

/** The DER bytes of the first PEM block of `label` in `text`. */
export function derOf(text: string, label: string): Uint8Array<ArrayBuffer> {
  const match = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`)
    .exec(text);
  if (!match) throw new Error(`No "${label}" PEM block found`);
  return Uint8Array.fromBase64(match[1].replace(/\s+/g, ""));
}

/** Loads the CA made by `makeTestCa(dir)`; throws `Deno.errors.NotFound` when there is none. */
export async function loadSandboxCa(dir: string): Promise<SandboxCa> {
  const cert = new X509Certificate(await Deno.readTextFile(`${dir}/qtsp-ca.pem`));
  const key = derOf(await Deno.readTextFile(`${dir}/qtsp-ca.key`), "PRIVATE KEY");
  const privateKey = await crypto.subtle.importKey("pkcs8", key, CA_ALGORITHM, false, ["sign"]);
  return { cert, privateKey };
}

/** The country of an organizationIdentifier (`PSDGE-NBG-1` -> `GE`); throws on another form. */
export function orgCountry(orgId: string): string {
  const match = ORGANIZATION_ID.exec(orgId);
  if (!match) {
    throw new Error(
      `Organisation identifier "${orgId}" must look like PSDGE-NBG-123456 (PSD, country, NCA id, authorisation number)`,
    );
  }
  return match[1];
}

/** A positive random serial number (hex). */
function randomSerial(): string {
  return crypto.getRandomValues(new Uint8Array(12)).toHex().replace(/^[89a-f]/, "1");
}

/**
 * Issues a test TPP certificate: subject CN, organizationIdentifier, O and C (the country of the
 * identifier); the PSD2 QC statement with the roles and the NCA the identifier names, and the QC
 * type; for a QWAC the extended key usages clientAuth and serverAuth and the domains as
 * SubjectAltName, for a QSealC the key usages digitalSignature and nonRepudiation; the CRL
 * distribution point when given.
 */
export async function issueTppCertificate(
  ca: SandboxCa,
  request: TppCertificateRequest,
): Promise<IssuedPem> {
  const country = orgCountry(request.orgId);
  const nca = ORGANIZATION_ID.exec(request.orgId)![2];
  const keyType = request.keyType ?? "RSA";
  const algorithm = keyType === "EC"
    ? { name: "ECDSA", namedCurve: "P-256" }
    : { ...CA_ALGORITHM, publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const domains = request.domains?.length ? request.domains : ["tpp.example"];
  const organisation = request.organisation ?? `Test TPP ${request.orgId}`;
  const qwac = request.type === "QWAC";
  const subject = [
    `CN=${qwac ? domains[0] : organisation}`,
    `${ORGANIZATION_IDENTIFIER_OID}=${request.orgId}`,
    `O=${organisation}`,
    `C=${country}`,
  ].join(", ");
  const extensions: Extension[] = [
    new BasicConstraintsExtension(false, undefined, true),
    new Extension(
      QC_STATEMENTS_OID,
      false,
      psd2StatementsValue(request.roles, { name: `${nca} (sandbox)`, id: `${country}-${nca}` }, [
        request.type,
      ]),
    ),
    qwac
      ? new KeyUsagesExtension(
        KeyUsageFlags.digitalSignature |
          (keyType === "RSA" ? KeyUsageFlags.keyEncipherment : KeyUsageFlags.keyAgreement),
        true,
      )
      : new KeyUsagesExtension(
        KeyUsageFlags.digitalSignature | KeyUsageFlags.nonRepudiation,
        true,
      ),
  ];
  if (qwac) {
    extensions.push(
      new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth, ExtendedKeyUsage.serverAuth]),
      new SubjectAlternativeNameExtension(
        domains.map((value) => ({ type: "dns" as const, value })),
      ),
    );
  }
  if (request.crlUrl) extensions.push(new CRLDistributionPointsExtension([request.crlUrl]));
  const serial = randomSerial();
  const cert = await X509CertificateGenerator.create({
    subject,
    issuer: ca.cert.subjectName,
    serialNumber: serial,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + (request.days ?? 365) * DAY),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: CA_ALGORITHM,
    extensions,
  });
  return {
    certificate: cert.toString("pem") + "\n",
    key: pemOf("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey)),
    serial: cert.serialNumber,
  };
}

/**
 * The CA's CRL (DER): the serials given as revoked, valid from a minute ago for `hours` (made
 * anew at each request to the sandbox, so that its nextUpdate never runs out).
 */
export async function sandboxCrl(
  ca: SandboxCa,
  revoked: readonly string[] = [],
  hours = 24,
): Promise<ArrayBuffer> {
  const now = Date.now();
  const crl = await X509CrlGenerator.create({
    issuer: ca.cert.subjectName,
    thisUpdate: new Date(now - 60_000),
    nextUpdate: new Date(now + hours * 3_600_000),
    entries: revoked.map((serialNumber) => ({ serialNumber, revocationDate: new Date(now) })),
    signingKey: ca.privateKey,
    signingAlgorithm: CA_ALGORITHM,
  });
  return crl.rawData;
}
