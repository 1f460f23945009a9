/**
 * Certificates as text and bytes, without parsing them: PEM bodies, base64 or DER, serial numbers,
 * the error for a certificate that cannot be read. Parsing (@peculiar/x509) is
 * src/pki/certificate.ts, loaded with the first certificate.
 */
import { base64Bytes } from "../lib/base64.ts";

/** OID of organizationIdentifier (ETSI EN 319 412-1), for example `PSDGE-NBG-123456`. */
export const ORGANIZATION_IDENTIFIER_OID = "2.5.4.97";

/** A certificate that cannot be read; the text says why. */
export class CertificateFormatError extends Error {
  constructor(text: string) {
    super(text);
    this.name = "CertificateFormatError";
  }
}

/** Serial numbers compare as lower-case hex without leading zeros. */
export function normalSerial(hex: string): string {
  return hex.toLowerCase().replace(/^0+(?=.)/, "");
}

/** The DER bytes of a certificate given as PEM, base64 (standard or url) or DER. */
export function certificateBytes(input: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof input !== "string") return new Uint8Array(input);
  const body = input.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(body)) {
    throw new CertificateFormatError("It is neither PEM nor base64");
  }
  try {
    return base64Bytes(body);
  } catch {
    throw new CertificateFormatError("Its base64 is malformed");
  }
}

/** Splits a PEM bundle into its certificates' base64 bodies. */
export function pemBodies(text: string): string[] {
  return [...text.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)]
    .map((m) => m[1].replace(/\s+/g, ""));
}
