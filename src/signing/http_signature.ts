/**
 * Berlin Group 1.3 HTTP signatures (draft-cavage-http-signatures): `Signature` with
 * `keyId="SN=<hex serial>,CA=<issuer DN>"` (key_id.ts), `algorithm` (absent: the certificate
 * key's; `hs2019` when the policy allows it), `headers` and `signature`, and the signer's
 * certificate in `TPP-Signature-Certificate` (base64 DER). The signing string is one
 * `name: value` line per entry of `headers`, joined by "\n". What a signature must cover is the
 * policy's (the standard's minimum by default); a time it covers, the `Date` header or
 * `(created)`, must lie within a skew of the bank's clock, and the policy may require one.
 */
import { base64Bytes } from "../lib/base64.ts";
import { GatewayError } from "../psd2/errors.ts";
import type { CertificateInfo } from "../pki/certificate.ts";
import { type KeyId, namesCertificate, parseKeyId } from "./key_id.ts";
import { signedBytes, type SignedRequest } from "./signer.ts";
import { verifyValue } from "./value.ts";
import {
  type Algorithm,
  outsideSkew,
  RequestSignatureVerifier,
  type SchemeOptions,
} from "./verifier.ts";

/**
 * draft-cavage algorithms, with the JWS algorithm of the same key use. `hs2019` takes the
 * algorithm from the key (draft-cavage-12): for an RSA key RSASSA-PSS with SHA-512 and a 64-byte
 * salt, as the draft recommends and Python httpsig signs it.
 */
export const HTTP_SIGNATURE_ALGORITHMS = {
  "rsa-sha256": "RS256",
  "rsa-sha512": "RS512",
  "hs2019": "PS512",
} as const;
export type HttpSignatureAlgorithm = keyof typeof HTTP_SIGNATURE_ALGORITHMS;

const HEADER = "Signature";
const CERTIFICATE_HEADER = "TPP-Signature-Certificate";
/** `name="value"`, or a number as draft-cavage writes `created` and `expires`. */
const PARAM = /\s*([A-Za-z]+)\s*=\s*(?:"([^"]*)"|([0-9]+(?:\.[0-9]+)?))\s*(?:,|$)/y;
/** A Unix time in seconds, as `created` and `expires` carry it. */
const UNIX_TIME = /^[0-9]{1,12}(\.[0-9]{1,9})?$/;

/** Options of an {@link HttpSignatureVerifier}, from the policy. */
export interface HttpSignatureOptions extends SchemeOptions {
  algorithms: readonly HttpSignatureAlgorithm[];
  /** Largest distance of the signed Date or `created` from the bank's clock, in milliseconds. */
  skewMs: number;
  /** Whether a signature must cover a time (`date` or `(created)`); the standard does not ask it. */
  requireTime?: boolean;
}

function invalid(text: string, path = HEADER): GatewayError {
  return new GatewayError(401, "SIGNATURE_INVALID", text, { path });
}

/** The parameters of a Signature header; malformed: 401 SIGNATURE_INVALID. */
export function signatureParams(value: string): Record<string, string> {
  const params: Record<string, string> = {};
  PARAM.lastIndex = 0;
  while (PARAM.lastIndex < value.length) {
    const start = PARAM.lastIndex;
    const match = PARAM.exec(value);
    if (!match || PARAM.lastIndex === start) {
      throw invalid('Header "Signature" must be a list of name="value" parameters');
    }
    const name = match[1];
    if (name in params) throw invalid(`Header "Signature" repeats the parameter "${name}"`);
    params[name] = match[2] ?? match[3];
  }
  return params;
}

/** A Signature header read: its parameters, keyId and covered names. */
interface ReadHttpSignature {
  /** The covered names, lower case. */
  names: string[];
  params: Record<string, string>;
  keyId: KeyId;
  /** The algorithm named; `undefined` when the certificate's key decides. */
  named?: HttpSignatureAlgorithm;
}

