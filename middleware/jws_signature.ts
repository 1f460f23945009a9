/**
 * `jws_signature`: verifies the detached JWS in `x-jws-signature` (alg allow-list, crit, b64,
 * sigT, sigD pars coverage, signer certificate trusted and of the transport certificate's TPP,
 * Digest bound to the body). Missing where required: 401 SIGNATURE_MISSING; any failure:
 * 401 SIGNATURE_INVALID saying which part failed (certificate problems: CERTIFICATE_*).
 */
import { z } from "zod";
import { defineCheck } from "../src/core/check.ts";
import { JWS_ALGORITHMS, JwsVerifier } from "../src/signing/jws.ts";
import { coverageProblems } from "../src/signing/signer.ts";
import { duration } from "../src/lib/fields.ts";
import { signatureFactory, signatureOptions } from "./_signature.ts";

export const jwsSignature = defineCheck({
  key: "jws_signature",
  description: "Verifies the detached JWS request signature in x-jws-signature",
  options: signatureOptions({
    algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).default(["PS256", "RS256", "ES256"])
      .describe("JWS algorithms accepted (none and HMAC never are)"),
    sigt_skew: duration({ min: "1s", max: "1h" }).prefault("5m").describe(
      "Largest distance of the signing time (sigT) from the bank's clock, for example 5m",
    ),
  }),
  validate: coverageProblems,
  create: signatureFactory({
    check: "jws_signature",
    header: "x-jws-signature",
    certificatePath: "x-jws-signature",
    verifier: (store, options, scheme) =>
      new JwsVerifier(store, {
        ...scheme,
        algorithms: options.algorithms,
        sigtSkewSeconds: options.sigt_skew / 1000,
      }),
  }),
});
