/**
 * The OCSP rules of src/pki/ocsp.ts against responses built here, one rule broken at a time: who
 * signed, about which certificate, when, with which nonce. (The real `openssl ocsp` responders are
 * in tests/src/pki/revocation_test.ts.)
 */
import "reflect-metadata";
import assert from "node:assert/strict";
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
  CertStatus,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  Nonce,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
} from "@peculiar/asn1-ocsp";
import {
  AsnEcSignatureFormatter,
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import {
  type OcspCheckOptions,
  ocspRequest,
  readOcspResponse,
  type RevocationStatus,
} from "../../../src/pki/ocsp.ts";
import { createCa, issue, type Issued } from "../../support/pki.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Whole seconds: GeneralizedTime carries no milliseconds. */
const NOW = Math.floor(Date.now() / 1000) * 1000;
const OCSP_SIGNING = "1.3.6.1.5.5.7.3.9";
const SHA1 = "1.3.14.3.2.26";
const SHA256 = "2.16.840.1.101.3.4.2.1";
const SHA384 = "2.16.840.1.101.3.4.2.2";
const SHA512 = "2.16.840.1.101.3.4.2.3";
const HASH_NAMES: Record<string, string> = {
  [SHA1]: "SHA-1",
  [SHA256]: "SHA-256",
  [SHA384]: "SHA-384",
  [SHA512]: "SHA-512",
};

const ca = await createCa();
const leaf = await issue(ca);
const other = await issue(ca);
const ocspSigning = () => [new ExtendedKeyUsageExtension([OCSP_SIGNING])];
const delegated = await issue(ca, { name: "OCSP Responder", extensions: ocspSigning() });
const ecDelegated = await issue(ca, {
  name: "EC OCSP Responder",
  keyType: "EC",
  extensions: ocspSigning(),
});
const withoutEku = await issue(ca, { name: "Not A Responder" });
const clientAuthOnly = await issue(ca, {
  name: "Client Not Responder",
  extensions: [new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth])],
});
const responderFrom = new Date(NOW - 10 * DAY);
const responderUntil = new Date(NOW + 10 * DAY);
/** A responder that expired (by the machine's clock) five days ago. */
const expiredResponder = await issue(ca, {
  name: "Expired OCSP Responder",
  notBefore: new Date(NOW - 20 * DAY),
  notAfter: new Date(NOW - 5 * DAY),
  extensions: ocspSigning(),
});
const dated = await issue(ca, {
  name: "Dated OCSP Responder",
  notBefore: responderFrom,
  notAfter: responderUntil,
  extensions: ocspSigning(),
});
/** A CA of the same name with another key, and its delegated responder. */
const impostor = await createCa();
const impostorResponder = await issue(impostor, {
  name: "OCSP Responder",
  extensions: ocspSigning(),
});
/** A CA of another name, and its delegated responder. */
const elsewhere = await createCa("Another QTSP CA");
const elsewhereResponder = await issue(elsewhere, {
  name: "OCSP Responder",
  extensions: ocspSigning(),
});

/** The CA's own key under another name, and a responder issued under that name. */
const renamedCa: Issued = {
  ...ca,
  cert: await X509CertificateGenerator.createSelfSigned({
    name: "CN=Renamed QTSP CA, O=Test QTSP, C=GE",
    keys: ca.keys,
    serialNumber: "02",
    notBefore: new Date(NOW - DAY),
    notAfter: new Date(NOW + 10 * DAY),
    extensions: [new BasicConstraintsExtension(true, undefined, true)],
  }),
};
const renamedResponder = await issue(renamedCa, {
  name: "OCSP Responder",
  extensions: ocspSigning(),
});

const options: OcspCheckOptions = { now: NOW, skewMs: 5 * MINUTE, maxAgeMs: 60 * MINUTE };

function asn(cert: Issued): Certificate {
  return AsnParser.parse(cert.cert.rawData, Certificate);
}

function keyBits(cert: Issued): ArrayBuffer {
  return AsnParser.parse(cert.cert.publicKey.rawData, SubjectPublicKeyInfo).subjectPublicKey;
}

async function hash(oid: string, data: ArrayBuffer): Promise<ArrayBuffer> {
  return await crypto.subtle.digest(HASH_NAMES[oid] ?? "SHA-1", data);
}

