/**
 * Signing a request as a TPP does (the counterpart of the gateway's verifiers, for testers and
 * the sandbox): Digest over the body, then a detached JWS in `x-jws-signature` (JAdES
 * HttpHeaders, `x5c` with the signing certificate) or a Berlin Group 1.3 HTTP signature in
 * `Signature` with the certificate in `TPP-Signature-Certificate`.
 *
 * What a signature covers, unless the caller lists it: `(request-target)` (binds method and path,
 * which a bank may ask), `digest`, `x-request-id`, and each of PSU-ID, PSU-Corporate-ID,
 * TPP-Redirect-URI, TPP-Nok-Redirect-URI and Consent-ID the request carries: the standard's
 * minimum and every option a bank's policy may add (docs/who_is_calling.md, "What a signature
 * must cover"), so that the signed request passes any of them; an HTTP signature covers `date`
 * too.
 */
import { certificateBytes } from "../pki/pem.ts";
import { loadX509 } from "../pki/x509.ts";
import { digestOf } from "./digest.ts";
import { HTTP_HEADERS_MECHANISM } from "./jws.ts";
import { signedBytes } from "./signer.ts";

/** Headers a signature covers whenever the request carries them. */
export const SIGNED_WHEN_PRESENT = [
  "psu-id",
  "psu-corporate-id",
  "tpp-redirect-uri",
  "tpp-nok-redirect-uri",
  "consent-id",
] as const;

/** A TPP's signing certificate and key. */
export interface TppSigner {
  /** DER of the certificate. */
  certificate: Uint8Array<ArrayBuffer>;
  /** Serial number, hex. */
  serial: string;
  /** The issuer's DN, as the Berlin Group keyId names it. */
  issuer: string;
  keyType: "RSA" | "EC";
  /** The PKCS#8 private key. */
  pkcs8: Uint8Array<ArrayBuffer>;
}

/** A request to sign. */
export interface RequestToSign {
  method: string;
  /** Path and query as sent, for example `/v1/payments/domestic`. */
  target: string;
  /** The headers sent; names in any case. */
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer>;
  /** The names covered, lower case (default: see the module comment). */
  cover?: readonly string[];
  /** Signing time in milliseconds since the epoch (default: now). */
  now?: number;
}

/** Reads a signer from its certificate (PEM or base64) and PKCS#8 private key (PEM). */
export async function loadTppSigner(certificate: string, key: string): Promise<TppSigner> {
  const { X509Certificate } = await loadX509();
  const der = certificateBytes(certificate);
  const cert = new X509Certificate(der);
  const body = /-----BEGIN PRIVATE KEY-----([\s\S]*?)-----END PRIVATE KEY-----/.exec(key);
  if (!body) throw new Error("The key must be a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)");
  const algorithm = cert.publicKey.algorithm.name;
  if (algorithm !== "RSASSA-PKCS1-v1_5" && algorithm !== "RSA-PSS" && algorithm !== "ECDSA") {
    throw new Error(`The certificate's key ("${algorithm}") is neither RSA nor EC`);
  }
  return {
    certificate: der,
    serial: cert.serialNumber,
    issuer: cert.issuer,
    keyType: algorithm === "ECDSA" ? "EC" : "RSA",
    pkcs8: Uint8Array.fromBase64(body[1].replace(/\s+/g, "")),
  };
}

/** Signs with the signer's key under a JWS algorithm name (PS256, RS256, ES256). */
async function sign(signer: TppSigner, alg: string, data: Uint8Array<ArrayBuffer>) {
  const hash = `SHA-${alg.slice(2)}`;
  if (alg.startsWith("ES")) {
    const key = await crypto.subtle.importKey(
      "pkcs8",
      signer.pkcs8,
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign"],
    );
    return new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash }, key, data));
  }
  const name = alg.startsWith("PS") ? "RSA-PSS" : "RSASSA-PKCS1-v1_5";
  const key = await crypto.subtle.importKey("pkcs8", signer.pkcs8, { name, hash }, false, [
    "sign",
  ]);
  return new Uint8Array(
    await crypto.subtle.sign({ name, saltLength: Number(alg.slice(2)) / 8 }, key, data),
  );
}

/** The request's headers in lower case, with its Digest. */
async function withDigest(request: RequestToSign): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.digest ??= await digestOf(request.body);
  return headers;
}

function covered(headers: Record<string, string>, extra: string[] = []): string[] {
  return [
    "(request-target)",
    ...extra,
    "digest",
    "x-request-id",
    ...SIGNED_WHEN_PRESENT.filter((name) => name in headers),
  ];
}

/**
 * The headers to send for a JWS-signed request: the request's own (lower case), `digest` and
 * `x-jws-signature` (PS256 for an RSA key, ES256 for EC; `b64: false`, sigT, sigD, x5c).
 */
export async function signJwsRequest(
  signer: TppSigner,
  request: RequestToSign,
): Promise<Record<string, string>> {
  const headers = await withDigest(request);
  const alg = signer.keyType === "EC" ? "ES256" : "PS256";
  const pars = request.cover ?? covered(headers);
  const protectedHeader = {
    alg,
    x5c: [signer.certificate.toBase64()],
    sigT: new Date(request.now ?? Date.now()).toISOString().replace(/\.\d{3}Z$/, "Z"),
    sigD: { mId: HTTP_HEADERS_MECHANISM, pars },
    b64: false,
    crit: ["sigT", "sigD", "b64"],
  };
  const encoded = new TextEncoder().encode(JSON.stringify(protectedHeader))
    .toBase64({ alphabet: "base64url", omitPadding: true });
  const lines = signedBytes(pars, { ...request, headers: new Headers(headers) });
  const input = new Uint8Array([...new TextEncoder().encode(`${encoded}.`), ...lines]);
  const signature = await sign(signer, alg, input);
  return {
    ...headers,
    "x-jws-signature": `${encoded}..${
      signature.toBase64({ alphabet: "base64url", omitPadding: true })
    }`,
  };
}

/**
 * The headers to send for an HTTP-signed request (Berlin Group 1.3, draft-cavage): the request's
 * own (lower case), `date` (now, unless given), `digest`, `signature` (rsa-sha256, the
 * algorithm every Berlin Group verifier takes, so an RSA key only; keyId
 * `SN=<serial>,CA=<issuer DN>`) and `tpp-signature-certificate`.
 */
export async function signHttpRequest(
  signer: TppSigner,
  request: RequestToSign,
): Promise<Record<string, string>> {
  if (signer.keyType !== "RSA") {
    throw new Error(
      "An HTTP signature (rsa-sha256) needs an RSA key: sign with JWS (ES256) or mint the certificate with --key rsa",
    );
  }
  const headers = await withDigest(request);
  headers.date ??= new Date(request.now ?? Date.now()).toUTCString();
  const names = request.cover ?? covered(headers, ["date"]);
  const lines = signedBytes(names, { ...request, headers: new Headers(headers) });
  const signature = await sign(signer, "RS256", lines);
  const keyId = `SN=${signer.serial.toUpperCase()},CA=${signer.issuer}`;
  return {
    ...headers,
    signature: `keyId="${keyId}",algorithm="rsa-sha256",headers="${
      names.join(" ")
    }",signature="${signature.toBase64()}"`,
    "tpp-signature-certificate": signer.certificate.toBase64(),
  };
}
