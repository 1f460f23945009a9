/**
 * `jws_signature`: verifies the detached JWS in `x-jws-signature` (alg allow-list, crit, b64,
 * sigT, sigD pars coverage, signer certificate trusted and of the transport certificate's TPP,
 * Digest bound to the body). Missing where required: 401 SIGNATURE_MISSING; any failure:
 * 401 SIGNATURE_INVALID saying which part failed (certificate problems: CERTIFICATE_*).
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { trustStore } from "../src/pki/trust.ts";
import { certificateGuard, certificateUseFields } from "../src/pki/certificate_use.ts";
import { JWS_ALGORITHMS, JwsVerifier } from "../src/signing/jws.ts";
import { coverageProblems, signatureFields } from "../src/signing/signer.ts";
import { signatureMiddleware } from "./_signature.ts";
import { duration } from "../src/policy/fields.ts";

const MINIMUM = ["(request-target)", "digest", "x-request-id"];

export const jwsSignature = defineCheck({
  key: "jws_signature",
  description: "Verifies the detached JWS request signature in x-jws-signature",
  options: modal({
    ...signatureFields(MINIMUM),
    algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).default(["PS256", "RS256", "ES256"])
      .describe("JWS algorithms accepted (none and HMAC never are)"),
    sigt_skew: duration({ min: "1s", max: "1h" }).prefault("5m").describe(
      "Largest distance of the signing time (sigT) from the bank's clock, for example 5m",
    ),
    ...certificateUseFields("signing"),
  }),
  validate: (options) => coverageProblems(options, MINIMUM),
  create(options, { operation, sections, services }) {
    const store = trustStore(sections);
    const verifier = new JwsVerifier(store, {
      algorithms: options.algorithms,
      sigtSkewSeconds: options.sigt_skew / 1000,
      coverage: { always: options.cover, whenPresent: options.cover_when_present },
      group: operation.group,
    });
    return signatureMiddleware({
      verifier,
      header: "x-jws-signature",
      required: options.required,
      now: services.now,
      guard: certificateGuard(
        options,
        {
          kind: "signing",
          label: "signing certificate",
          path: "x-jws-signature",
          check: "jws_signature",
        },
        { store, sections, services, group: operation.group },
      ),
    });
  },
});