/** What one SingleResponse says, and about what. */
interface Single {
  /** The certificate it is about (default `leaf`). */
  cert?: Issued;
  /** The issuer its hashes are of (default `ca`). */
  issuer?: Issued;
  /** The CertID's serial number bytes, instead of the certificate's. */
  serial?: Uint8Array;
  hashOid?: string;
  issuerNameHash?: ArrayBuffer;
  issuerKeyHash?: ArrayBuffer;
  status?: "good" | "revoked" | "unknown";
  revokedAt?: number;
  thisUpdate?: number;
  /** `null`: none. */
  nextUpdate?: number | null;
}

/** The response to build. */
interface Build {
  responses?: Single[];
  /** Who signs (default the CA). */
  signer?: Issued;
  /** The certificates the response carries. */
  carry?: Issued[];
  /** ResponderID by name instead of by key hash. */
  byName?: boolean;
  /** Whom the ResponderID names, when it is not the signer. */
  responderId?: Issued;
  nonce?: Uint8Array;
  /** Further response extensions, before the nonce. */
  extensions?: AsnExtension[];
  /** Flip a bit of the signature. */
  tamper?: boolean;
  /** Claim this signature algorithm (OID) instead. */
  algorithm?: string;
  /** Encode the tbsResponseData with its default version written out, and sign those bytes. */
  explicitVersion?: boolean;
}

async function certIdOf(single: Single): Promise<CertID> {
  const cert = single.cert ?? leaf;
  const issuer = single.issuer ?? ca;
  const oid = single.hashOid ?? SHA1;
  return new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: oid, parameters: null }),
    issuerNameHash: new OctetString(
      single.issuerNameHash ??
        await hash(oid, AsnConvert.serialize(asn(cert).tbsCertificate.issuer)),
    ),
    issuerKeyHash: new OctetString(single.issuerKeyHash ?? await hash(oid, keyBits(issuer))),
    serialNumber: single.serial
      ? single.serial.slice().buffer
      : asn(cert).tbsCertificate.serialNumber,
  });
}

function statusOf(single: Single): CertStatus {
  if (single.status === "revoked") {
    return new CertStatus({
      revoked: new RevokedInfo({ revocationTime: new Date(single.revokedAt ?? NOW - DAY) }),
    });
  }
  return single.status === "unknown"
    ? new CertStatus({ unknown: null })
    : new CertStatus({ good: null });
}

/** A DER length. */
function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const out: number[] = [];
  for (let n = length; n > 0; n >>= 8) out.unshift(n & 0xff);
  return [0x80 | out.length, ...out];
}

/** The DER of a tbsResponseData with `version [0] INTEGER 0` written out (DER leaves it out). */
function withExplicitVersion(der: Uint8Array): Uint8Array<ArrayBuffer> {
  const lengthBytes = der[1] < 0x80 ? 1 : 1 + (der[1] & 0x7f);
  const content = [0xa0, 0x03, 0x02, 0x01, 0x00, ...der.subarray(1 + lengthBytes)];
  return new Uint8Array([0x30, ...derLength(content.length), ...content]);
}

async function sign(signer: Issued, data: Uint8Array<ArrayBuffer>, tamper = false) {
  let algorithm: AlgorithmIdentifier;
  let signature: ArrayBuffer;
  if (signer.keyType === "EC") {
    const params = { name: "ECDSA", hash: "SHA-256", namedCurve: "P-256" };
    const raw = await crypto.subtle.sign(params, signer.keys.privateKey, data);
    algorithm = new AlgorithmIdentifier({ algorithm: "1.2.840.10045.4.3.2" });
    signature = new AsnEcSignatureFormatter().toAsnSignature(params, raw)!;
  } else {
    algorithm = new AlgorithmIdentifier({ algorithm: "1.2.840.113549.1.1.11", parameters: null });
    signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signer.keys.privateKey, data);
  }
  if (tamper) new Uint8Array(signature)[10] ^= 1;
  return { algorithm, signature };
}

