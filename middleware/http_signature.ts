/**
 * `http_signature`: verifies Berlin Group 1.3 HTTP signatures (`Signature` with keyId
 * SN/CA, rsa-sha256 and the `headers` list, certificate in `TPP-Signature-Certificate`), with the
 * same certificate checks and error codes as `jws_signature`. The signature must cover the
 * request target, Digest, X-Request-ID and a time (`date` or `(created)`) within a skew.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { trustStore } from "../src/pki/trust.ts";
import { certificateGuard, certificateUseFields } from "../src/pki/certificate_use.ts";
import { duration } from "../src/policy/fields.ts";
import {
  HTTP_SIGNATURE_ALGORITHMS,
  type HttpSignatureAlgorithm,
  HttpSignatureVerifier,
} from "../src/signing/http_signature.ts";
import { coverageProblems, signatureFields } from "../src/signing/signer.ts";
import { signatureMiddleware } from "./_signature.ts";

const MINIMUM = ["(request-target)", "digest", "x-request-id"];
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
      "Signature algorithms accepted; hs2019 (the algorithm follows from the key: RSASSA-PSS with SHA-512 for RSA) is off by default. A Signature without algorithm uses rsa-sha256 for an RSA key when it is accepted",
    ),
    time_skew: duration({ min: "1s", max: "1h" }).prefault("5m").describe(
      "Largest distance of the signed Date header or (created) from the bank's clock, for example 5m; one of them must be signed",
    ),
    ...certificateUseFields("signing"),
  }),
  validate: (options) => coverageProblems(options, MINIMUM),
  create(options, { operation, sections, services }) {
    const store = trustStore(sections);
    const verifier = new HttpSignatureVerifier(store, {
      algorithms: options.algorithms,
      coverage: { always: options.cover, whenPresent: options.cover_when_present },
      group: operation.group,
      skewMs: options.time_skew,
    });
    return signatureMiddleware({
      verifier,
      header: "Signature",
      required: options.required,
      now: services.now,
      guard: certificateGuard(
        options,
        {
          kind: "signing",
          label: "signing certificate",
          path: "TPP-Signature-Certificate",
          check: "http_signature",
        },
        { store, sections, services, group: operation.group },
      ),
    });
  },
});
