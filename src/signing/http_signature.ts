/**
 * Berlin Group 1.3 HTTP signatures (draft-cavage-http-signatures): `Signature` with
 * `keyId="SN=<hex serial>,CA=<issuer DN>"` (serial also decimal, DN also percent-encoded),
 * `algorithm` (absent: the certificate key's; `hs2019` when the policy allows it), `headers` and
 * `signature`, and the
 * signer's certificate in `TPP-Signature-Certificate` (base64 DER). The signing string is one
 * `name: value` line per entry of `headers`, joined by "\n". A signature must cover the request
 * target and a time (the `Date` header or `(created)`, within a skew of the bank's clock): without
 * them a signature made for one path was good on another, and forever.
 */
import type { Group } from "../core/catalogue.ts";
import { GatewayError } from "../core/errors.ts";
import type { CertificateInfo } from "../pki/certificate.ts";
import type { TrustStore } from "../pki/trust.ts";
import {
  checkCoverage,
  checkSigner,
  type Coverage,
  signedBytes,
  type SignedRequest,
} from "./signer.ts";

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

/** `SN=<serial, hex or decimal>,CA=<issuer DN, optionally percent-encoded>`. */
const KEY_ID = /^SN=([0-9A-Fa-f]{1,64}),\s*CA=(.+)$/;

const HEADER = "Signature";
const CERTIFICATE_HEADER = "TPP-Signature-Certificate";
/** `name="value"`, or a number as draft-cavage writes `created` and `expires`. */
const PARAM = /\s*([A-Za-z]+)\s*=\s*(?:"([^"]*)"|([0-9]+(?:\.[0-9]+)?))\s*(?:,|$)/y;
/** A Unix time in seconds, as `created` and `expires` carry it. */
const UNIX_TIME = /^[0-9]{1,12}(\.[0-9]{1,9})?$/;
/** Pseudo-headers of draft-cavage besides `(request-target)`. */
const PSEUDO = ["(created)", "(expires)"];