/** The DER of an OCSP response, signed as `build` says. */
async function response(build: Build = {}): Promise<Uint8Array> {
  const signer = build.signer ?? ca;
  const named = build.responderId ?? signer;
  const extensions = [...build.extensions ?? []];
  if (build.nonce) {
    extensions.push(
      new AsnExtension({
        extnID: id_pkix_ocsp_nonce,
        extnValue: new OctetString(AsnConvert.serialize(new Nonce(build.nonce))),
      }),
    );
  }
  const singles = await Promise.all((build.responses ?? [{}]).map(async (single) => {
    const thisUpdate = single.thisUpdate ?? NOW - MINUTE;
    const nextUpdate = single.nextUpdate === undefined ? NOW + 60 * MINUTE : single.nextUpdate;
    return new SingleResponse({
      certID: await certIdOf(single),
      certStatus: statusOf(single),
      thisUpdate: new Date(thisUpdate),
      ...(nextUpdate === null ? {} : { nextUpdate: new Date(nextUpdate) }),
    });
  }));
  const tbs = new ResponseData({
    responderID: build.byName
      ? new ResponderID({ byName: asn(named).tbsCertificate.subject })
      : new ResponderID({
        byKey: new OctetString(await hash(SHA1, keyBits(named))),
      }),
    producedAt: new Date(NOW),
    responses: singles,
    ...(extensions.length ? { responseExtensions: extensions } : {}),
  });
  let data = new Uint8Array(AsnConvert.serialize(tbs));
  if (build.explicitVersion) data = withExplicitVersion(data);
  const signed = await sign(signer, data, build.tamper);
  const { signature } = signed;
  const algorithm = build.algorithm
    ? new AlgorithmIdentifier({ algorithm: build.algorithm })
    : signed.algorithm;
  const basic = new BasicOCSPResponse({
    tbsResponseData: tbs,
    signatureAlgorithm: algorithm,
    signature,
    ...(build.carry ? { certs: build.carry.map(asn) } : {}),
  });
  let basicDer = new Uint8Array(AsnConvert.serialize(basic));
  if (build.explicitVersion) {
    // The signed bytes replace the re-encoded tbsResponseData inside the BasicOCSPResponse.
    const header = basicDer[1] < 0x80 ? 2 : 2 + (basicDer[1] & 0x7f);
    const plain = AsnConvert.serialize(tbs).byteLength;
    const content = [...data, ...basicDer.subarray(header + plain)];
    basicDer = new Uint8Array([0x30, ...derLength(content.length), ...content]);
  }
  return envelope(basicDer);
}

/** An OCSPResponse around a basic response's DER. */
function envelope(
  basicDer: Uint8Array,
  status: number = OCSPResponseStatus.successful,
  type = id_pkix_ocsp_basic,
): Uint8Array {
  return new Uint8Array(AsnConvert.serialize(
    new OCSPResponse({
      responseStatus: status,
      responseBytes: new ResponseBytes({
        responseType: type,
        response: new OctetString(basicDer.slice().buffer),
      }),
    }),
  ));
}

async function read(
  der: Uint8Array,
  cert: Issued = leaf,
  check: Partial<OcspCheckOptions> = {},
): Promise<RevocationStatus> {
  return await readOcspResponse(der, cert.cert, ca.cert, { ...options, ...check });
}

