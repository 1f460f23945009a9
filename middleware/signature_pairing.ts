/**
 * `signature_pairing`: Digest is sent if and only if a signature header (x-jws-signature or the
 * HTTP Signature header) is. Verifying them is the signature checks' business; this rule only
 * refuses one without the other.
 */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, takes } from "./_headers.ts";
import { GatewayError } from "../src/psd2/errors.ts";

const SIGNATURES = ["x-jws-signature", "signature"];

export const signaturePairing = defineCheck({
  key: "signature_pairing",
  description: "Digest and a signature header travel together",
  options: modal({}),
  create(_options, { operation }) {
    const signatures = SIGNATURES.filter((name) => takes(operation, name));
    if (!takes(operation, "digest") || signatures.length === 0) return undefined;
    return (c, next) => {
      const headers = requestHeaders(c);
      const digest = headers.has("digest");
      const signed = signatures.some((name) => headers.has(name));
      if (signed && !digest) {
        throw headerError("digest", 'Header "Digest" must be sent with the signature header');
      }
      if (digest && !signed) {
        throw new GatewayError(
          401,
          "SIGNATURE_MISSING",
          'Header "Digest" was sent without a signature header ("x-jws-signature" or "Signature")',
          { path: "x-jws-signature" },
        );
      }
      return next();
    };
  },
});