/** Options of an {@link HttpSignatureVerifier}, from the policy. */
export interface HttpSignatureOptions {
  algorithms: readonly HttpSignatureAlgorithm[];
  coverage: Coverage;
  group: Group;
  /** Largest distance of the signed Date or `created` from the bank's clock, in milliseconds. */
  skewMs: number;
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

/**
 * The signature's time: `(created)` or the `Date` header must be covered, each one covered must
 * lie within `skewMs` of `now`, and an `expires` given must not have passed.
 */
function checkFreshness(
  names: readonly string[],
  params: Record<string, string>,
  request: SignedRequest,
  skewMs: number,
): void {
  if (!names.includes("date") && !names.includes("(created)")) {
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
    if (Math.abs(request.now - time) > skewMs) {
      throw invalid(
        `The signed ${name} is more than ${skewMs / 1000} s away from the bank's clock`,
      );
    }
  }
  if (params.expires !== undefined && Number(params.expires) * 1000 < request.now) {
    throw invalid("The Signature has expired");
  }
}

/** An RDN of a keyId's DN with its percent-encoding (`%20`, the Berlin Group example) undone. */
function percentDecoded(rdn: string): string {
  if (!rdn.includes("%")) return rdn;
  try {
    return decodeURIComponent(rdn);
  } catch {
    return rdn;
  }
}

/**
 * RDNs of a DN as a sorted list, so that order, case and spacing do not matter; a keyId's RDNs
 * are percent-decoded one by one (an encoded comma stays inside its RDN).
 */
function dnKey(dn: string, decode = false): string {
  return dn.split(/(?<!\\),/).map((rdn) => decode ? percentDecoded(rdn) : rdn)
    .map((rdn) => rdn.trim().toLowerCase().replace(/\s*=\s*/, "="))
    .filter((rdn) => rdn !== "").sort().join(",");
}

/**
 * Whether a keyId's serial names the certificate's: as a hex number (the Berlin Group form) or,
 * when it has only decimal digits, as a decimal one (what some libraries write).
 */
function sameSerial(written: string, serial: string): boolean {
  const actual = BigInt(`0x${serial}`);
  return BigInt(`0x${written}`) === actual ||
    (/^[0-9]+$/.test(written) && BigInt(written) === actual);
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

/** Verifies Berlin Group HTTP signatures; built once per operation. */
export class HttpSignatureVerifier {
  readonly #store: TrustStore;
  readonly #options: HttpSignatureOptions;

  constructor(store: TrustStore, options: HttpSignatureOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Verifies one request's signature; returns the signer's certificate. */
  async verify(
    value: string,
    request: SignedRequest,
    beforeCrypto?: () => Promise<void>,
  ): Promise<CertificateInfo> {
    const params = signatureParams(value);
    for (const name of ["keyId", "headers", "signature"]) {
      if (!params[name]) throw invalid(`Header "Signature" must carry ${name}="..."`);
    }
    if (params.algorithm === "") throw invalid('Header "Signature" has an empty algorithm=""');
    const named = params.algorithm?.toLowerCase() as HttpSignatureAlgorithm | undefined;
    if (named !== undefined && !this.#options.algorithms.includes(named)) {
      throw invalid(
        `The Signature algorithm must be one of ${
          this.#options.algorithms.join(", ")
        }, got "${params.algorithm}"`,
      );
    }
    const keyId = KEY_ID.exec(params.keyId);
    if (!keyId) {
      throw invalid('The Signature keyId must look like "SN=<hex serial>,CA=<issuer DN>"');
    }
    const names = params.headers.trim().toLowerCase().split(/\s+/);
    checkCoverage(
      names,
      request,
      { ...this.#options.coverage, pseudo: PSEUDO },
      (text) => invalid(`The Signature headers list ${text}`),
    );
    checkFreshness(names, params, request, this.#options.skewMs);
    const source = request.headers.get(CERTIFICATE_HEADER);
    if (!source) {
      throw new GatewayError(
        401,
        "CERTIFICATE_MISSING",
        `Header "${CERTIFICATE_HEADER}" must carry the signing certificate`,
        { path: CERTIFICATE_HEADER },
      );
    }
    const signer = await this.#store.certificate(source, {
      label: "signing certificate",
      path: CERTIFICATE_HEADER,
    });
    if (
      !sameSerial(keyId[1], signer.serial) || dnKey(keyId[2], true) !== dnKey(signer.cert.issuer)
    ) {
      throw invalid(
        `The Signature keyId names SN=${keyId[1]}, CA=${
          keyId[2]
        }; the certificate in "${CERTIFICATE_HEADER}" is SN=${signer.serial}, CA=${signer.cert.issuer}`,
      );
    }
    await checkSigner(this.#store, signer, {
      request,
      group: this.#options.group,
      path: CERTIFICATE_HEADER,
    });
    const algorithm = named ?? impliedAlgorithm(signer, this.#options.algorithms);
    await beforeCrypto?.();
    let key: CryptoKey;
    try {
      key = await this.#store.publicKey(signer, HTTP_SIGNATURE_ALGORITHMS[algorithm]);
    } catch {
      throw invalid(`The signing certificate's key does not fit the algorithm ${algorithm}`);
    }
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = Uint8Array.from(atob(params.signature), (c) => c.charCodeAt(0));
    } catch {
      throw invalid("The Signature signature must be base64");
    }
    const ok = await crypto.subtle.verify(
      algorithm === "hs2019" ? { name: "RSA-PSS", saltLength: 64 } : "RSASSA-PKCS1-v1_5",
      key,
      signature,
      signedBytes(names, request, {
        "(created)": params.created,
        "(expires)": params.expires,
      }),
    );
    if (!ok) {
      throw invalid(
        `The Signature signature value does not verify over ${
          names.join(", ")
        } with the signing certificate`,
      );
    }
    return signer;
  }
}
