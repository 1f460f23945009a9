/**
 * A test PKI made at test time: CAs and TPP certificates (organizationIdentifier, PSD2 QC
 * statement roles, SubjectAltName dNSNames) with @peculiar/x509 and WebCrypto.
 */
import "reflect-metadata";
import {
  AuthorityInfoAccessExtension,
  BasicConstraintsExtension,
  CRLDistributionPointsExtension,
  Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509Certificate,
  X509CertificateGenerator,
} from "@peculiar/x509";
import {
  psd2StatementsValue,
  QC_STATEMENTS_OID,
  type QcTypeName,
} from "../../src/pki/qc_statement.ts";
import { loadX509 } from "../../src/pki/x509.ts";

// The gateway loads @peculiar/x509 when a policy names certificates (src/pki/x509.ts); the tests
// that parse policy sections by hand with this PKI's certificates get it loaded the same way.
await loadX509();

/** Key types of test certificates. */
export type KeyType = "RSA" | "EC";

const RSA = {
  name: "RSASSA-PKCS1-v1_5",
  hash: "SHA-256",
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};
const EC = { name: "ECDSA", namedCurve: "P-256" };
const DAY = 86_400_000;

/** A certificate with its key pair. */
export interface Issued {
  cert: X509Certificate;
  keys: CryptoKeyPair;
  keyType: KeyType;
  /** PEM text of the certificate. */
  pem: string;
  /** Base64 DER (what x5c and TPP-Signature-Certificate carry). */
  base64: string;
}

/** Generates a key pair (extractable, so that signers can re-import it for other algorithms). */
export async function keyPair(type: KeyType = "RSA"): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(type === "RSA" ? RSA : EC, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
}

function issued(cert: X509Certificate, keys: CryptoKeyPair, keyType: KeyType): Issued {
  return { cert, keys, keyType, pem: cert.toString("pem"), base64: cert.toString("base64") };
}

/** A self-signed CA (a QTSP's issuing CA in the tests). */
export async function createCa(name = "Test QTSP CA"): Promise<Issued> {
  const keys = await keyPair("RSA");
  const cert = await X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}, O=Test QTSP, C=GE`,
    keys,
    serialNumber: "01",
    notBefore: new Date(Date.now() - 365 * DAY),
    notAfter: new Date(Date.now() + 3650 * DAY),
    extensions: [
      new BasicConstraintsExtension(true, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
    ],
  });
  return issued(cert, keys, "RSA");
}

/** What a TPP certificate carries. */
export interface TppOptions {
  /** organizationIdentifier; `null` for none. */
  orgId?: string | null;
  roles?: string[];
  /** SubjectAltName dNSNames; the first is also the CN. */
  domains?: string[];
  /** SubjectAltName iPAddresses (a server reached by its address). */
  ips?: string[];
  serial?: string;
  notBefore?: Date;
  notAfter?: Date;
  keyType?: KeyType;
  /** Issue an intermediate CA instead of a TPP certificate. */
  ca?: boolean;
  name?: string;
  /** OCSP responder URLs for the Authority Information Access extension. */
  ocsp?: string[];
  /** CRL distribution point URLs. */
  crl?: string[];
  /** Further extensions. */
  extensions?: Extension[];
  /** QC types of a QC type statement (none by default). */
  qcTypes?: QcTypeName[];
}

/** Issues a certificate signed by `issuer`. */
export async function issue(issuer: Issued, options: TppOptions = {}): Promise<Issued> {
  const keyType = options.keyType ?? "RSA";
  const keys = await keyPair(keyType);
  const domains = options.domains ?? ["tpp.example", "*.tpp.example"];
  const orgId = options.orgId === undefined ? "PSDGE-NBG-123456" : options.orgId;
  const subject = [
    `CN=${options.name ?? domains[0] ?? "TPP"}`,
    ...(orgId === null ? [] : [`2.5.4.97=${orgId}`]),
    "O=Test TPP",
    "C=GE",
  ].join(", ");
  const extensions: Extension[] = options.ca
    ? [new BasicConstraintsExtension(true, undefined, true)]
    : [
      new Extension(
        QC_STATEMENTS_OID,
        false,
        psd2StatementsValue(
          options.roles ?? ["PSP_PI", "PSP_AI"],
          { name: "NBG", id: "GE-NBG" },
          options.qcTypes,
        ),
      ),
      new SubjectAlternativeNameExtension([
        ...domains.map((value) => ({ type: "dns" as const, value })),
        ...(options.ips ?? []).map((value) => ({ type: "ip" as const, value })),
      ]),
    ];
  if (options.ocsp) extensions.push(new AuthorityInfoAccessExtension({ ocsp: options.ocsp }));
  if (options.crl) extensions.push(new CRLDistributionPointsExtension(options.crl));
  extensions.push(...options.extensions ?? []);
  const cert = await X509CertificateGenerator.create({
    subject,
    issuer: issuer.cert.subjectName,
    serialNumber: options.serial ?? crypto.getRandomValues(new Uint8Array(8)).reduce(
      (s, b) => s + b.toString(16).padStart(2, "0"),
      "1",
    ),
    notBefore: options.notBefore ?? new Date(Date.now() - DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as Algorithm,
    extensions,
  });
  return issued(cert, keys, keyType);
}

/** A certificate and its RSA private key given as PEM (PKCS#8), for example made by openssl. */
export async function importIssued(certPem: string, keyPem: string): Promise<Issued> {
  const cert = new X509Certificate(certPem);
  const der = Uint8Array.from(
    atob(keyPem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, "")),
    (ch) => ch.charCodeAt(0),
  );
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  const keys = {
    privateKey: await crypto.subtle.importKey("pkcs8", der, algorithm, true, ["sign"]),
    publicKey: await cert.publicKey.export(algorithm, ["verify"]),
  };
  return issued(cert, keys, "RSA");
}

/** The private key of `issued` as PEM (PKCS#8), for a server that reads its key from a file. */
export async function privateKeyPem(issued: Issued): Promise<string> {
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", issued.keys.privateKey));
  const lines = der.toBase64().match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN PRIVATE KEY-----\n${lines}\n-----END PRIVATE KEY-----\n`;
}

/** A YAML double-quoted scalar of any text (JSON strings are YAML). */
export function yamlString(text: string): string {
  return JSON.stringify(text);
}

/** The nginx form of a certificate header: URL-encoded PEM. */
export function nginxHeader(cert: Issued): string {
  return encodeURIComponent(cert.pem);
}
