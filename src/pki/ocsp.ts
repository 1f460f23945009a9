/**
 * OCSP (RFC 6960): the request for one certificate, and the checks on an answer before its
 * status is believed: a successful basic response, signed by the issuing CA or by a responder the
 * CA delegated to (issued by it, with id-kp-OCSPSigning, inside its dates), about this very
 * certificate (CertID), inside thisUpdate/nextUpdate, and with our nonce when it echoes one.
 */
import "reflect-metadata";
import { AsnConvert, AsnParser, OctetString } from "@peculiar/asn1-schema";
import {
  AlgorithmIdentifier,
  Certificate,
  Extension as AsnExtension,
  SubjectPublicKeyInfo,
} from "@peculiar/asn1-x509";
import {
  BasicOCSPResponse,
  CertID,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  Nonce,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
} from "@peculiar/asn1-ocsp";
import {
  AlgorithmProvider,
  AsnEcSignatureFormatter,
  ExtendedKeyUsageExtension,
  X509Certificate,
} from "@peculiar/x509";

/** OID of SHA-1, the CertID hash every responder understands. */
const SHA1_OID = "1.3.14.3.2.26";
const HASHES: Record<string, string> = {
  [SHA1_OID]: "SHA-1",
  "2.16.840.1.101.3.4.2.1": "SHA-256",
  "2.16.840.1.101.3.4.2.2": "SHA-384",
  "2.16.840.1.101.3.4.2.3": "SHA-512",
};

/** What a certificate's revocation status is, as a responder or a CRL says. */
export interface RevocationStatus {
  status: "good" | "revoked" | "unknown";
  /** Milliseconds since the epoch. */
  thisUpdate: number;
  nextUpdate?: number;
  revokedAt?: number;
}

/** An OCSP answer that cannot be believed, or no answer; the text says why. */
export class OcspError extends Error {
  constructor(text: string) {
    super(text);
    this.name = "OcspError";
  }
}

function bytes(buffer: ArrayBuffer | ArrayBufferView): Uint8Array {
  return buffer instanceof ArrayBuffer
    ? new Uint8Array(buffer)
    : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function equalBytes(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean {
  const x = bytes(a);
  const y = bytes(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** A serial number's bytes without leading zero bytes (DER may add one for the sign). */
function serialBytes(serial: ArrayBuffer): Uint8Array {
  const all = bytes(serial);
  let i = 0;
  while (i < all.length - 1 && all[i] === 0) i++;
  return all.subarray(i);
}

async function digest(algorithm: string, data: ArrayBuffer | Uint8Array): Promise<ArrayBuffer> {
  return await crypto.subtle.digest(algorithm, data as BufferSource);
}

/** The parts of a certificate a CertID is made of. */
function asnOf(cert: X509Certificate): Certificate {
  return AsnParser.parse(cert.rawData, Certificate);
}

function publicKeyBits(cert: X509Certificate): ArrayBuffer {
  return AsnParser.parse(cert.publicKey.rawData, SubjectPublicKeyInfo).subjectPublicKey;
}

/** The CertID of `cert` issued by `issuer`, with the given hash (RFC 6960 section 4.1.1). */
async function certId(
  cert: X509Certificate,
  issuer: X509Certificate,
  hashOid = SHA1_OID,
): Promise<CertID> {
  const hash = HASHES[hashOid];
  if (!hash) throw new OcspError(`Its CertID uses an unknown hash algorithm ${hashOid}`);
  const issuerName = AsnConvert.serialize(asnOf(cert).tbsCertificate.issuer);
  return new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: hashOid, parameters: null }),
    issuerNameHash: new OctetString(await digest(hash, new Uint8Array(issuerName))),
    issuerKeyHash: new OctetString(await digest(hash, new Uint8Array(publicKeyBits(issuer)))),
    serialNumber: asnOf(cert).tbsCertificate.serialNumber,
  });
}

