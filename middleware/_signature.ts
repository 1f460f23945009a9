/**
 * What the two request-signature checks (`jws_signature`, `http_signature`) share at request
 * time: the signed Digest checked against the body once, and the middleware around a verifier.
 */
import type { GatewayContext, Middleware } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { GatewayError } from "../src/core/errors.ts";
import { checkDigest } from "../src/signing/digest.ts";
import type { SignatureVerifier } from "../src/signing/signer.ts";
import type {} from "./digest.ts"; // digestVerified
import type {} from "./tpp_certificate.ts"; // tppCertificate
import type { CertificateGuard } from "../src/pki/certificate_use.ts";

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
