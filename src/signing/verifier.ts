/**
 * The verifier core both request-signature schemes run: read the scheme's header, check what it
 * covers and when it was made, find and check the signer's certificate, bind the body (the
 * caller's Digest check), then check the signature value. A scheme supplies the steps that differ
 * (`x-jws-signature` in jws.ts, `Signature` in http_signature.ts); the order and the shared
 * texts live here once.
 */
import type { Group } from "../psd2/catalogue.ts";
import { GatewayError } from "../psd2/errors.ts";
import type { CertificateInfo } from "../pki/certificate.ts";
import type { TrustStore } from "../pki/trust.ts";
import {
  checkCoverage,
  checkSigner,
  type Coverage,
  type SignatureVerifier,
  type SignedRequest,
} from "./signer.ts";

/** What a scheme read from its header before the certificate is known. */
export interface ReadSignature {
  /** The covered names, lower case, in the order they are signed. */
  names: readonly string[];
}

/** The signer's certificate and the intermediates sent with it. */
export interface FoundSigner {
  signer: CertificateInfo;
  extra?: CertificateInfo[];
}

/** The algorithm a signature is checked with, once the signer is known. */
export interface Algorithm {
  /** The JWS name of the key import (`PS256`, `RS256`, ...). */
  jws: string;
  /** How errors name it, for example `the algorithm rsa-sha256` or `the JWS "alg" PS256`. */
  label: string;
}

/** What the core needs of a scheme's options. */
export interface SchemeOptions {
  coverage: Coverage;
  group: Group;
}

/** How a scheme names itself in errors, and the pseudo-headers it knows. */
export interface Scheme {
  /** The header that carries the signature: the `path` of SIGNATURE_INVALID. */
  header: string;
  /** The header that carries the signer's certificate: the `path` of certificate errors. */
  certificate: string;
  /** The signature as texts name it: `The Signature`, `The JWS`. */
  subject: string;
  /** Its list of covered names as texts name it: `The Signature headers list`. */
  list: string;
  /** Pseudo-headers it may cover besides `(request-target)`, for example `(created)`. */
  pseudo?: readonly string[];
}

/** A request signature verifier: the core's order, a scheme's steps. Built once per operation. */
export abstract class RequestSignatureVerifier<
  Read extends ReadSignature,
  Options extends SchemeOptions = SchemeOptions,
> implements SignatureVerifier {
  protected readonly store: TrustStore;
  protected readonly options: Options;
  /** How the scheme names itself. */
  protected abstract readonly scheme: Scheme;
  /** The options' coverage with the scheme's pseudo-headers, made at the first request. */
  #coverage?: Coverage;

  constructor(store: TrustStore, options: Options) {
    this.store = store;
    this.options = options;
  }

  /** Reads the header value: everything that can be judged without the certificate. */
  protected abstract read(value: string, request: SignedRequest): Read;
  /** Checks the signature's time against the bank's clock. */
  protected abstract checkTime(read: Read, request: SignedRequest): void;
  /** Finds the signer's certificate the signature names. */
  protected abstract findSigner(read: Read, request: SignedRequest): Promise<FoundSigner>;
  /** The algorithm the signature is checked with. */
  protected abstract algorithm(read: Read, signer: CertificateInfo): Algorithm;
  /** Whether the signature value verifies with `key`, imported for `algorithm`. */
  protected abstract matches(
    read: Read,
    key: CryptoKey,
    request: SignedRequest,
    algorithm: Algorithm,
  ): Promise<boolean>;

  /**
   * Verifies one request's signature; returns the signer's certificate. `beforeCrypto` runs after
   * the header and certificate checks, before the signature value is checked (the caller's Digest
   * check goes there).
   */
  async verify(
    value: string,
    request: SignedRequest,
    beforeCrypto?: () => Promise<void>,
  ): Promise<CertificateInfo> {
    const { scheme, options } = this;
    const invalid = (text: string) =>
      new GatewayError(401, "SIGNATURE_INVALID", text, { path: scheme.header });
    const read = this.read(value, request);
    checkCoverage(
      read.names,
      request,
      this.#coverage ??= { ...options.coverage, pseudo: scheme.pseudo },
      (text) => invalid(`${scheme.list} ${text}`),
    );
    this.checkTime(read, request);
    const { signer, extra } = await this.findSigner(read, request);
    await checkSigner(this.store, signer, {
      request,
      group: options.group,
      path: scheme.certificate,
      extra,
    });
    const algorithm = this.algorithm(read, signer);
    await beforeCrypto?.();
    let key: CryptoKey;
    try {
      key = await this.store.publicKey(signer, algorithm.jws);
    } catch {
      throw invalid(`The signing certificate's key does not fit ${algorithm.label}`);
    }
    if (!await this.matches(read, key, request, algorithm)) {
      throw invalid(
        `${scheme.subject} signature value does not verify over ${
          read.names.join(", ")
        } with the signing certificate`,
      );
    }
    return signer;
  }
}

/**
 * Whether `instant` lies more than `skewMs` from `now` either way: a time ahead could be held back
 * and replayed for longer than the window.
 */
export function outsideSkew(now: number, instant: number, skewMs: number): boolean {
  return Math.abs(now - instant) > skewMs;
}