/** The DER of an OCSP request for one certificate, with a nonce when one is given. */
export async function ocspRequest(
  cert: X509Certificate,
  issuer: X509Certificate,
  nonce?: Uint8Array,
): Promise<Uint8Array> {
  const tbs = new TBSRequest({
    requestList: [new Request({ reqCert: await certId(cert, issuer) })],
  });
  if (nonce) {
    tbs.requestExtensions = [
      new AsnExtension({
        extnID: id_pkix_ocsp_nonce,
        extnValue: new OctetString(AsnConvert.serialize(new Nonce(nonce))),
      }),
    ];
  }
  return new Uint8Array(AsnConvert.serialize(new OCSPRequest({ tbsRequest: tbs })));
}

/** Whether `signature` over `data` verifies with the certificate's key. */
async function verifySignature(
  signer: X509Certificate,
  algorithm: AlgorithmIdentifier,
  signature: ArrayBuffer,
  data: ArrayBuffer,
): Promise<boolean> {
  try {
    const web = new AlgorithmProvider().toWebAlgorithm(algorithm);
    const keyAlgorithm = { ...signer.publicKey.algorithm, ...web };
    const key = await signer.publicKey.export(keyAlgorithm, ["verify"]);
    const raw = new AsnEcSignatureFormatter().toWebSignature(keyAlgorithm, signature) ??
      signature;
    return await crypto.subtle.verify(web, key, raw, data);
  } catch {
    return false;
  }
}

/** Compares distinguished names by their DER encoding. */
function sameName(a: X509Certificate, b: X509Certificate, aIssuer = false): boolean {
  const left = aIssuer ? asnOf(a).tbsCertificate.issuer : asnOf(a).tbsCertificate.subject;
  return equalBytes(
    AsnConvert.serialize(left),
    AsnConvert.serialize(asnOf(b).tbsCertificate.subject),
  );
}

/** The certificate that signed the response, among the issuer and the certificates it carries. */
async function responderCertificate(
  basic: BasicOCSPResponse,
  candidates: X509Certificate[],
): Promise<X509Certificate | undefined> {
  const id = basic.tbsResponseData.responderID;
  for (const candidate of candidates) {
    if (id.byKey) {
      const hash = await digest("SHA-1", new Uint8Array(publicKeyBits(candidate)));
      if (equalBytes(hash, id.byKey.buffer)) return candidate;
    } else if (id.byName) {
      const name = AsnConvert.serialize(id.byName);
      if (equalBytes(name, AsnConvert.serialize(asnOf(candidate).tbsCertificate.subject))) {
        return candidate;
      }
    }
  }
  return undefined;
}

/**
 * RFC 6960 section 4.2.2.2: the issuing CA signs, or a certificate it issued with
 * id-kp-OCSPSigning, inside its validity dates at `now`.
 */
async function authorised(
  signer: X509Certificate,
  issuer: X509Certificate,
  now: number,
): Promise<string | undefined> {
  if (equalBytes(signer.rawData, issuer.rawData)) return undefined;
  if (!sameName(signer, issuer, true)) {
    return "is signed by a responder the certificate's issuer did not authorise";
  }
  let issued = false;
  try {
    issued = await signer.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    issued = false;
  }
  if (!issued) return "is signed by a responder the certificate's issuer did not authorise";
  const usages = signer.getExtension(ExtendedKeyUsageExtension)?.usages ?? [];
  if (!usages.map(String).includes(id_kp_OCSPSigning)) {
    return "is signed by a certificate of the issuer without the OCSPSigning extended key usage";
  }
  if (now < signer.notBefore.getTime() || now > signer.notAfter.getTime()) {
    return "is signed by a responder certificate outside its validity dates";
  }
  return undefined;
}

/** Checks of a response beyond its signature. */
export interface OcspCheckOptions {
  /** Milliseconds since the epoch. */
  now: number;
  /** Tolerance on thisUpdate / nextUpdate, in milliseconds. */
  skewMs: number;
  /** Longest time a response without nextUpdate is believed after its thisUpdate. */
  maxAgeMs: number;
  /** The nonce sent; an answer that echoes a nonce must echo this one. */
  nonce?: Uint8Array;
}