async function refused(
  der: Uint8Array | Promise<Uint8Array>,
  message: string | RegExp,
  check: Partial<OcspCheckOptions> = {},
) {
  await assert.rejects(read(await der, leaf, check), (error: Error) => {
    assert.equal(error.name, "OcspError");
    if (typeof message === "string") assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
}

const GOOD = { status: "good", thisUpdate: NOW - MINUTE, nextUpdate: NOW + 60 * MINUTE };

// The request.

Deno.test("ocspRequest() makes the request openssl makes for the certificate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-ocsp-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, ca.pem);
    await Deno.writeTextFile(`${dir}/leaf.pem`, leaf.pem);
    const { code } = await new Deno.Command("openssl", {
      args: [
        "ocsp",
        "-issuer",
        "ca.pem",
        "-cert",
        "leaf.pem",
        "-no_nonce",
        "-reqout",
        "req.der",
      ],
      cwd: dir,
      stdout: "null",
      stderr: "null",
    }).output();
    assert.equal(code, 0);
    assert.deepEqual(
      await ocspRequest(leaf.cert, ca.cert),
      await Deno.readFile(`${dir}/req.der`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ocspRequest() asks about one certificate by SHA-1 CertID, with the nonce given", async () => {
  const nonce = crypto.getRandomValues(new Uint8Array(16));
  const request = AsnParser.parse(await ocspRequest(leaf.cert, ca.cert, nonce), OCSPRequest);
  assert.equal(request.tbsRequest.requestList.length, 1);
  assert.deepEqual(
    new Uint8Array(AsnConvert.serialize(request.tbsRequest.requestList[0].reqCert)),
    new Uint8Array(AsnConvert.serialize(await certIdOf({}))),
  );
  const extensions = request.tbsRequest.requestExtensions ?? [];
  assert.equal(extensions.length, 1);
  assert.equal(extensions[0].extnID, id_pkix_ocsp_nonce);
  assert.deepEqual(
    new Uint8Array(AsnParser.parse(extensions[0].extnValue.buffer, Nonce).buffer),
    nonce,
  );
  const plain = AsnParser.parse(await ocspRequest(leaf.cert, ca.cert), OCSPRequest);
  assert.equal(plain.tbsRequest.requestExtensions, undefined);
});

// The answer's status.

Deno.test("readOcspResponse() reads good, revoked and unknown, with their dates", async () => {
  assert.deepEqual(await read(await response()), GOOD);
  assert.deepEqual(
    await read(await response({ responses: [{ status: "revoked", revokedAt: NOW - DAY }] })),
    {
      status: "revoked",
      thisUpdate: NOW - MINUTE,
      nextUpdate: NOW + 60 * MINUTE,
      revokedAt: NOW - DAY,
    },
  );
  assert.deepEqual(await read(await response({ responses: [{ status: "unknown" }] })), {
    ...GOOD,
    status: "unknown",
  });
  assert.deepEqual(await read(await response({ responses: [{ nextUpdate: null }] })), {
    status: "good",
    thisUpdate: NOW - MINUTE,
    nextUpdate: undefined,
  });
});

Deno.test("readOcspResponse() refuses what is not a successful basic OCSP response", async () => {
  await refused(
    Promise.resolve(new Uint8Array([1, 2, 3])),
    "It is not a DER-encoded OCSP response",
  );
  const basic = new Uint8Array(
    AsnParser.parse(await response(), OCSPResponse).responseBytes!.response.buffer,
  );
  await refused(
    Promise.resolve(envelope(basic, OCSPResponseStatus.tryLater)),
    'The responder answered "tryLater"',
  );
  await refused(Promise.resolve(envelope(basic, 4)), 'The responder answered "4"');
  await refused(
    Promise.resolve(new Uint8Array(AsnConvert.serialize(new OCSPResponse({ responseStatus: 0 })))),
    "It is not a basic OCSP response",
  );
  await refused(
    Promise.resolve(envelope(basic, 0, "1.3.6.1.5.5.7.48.1.99")),
    "It is not a basic OCSP response",
  );
  await refused(
    Promise.resolve(envelope(new Uint8Array([0x30, 0x03, 1, 2, 3]))),
    "Its basic OCSP response is malformed",
  );
});

// Who signed it.

Deno.test("readOcspResponse() believes the issuing CA and its delegated responder, by key or by name", async () => {
  assert.deepEqual(await read(await response({ byName: true })), GOOD);
  assert.deepEqual(await read(await response({ signer: delegated, carry: [delegated] })), GOOD);
  assert.deepEqual(
    await read(await response({ signer: delegated, carry: [other, delegated], byName: true })),
    GOOD,
  );
  assert.deepEqual(await read(await response({ signer: ecDelegated, carry: [ecDelegated] })), GOOD);
});

Deno.test("readOcspResponse() checks the signature over the bytes signed, not a re-encoding", async () => {
  assert.deepEqual(await read(await response({ explicitVersion: true })), GOOD);
});

Deno.test("readOcspResponse() refuses a response whose signature does not verify", async () => {
  await refused(response({ tamper: true }), "Its signature does not verify");
  await refused(
    response({ signer: ecDelegated, carry: [ecDelegated], tamper: true }),
    "Its signature does not verify",
  );
  // An algorithm nobody knows verifies nothing.
  await refused(response({ algorithm: "1.2.3.4.5" }), "Its signature does not verify");
  // Signed by the delegated responder's key, naming the CA.
  await refused(response({ signer: delegated, responderId: ca }), "Its signature does not verify");
});

Deno.test("readOcspResponse() refuses a responder whose certificate it does not carry", async () => {
  const message = "It is signed by a responder whose certificate it does not carry";
  await refused(response({ signer: delegated }), message);
  await refused(response({ signer: delegated, byName: true, carry: [other] }), message);
});

Deno.test("readOcspResponse() refuses a responder the certificate's issuer did not authorise", async () => {
  const message = "It is signed by a responder the certificate's issuer did not authorise";
  // Issued by another CA of the same name (its signature over the responder does not verify).
  await refused(response({ signer: impostorResponder, carry: [impostorResponder] }), message);
  // Issued by a CA of another name.
  await refused(response({ signer: elsewhereResponder, carry: [elsewhereResponder] }), message);
  // Another CA's own answer, carried.
  await refused(response({ signer: elsewhere, carry: [elsewhere] }), message);
  // Signed with the CA's key, but under another issuer name: not a certificate of this issuer.
  await refused(response({ signer: renamedResponder, carry: [renamedResponder] }), message);
});

Deno.test("readOcspResponse() refuses a certificate of the issuer without OCSPSigning", async () => {
  await refused(
    response({ signer: withoutEku, carry: [withoutEku] }),
    "It is signed by a certificate of the issuer without the OCSPSigning extended key usage",
  );
  await refused(
    response({ signer: clientAuthOnly, carry: [clientAuthOnly] }),
    "It is signed by a certificate of the issuer without the OCSPSigning extended key usage",
  );
  // The CA's certificate, carried under another encoding of the same DER, is the CA itself.
  assert.deepEqual(await read(await response({ carry: [ca] })), GOOD);
});

Deno.test("readOcspResponse() believes a delegated responder only inside its validity dates", async () => {
  const der = (now: number) =>
    response({
      signer: dated,
      carry: [dated],
      responses: [{ thisUpdate: now, nextUpdate: now + MINUTE }],
    });
  const message = "It is signed by a responder certificate outside its validity dates";
  const from = responderFrom.getTime();
  const until = responderUntil.getTime();
  assert.equal((await read(await der(from), leaf, { now: from })).status, "good");
  assert.equal((await read(await der(until), leaf, { now: until })).status, "good");
  await refused(der(from - 1000), message, { now: from - 1000 });
  await refused(der(until + 1000), message, { now: until + 1000 });
  // The dates count at the check's time (the app's clock), not the machine's.
  const then = NOW - 10 * DAY;
  const old = response({
    signer: expiredResponder,
    carry: [expiredResponder],
    responses: [{ thisUpdate: then, nextUpdate: then + MINUTE }],
  });
  assert.equal((await read(await old, leaf, { now: then })).status, "good");
  await refused(old, message);
});

// The nonce.

Deno.test("readOcspResponse() wants the nonce sent back when the answer echoes one", async () => {
  const nonce = crypto.getRandomValues(new Uint8Array(16));
  const unrelated = new AsnExtension({
    extnID: "1.3.6.1.5.5.7.48.1.3",
    extnValue: new OctetString(new Uint8Array([4, 0]).buffer),
  });
  assert.deepEqual(
    await read(await response({ nonce, extensions: [unrelated] }), leaf, { nonce }),
    GOOD,
  );
  await refused(
    response({ nonce: crypto.getRandomValues(new Uint8Array(16)) }),
    "It echoes another nonce than the one sent",
    { nonce },
  );
  // A responder that echoes none (many precompute their answers), and a nonce nobody sent.
  assert.deepEqual(await read(await response(), leaf, { nonce }), GOOD);
  assert.deepEqual(await read(await response({ nonce })), GOOD);
});

// About which certificate.

Deno.test("readOcspResponse() does not read another certificate's status as this one's", async () => {
  const der = response({ responses: [{ cert: other, status: "revoked" }] });
  await refused(der, "It says nothing about this certificate");
  assert.equal((await read(await der, other)).status, "revoked");
  // Several answers: the one about this certificate counts.
  const both = await response({
    responses: [{ cert: other, status: "revoked" }, { status: "good" }, { cert: other }],
  });
  assert.equal((await read(both)).status, "good");
  assert.equal((await read(both, other)).status, "revoked");
});

Deno.test("readOcspResponse() compares serials by value, not by their last bytes", async () => {
  const serial = new Uint8Array(asn(leaf).tbsCertificate.serialNumber);
  const twin = serial.slice();
  twin[0] ^= 0x40;
  await refused(
    response({ responses: [{ serial: twin, status: "revoked" }] }),
    "It says nothing about this certificate",
  );
  // A leading zero byte more (a responder's own encoding) is the same serial.
  assert.deepEqual(
    await read(await response({ responses: [{ serial: new Uint8Array([0, ...serial]) }] })),
    GOOD,
  );
  await refused(
    response({ responses: [{ serial: new Uint8Array([...serial, 0]) }] }),
    "It says nothing about this certificate",
  );
  await refused(
    response({ responses: [{ serial: serial.slice(0, -1), status: "revoked" }] }),
    "It says nothing about this certificate",
  );
});

Deno.test("readOcspResponse() wants the CertID's issuer name and key hashes of this issuer", async () => {
  const message = "It says nothing about this certificate";
  const otherNameHash = await hash(
    SHA1,
    AsnConvert.serialize(asn(elsewhere).tbsCertificate.subject),
  );
  // A CA of the same name with another key (the name hash matches, the key hash does not).
  await refused(response({ responses: [{ issuer: impostor, status: "revoked" }] }), message);
  // The same key under another name.
  await refused(response({ responses: [{ issuerNameHash: otherNameHash }] }), message);
});

Deno.test("readOcspResponse() reads CertIDs in SHA-1 and the SHA-2 hashes, no other", async () => {
  for (const hashOid of [SHA256, SHA384, SHA512]) {
    assert.deepEqual(await read(await response({ responses: [{ hashOid }] })), GOOD, hashOid);
  }
  // The SHA-1 hashes under the SHA-256 identifier do not match.
  const sha1 = await certIdOf({});
  await refused(
    response({
      responses: [{
        hashOid: SHA256,
        issuerNameHash: sha1.issuerNameHash.buffer,
        issuerKeyHash: sha1.issuerKeyHash.buffer,
      }],
    }),
    "It says nothing about this certificate",
  );
  await refused(
    response({ responses: [{ hashOid: "1.2.840.113549.2.5" }] }),
    "Its CertID uses an unknown hash algorithm 1.2.840.113549.2.5",
  );
});

// When.

Deno.test("readOcspResponse() refuses a thisUpdate beyond the clock skew", async () => {
  const at = (thisUpdate: number) => response({ responses: [{ thisUpdate }] });
  const edge = NOW + options.skewMs;
  assert.equal((await read(await at(edge))).status, "good");
  await refused(
    at(edge + 1000),
    `Its thisUpdate ${new Date(edge + 1000).toISOString()} lies in the future`,
  );
});

Deno.test("readOcspResponse() refuses a response past its nextUpdate beyond the clock skew", async () => {
  const at = (nextUpdate: number) =>
    response({ responses: [{ thisUpdate: NOW - DAY, nextUpdate }] });
  const edge = NOW - options.skewMs;
  assert.equal((await read(await at(edge))).status, "good");
  await refused(
    at(edge - 1000),
    `It expired at its nextUpdate ${new Date(edge - 1000).toISOString()}`,
  );
  // Revoked or not, a stale answer is not believed.
  await refused(
    response({
      responses: [{ status: "revoked", thisUpdate: NOW - DAY, nextUpdate: NOW - DAY / 2 }],
    }),
    /^It expired at its nextUpdate /,
  );
});

Deno.test("readOcspResponse() believes an answer without nextUpdate for the policy's maximum age", async () => {
  const at = (thisUpdate: number) => response({ responses: [{ thisUpdate, nextUpdate: null }] });
  const edge = NOW - options.maxAgeMs;
  assert.equal((await read(await at(edge))).status, "good");
  await refused(
    at(edge - 1000),
    `It is older than the policy allows (thisUpdate ${new Date(edge - 1000).toISOString()})`,
  );
  // With a nextUpdate, the nextUpdate rules, however old thisUpdate is.
  assert.equal(
    (await read(await response({ responses: [{ thisUpdate: NOW - 2 * DAY }] }))).status,
    "good",
  );
});
