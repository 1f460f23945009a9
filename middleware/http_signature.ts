/**
 * `http_signature`: verifies Berlin Group 1.3 HTTP signatures (`Signature` with keyId
 * SN/CA, rsa-sha256 and the `headers` list, certificate in `TPP-Signature-Certificate`), with the
 * same certificate checks and error codes as `jws_signature`.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/check.ts";
import { GatewayError } from "../src/errors.ts";
import { trustStore } from "../src/pki/trust.ts";
import { requireMatchingDigest } from "../src/signing/digest.ts";
import {
  HTTP_SIGNATURE_ALGORITHMS,
  type HttpSignatureAlgorithm,
  HttpSignatureVerifier,
} from "../src/signing/http_signature.ts";
import {
  coverageProblems,
  identifySigner,
  signatureFields,
  signedRequest,
} from "../src/signing/signer.ts";

const MINIMUM = ["digest", "x-request-id"];
const ALGORITHMS = Object.keys(HTTP_SIGNATURE_ALGORITHMS) as [
  HttpSignatureAlgorithm,
  ...HttpSignatureAlgorithm[],
];

export const httpSignature = defineCheck({
  key: "http_signature",
  description: "Verifies Berlin Group 1.3 HTTP signatures (Signature, TPP-Signature-Certificate)",
  options: modal({
    ...signatureFields(MINIMUM),
    algorithms: z.array(z.enum(ALGORITHMS)).min(1).default(["rsa-sha256"]).describe(
      "Signature algorithms accepted",
    ),
  }),
  validate: (options) => coverageProblems(options.cover, MINIMUM),
  create(options, { operation, sections, services }) {
    const verifier = new HttpSignatureVerifier(trustStore(sections), {
      algorithms: options.algorithms,
      coverage: { always: options.cover, whenPresent: options.cover_when_present },
      group: operation.group,
    });
    const missing = new GatewayError(
      401,
      "SIGNATURE_MISSING",
      'Header "Signature" is required for this operation',
      { path: "Signature" },
    );
    return async (c, next) => {
      const value = c.req.raw.headers.get("signature");
      if (value === null) {
        if (options.required) throw missing;
        return next();
      }
      const signer = await verifier.verify(
        value,
        signedRequest(c, services.now()),
        () => requireMatchingDigest(c, "Signature"),
      );
      identifySigner(c, signer);
      return next();
    };
  },
});