/**
 * The status an OCSP response (DER) gives `cert`, after every check; throws {@link OcspError}
 * when the response cannot be believed.
 */
export async function readOcspResponse(
  der: Uint8Array,
  cert: X509Certificate,
  issuer: X509Certificate,
  options: OcspCheckOptions,
): Promise<RevocationStatus> {
  let response: OCSPResponse;
  let basic: BasicOCSPResponse;
  try {
    response = AsnParser.parse(der as BufferSource, OCSPResponse);
  } catch {
    throw new OcspError("It is not a DER-encoded OCSP response");
  }
  if (response.responseStatus !== OCSPResponseStatus.successful) {
    throw new OcspError(
      `The responder answered "${
        OCSPResponseStatus[response.responseStatus] ?? response.responseStatus
      }"`,
    );
  }
  if (response.responseBytes?.responseType !== id_pkix_ocsp_basic) {
    throw new OcspError("It is not a basic OCSP response");
  }
  try {
    basic = AsnParser.parse(response.responseBytes.response.buffer, BasicOCSPResponse);
  } catch {
    throw new OcspError("Its basic OCSP response is malformed");
  }
  const carried = (basic.certs ?? []).map((c) => new X509Certificate(AsnConvert.serialize(c)));
  const signer = await responderCertificate(basic, [issuer, ...carried]);
  if (!signer) {
    throw new OcspError("It is signed by a responder whose certificate it does not carry");
  }
  const data = basic.tbsResponseDataRaw ?? AsnConvert.serialize(basic.tbsResponseData);
  if (!await verifySignature(signer, basic.signatureAlgorithm, basic.signature, data)) {
    throw new OcspError("Its signature does not verify");
  }
  const refused = await authorised(signer, issuer, options.now);
  if (refused) throw new OcspError(`It ${refused}`);

  const sentNonce = options.nonce;
  const echoed = basic.tbsResponseData.responseExtensions?.find((e) =>
    e.extnID === id_pkix_ocsp_nonce
  );
  if (sentNonce && echoed) {
    const expected = AsnConvert.serialize(new Nonce(sentNonce));
    if (!equalBytes(echoed.extnValue.buffer, expected)) {
      throw new OcspError("It echoes another nonce than the one sent");
    }
  }

  const serial = serialBytes(asnOf(cert).tbsCertificate.serialNumber);
  for (const single of basic.tbsResponseData.responses) {
    if (!equalBytes(serialBytes(single.certID.serialNumber), serial)) continue;
    const wanted = await certId(cert, issuer, single.certID.hashAlgorithm.algorithm);
    if (
      !equalBytes(single.certID.issuerNameHash.buffer, wanted.issuerNameHash.buffer) ||
      !equalBytes(single.certID.issuerKeyHash.buffer, wanted.issuerKeyHash.buffer)
    ) continue;
    const thisUpdate = single.thisUpdate.getTime();
    const nextUpdate = single.nextUpdate?.getTime();
    if (thisUpdate > options.now + options.skewMs) {
      throw new OcspError(`Its thisUpdate ${single.thisUpdate.toISOString()} lies in the future`);
    }
    if (nextUpdate !== undefined && nextUpdate < options.now - options.skewMs) {
      throw new OcspError(`It expired at its nextUpdate ${single.nextUpdate!.toISOString()}`);
    }
    if (nextUpdate === undefined && thisUpdate < options.now - options.maxAgeMs) {
      throw new OcspError(
        `It is older than the policy allows (thisUpdate ${single.thisUpdate.toISOString()})`,
      );
    }
    const status = single.certStatus;
    if (status.revoked) {
      return {
        status: "revoked",
        thisUpdate,
        nextUpdate,
        revokedAt: status.revoked.revocationTime.getTime(),
      };
    }
    return { status: status.good !== undefined ? "good" : "unknown", thisUpdate, nextUpdate };
  }
  throw new OcspError("It says nothing about this certificate");
}
