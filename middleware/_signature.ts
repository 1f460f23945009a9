/**
 * What the two request-signature checks (`jws_signature`, `http_signature`) share: their common
 * options, the factory around a scheme's verifier (trust store, certificate guard), the signed
 * Digest checked against the body once, and the middleware around a verifier.
 */
import type { z } from "zod";
import {
  type BuildContext,
  type GatewayContext,
  type Middleware,
  modal,
} from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { checkDigest } from "../src/signing/digest.ts";
import { signatureFields, type SignatureVerifier } from "../src/signing/signer.ts";
import type { SchemeOptions } from "../src/signing/verifier.ts";
import { type TrustStore, trustStore } from "../src/pki/trust.ts";
import {
  type CertificateGuard,
  certificateGuard,
  certificateUseFields,
  type CertificateUseOptions,
} from "../src/pki/certificate_use.ts";
import type {} from "./digest.ts"; // digestVerified
import type {} from "./tpp_certificate.ts"; // tppCertificate

/**
 * The options of a signature check: `mode`, what a signature must cover, the scheme's own
 * options, then the signing certificate's use (QC types, key usage, revocation).
 */
export function signatureOptions<Shape extends z.ZodRawShape>(scheme: Shape) {
  return modal({ ...signatureFields(), ...scheme, ...certificateUseFields("signing") });
}

/** The resolved options every signature check has. */
export interface SignatureCheckOptions extends CertificateUseOptions {
  required: boolean;
  cover: string[];
  cover_when_present: string[];
}

/**
 * The factory of a signature check: the scheme's verifier over the policy's trust store and
 * coverage, in the middleware of {@link signatureMiddleware}, with the check's certificate guard.
 */
export function signatureFactory<Options extends SignatureCheckOptions>(spec: {
  /** The policy key, which revocation findings name. */
  check: string;
  /** The signature header as the documents write it, for example `x-jws-signature`. */
  header: string;
  /** The header that carries the signing certificate (the `path` of its errors). */
  certificatePath: string;
  verifier(store: TrustStore, options: Options, scheme: SchemeOptions): SignatureVerifier;
}): (options: Options, context: BuildContext) => Middleware {
  return (options, { operation, sections, services }) => {
    const store = trustStore(sections);
    const scheme = {
      coverage: { always: options.cover, whenPresent: options.cover_when_present },
      group: operation.group,
    };
    return signatureMiddleware({
      verifier: spec.verifier(store, options, scheme),
      header: spec.header,
      required: options.required,
      now: services.now,
      guard: certificateGuard(
        options,
        {
          kind: "signing",
          label: "signing certificate",
          path: spec.certificatePath,
          check: spec.check,
        },
        { store, sections, services, group: operation.group },
      ),
    });
  };
}

/**
 * For the signature checks: the signed Digest must match the body. Done once per request (the
 * `digest` check marks it done); a mismatch here is 401 SIGNATURE_INVALID.
 */
export async function requireMatchingDigest(c: GatewayContext, path: string): Promise<void> {
  if (c.get("digestVerified")) return;
  const value = requestHeaders(c).get("digest");
  if (value === null) return;
  try {
    await checkDigest(value, c.get("body"));
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    throw new GatewayError(
      401,
      "SIGNATURE_INVALID",
      `The signed "digest" header does not match the request body: ${error.message}`,
      { path },
    );
  }
  c.set("digestVerified", true);
}

/**
 * The middleware of a signature check: verifies the signature header when sent (the signed
 * Digest against the body before the signature value), requires it where the policy says, and
 * lets the signer identify the TPP when nothing else did.
 */
export function signatureMiddleware(options: {
  verifier: SignatureVerifier;
  /** The signature header as the documents write it, for example `x-jws-signature`. */
  header: string;
  required: boolean;
  now: () => number;
  /** The checks of the check's policy on the signer's certificate (revocation, type, usage). */
  guard?: CertificateGuard;
}): Middleware {
  const { verifier, header } = options;
  const missing = new GatewayError(
    401,
    "SIGNATURE_MISSING",
    `Header "${header}" is required for this operation`,
    { path: header },
  );
  return async (c, next) => {
    const value = requestHeaders(c).get(header);
    if (value === null) {
      if (options.required) throw missing;
      return next();
    }
    const url = c.req.url;
    const signer = await verifier.verify(value, {
      method: c.req.method,
      target: url.slice(url.indexOf("/", url.indexOf("//") + 2)),
      headers: c.req.raw.headers,
      now: options.now(),
      transportTpp: c.get("tppCertificate")?.organizationId,
    }, () => requireMatchingDigest(c, header));
    if (options.guard) await options.guard(signer);
    if (!c.get("tpp") && signer.organizationId) {
      c.set("tpp", { id: signer.organizationId, roles: signer.roles, domains: signer.domains });
    }
    return next();
  };
}