/** Verifies Berlin Group HTTP signatures; built once per operation. */
export class HttpSignatureVerifier
  extends RequestSignatureVerifier<ReadHttpSignature, HttpSignatureOptions> {
  protected readonly scheme = {
    header: HEADER,
    certificate: CERTIFICATE_HEADER,
    subject: "The Signature",
    list: "The Signature headers list",
    pseudo: ["(created)", "(expires)"],
  };

  protected read(value: string): ReadHttpSignature {
    const params = signatureParams(value);
    for (const name of ["keyId", "headers", "signature"]) {
      if (!params[name]) throw invalid(`Header "Signature" must carry ${name}="..."`);
    }
    if (params.algorithm === "") throw invalid('Header "Signature" has an empty algorithm=""');
    const named = params.algorithm?.toLowerCase() as HttpSignatureAlgorithm | undefined;
    const { algorithms } = this.options;
    if (named !== undefined && !algorithms.includes(named)) {
      throw invalid(
        `The Signature algorithm must be one of ${
          algorithms.join(", ")
        }, got "${params.algorithm}"`,
      );
    }
    const keyId = parseKeyId(params.keyId);
    if (!keyId) {
      throw invalid('The Signature keyId must look like "SN=<hex serial>,CA=<issuer DN>"');
    }
    return { params, keyId, named, names: params.headers.trim().toLowerCase().split(/\s+/) };
  }

  /**
   * The signature's time: each of `(created)` and the `Date` header that is covered must lie
   * within the skew of the bank's clock (one of them must be covered when the policy says so),
   * and an `expires` given must not have passed.
   */
  protected checkTime({ names, params }: ReadHttpSignature, request: SignedRequest): void {
    const { skewMs, requireTime } = this.options;
    if (requireTime && !names.includes("date") && !names.includes("(created)")) {
      throw invalid('The Signature headers list must cover "date" or "(created)"');
    }
    const times: [string, number][] = [];
    for (const name of ["created", "expires"]) {
      if (names.includes(`(${name})`) && params[name] === undefined) {
        throw invalid(`The Signature covers "(${name})" but has no ${name} parameter`);
      }
      if (params[name] !== undefined && !UNIX_TIME.test(params[name])) {
        throw invalid(`The Signature ${name} must be a Unix time in seconds`);
      }
    }
    if (names.includes("(created)")) times.push(["created", Number(params.created) * 1000]);
    if (names.includes("date")) {
      const date = Date.parse(request.headers.get("date") ?? "");
      if (Number.isNaN(date)) {
        throw invalid(
          'Header "Date" must be an HTTP date like Tue, 07 Jun 2026 20:51:35 GMT',
          "Date",
        );
      }
      times.push(["Date", date]);
    }
    for (const [name, time] of times) {
      if (outsideSkew(request.now, time, skewMs)) {
        throw invalid(
          `The signed ${name} is more than ${skewMs / 1000} s away from the bank's clock`,
        );
      }
    }
    if (params.expires !== undefined && Number(params.expires) * 1000 < request.now) {
      throw invalid("The Signature has expired");
    }
  }

  protected async findSigner(
    { keyId }: ReadHttpSignature,
    request: SignedRequest,
  ) {
    const source = request.headers.get(CERTIFICATE_HEADER);
    if (!source) {
      throw new GatewayError(
        401,
        "CERTIFICATE_MISSING",
        `Header "${CERTIFICATE_HEADER}" must carry the signing certificate`,
        { path: CERTIFICATE_HEADER },
      );
    }
    const signer = await this.store.certificate(source, {
      label: "signing certificate",
      path: CERTIFICATE_HEADER,
    });
    if (!namesCertificate(keyId, signer)) {
      throw invalid(
        `The Signature keyId names SN=${keyId.serial}, CA=${keyId.issuer}; the certificate in "${CERTIFICATE_HEADER}" is SN=${signer.serial}, CA=${signer.cert.issuer}`,
      );
    }
    return { signer };
  }

  /** The algorithm named, or the one the certificate's key implies (an RSA key: rsa-sha256). */
  protected algorithm({ named }: ReadHttpSignature, signer: CertificateInfo) {
    const algorithm = named ?? impliedAlgorithm(signer, this.options.algorithms);
    return { jws: HTTP_SIGNATURE_ALGORITHMS[algorithm], label: `the algorithm ${algorithm}` };
  }

  protected async matches(
    { params, names }: ReadHttpSignature,
    key: CryptoKey,
    request: SignedRequest,
    { jws }: Algorithm,
  ): Promise<boolean> {
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = base64Bytes(params.signature);
    } catch {
      throw invalid("The Signature signature must be base64");
    }
    return await verifyValue(
      jws,
      key,
      signature,
      signedBytes(names, request, { "(created)": params.created, "(expires)": params.expires }),
    );
  }
}

/** The algorithm a Signature without `algorithm` uses: the one the certificate's key implies. */
function impliedAlgorithm(
  signer: CertificateInfo,
  allowed: readonly HttpSignatureAlgorithm[],
): HttpSignatureAlgorithm {
  const key = signer.cert.publicKey.algorithm.name;
  if (!key.startsWith("RSA")) {
    throw invalid(
      `The Signature has no algorithm and the signing certificate's key is ${key}; only RSA keys are verified`,
    );
  }
  if (!allowed.includes("rsa-sha256")) {
    throw invalid(
      `The Signature has no algorithm; the signing certificate's RSA key implies rsa-sha256, which is not one of ${
        allowed.join(", ")
      }`,
    );
  }
  return "rsa-sha256";
}
