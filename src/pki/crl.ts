/**
 * Certificate revocation lists (RFC 5280): read (DER or PEM), their signature verified against
 * the issuing CA, their dates checked, and kept as a set of revoked serial numbers, so that a
 * lookup is one map access.
 */
import { base64Bytes } from "../lib/base64.ts";
import "reflect-metadata";
import { X509Certificate, X509Crl } from "@peculiar/x509";
import { normalSerial } from "./pem.ts";

/** A CRL, read. */
export interface RevocationList {
  /** The issuer's DN, normalised for comparison. */
  issuer: string;
  /** Milliseconds since the epoch. */
  thisUpdate: number;
  nextUpdate?: number;
  /** Revoked serial numbers (lower-case hex without leading zeros) and when. */
  revoked: Map<string, number>;
  crl: X509Crl;
}

/** A CRL that cannot be believed; the text says why. */
export class CrlError extends Error {
  constructor(text: string) {
    super(text);
    this.name = "CrlError";
  }
}

function normalDn(dn: string): string {
  return dn.toLowerCase().replace(/\s*([,=+])\s*/g, "$1").trim();
}

function derOf(data: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(data.subarray(0, 64));
  if (!text.includes("-----BEGIN")) return data;
  const match = /-----BEGIN X509 CRL-----([\s\S]*?)-----END X509 CRL-----/.exec(
    new TextDecoder().decode(data),
  );
  if (!match) throw new CrlError("It is PEM without an X509 CRL block");
  try {
    return base64Bytes(match[1]);
  } catch {
    throw new CrlError("Its PEM base64 is malformed");
  }
}

/** Checks of a CRL beyond its signature. */
export interface CrlCheckOptions {
  /** Milliseconds since the epoch. */
  now: number;
  /** Tolerance on thisUpdate / nextUpdate, in milliseconds. */
  skewMs: number;
  /** Longest time a CRL without nextUpdate is believed after its thisUpdate. */
  maxAgeMs: number;
}

/** Reads a CRL (DER or PEM bytes); throws {@link CrlError} when it is none. */
export function parseCrl(data: Uint8Array): RevocationList {
  let crl: X509Crl;
  try {
    crl = new X509Crl(derOf(data) as BufferSource);
    const revoked = new Map<string, number>();
    for (const entry of crl.entries) {
      revoked.set(normalSerial(entry.serialNumber), entry.revocationDate.getTime());
    }
    return {
      issuer: normalDn(crl.issuer),
      thisUpdate: crl.thisUpdate.getTime(),
      nextUpdate: crl.nextUpdate?.getTime(),
      revoked,
      crl,
    };
  } catch (error) {
    if (error instanceof CrlError) throw error;
    throw new CrlError("It is not a DER or PEM encoded CRL");
  }
}

/** Whether the CRL names `issuer` as its issuer (a policy CRL serves only its own CA). */
export function isIssuedBy(list: RevocationList, issuer: X509Certificate): boolean {
  return list.issuer === normalDn(issuer.subject);
}

/** Throws {@link CrlError} when the CRL is not yet valid or past its nextUpdate. */
export function checkCrlDates(list: RevocationList, options: CrlCheckOptions): void {
  const { thisUpdate, nextUpdate } = list;
  const iso = (ms: number) => new Date(ms).toISOString();
  if (thisUpdate > options.now + options.skewMs) {
    throw new CrlError(`Its thisUpdate ${iso(thisUpdate)} lies in the future`);
  }
  if (nextUpdate !== undefined && nextUpdate < options.now - options.skewMs) {
    throw new CrlError(`It expired at its nextUpdate ${iso(nextUpdate)}`);
  }
  if (nextUpdate === undefined && thisUpdate < options.now - options.maxAgeMs) {
    throw new CrlError(`It is older than the policy allows (thisUpdate ${iso(thisUpdate)})`);
  }
}

/** Throws {@link CrlError} unless `issuer`'s key signed the CRL. */
export async function checkCrlSignature(list: RevocationList, issuer: X509Certificate) {
  let signed = false;
  try {
    signed = await list.crl.verify({ publicKey: issuer.publicKey });
  } catch {
    signed = false;
  }
  if (!signed) throw new CrlError("Its signature does not verify with the issuer's key");
}
