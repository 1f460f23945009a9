/**
 * `http_signature`: verifies Berlin Group 1.3 HTTP signatures (`Signature` with keyId
 * SN/CA, rsa-sha256 and the `headers` list, certificate in `TPP-Signature-Certificate`), with the
 * same certificate checks and error codes as `jws_signature`. The signature must cover what the
 * policy lists (Digest and X-Request-ID at least); a time it covers (`date` or `(created)`) must
 * lie within a skew, and `require_time` makes one mandatory.
 */
import { z } from "zod";
import { defineCheck } from "../src/core/check.ts";
import { duration } from "../src/lib/fields.ts";
import {
  HTTP_SIGNATURE_ALGORITHMS,
  type HttpSignatureAlgorithm,
  HttpSignatureVerifier,
} from "../src/signing/http_signature.ts";
import { coverageProblems } from "../src/signing/signer.ts";
import { signatureFactory, signatureOptions } from "./_signature.ts";

const ALGORITHMS = Object.keys(HTTP_SIGNATURE_ALGORITHMS) as [
  HttpSignatureAlgorithm,
  ...HttpSignatureAlgorithm[],
];

export const httpSignature = defineCheck({
  key: "http_signature",
  description: "Verifies Berlin Group 1.3 HTTP signatures (Signature, TPP-Signature-Certificate)",
  options: signatureOptions({
    algorithms: z.array(z.enum(ALGORITHMS)).min(1).default(["rsa-sha256"]).describe(
      "Signature algorithms accepted; hs2019 (the algorithm follows from the key: RSASSA-PSS with SHA-512 for RSA) is off by default. A Signature without algorithm uses rsa-sha256 for an RSA key when it is accepted",
    ),
    time_skew: duration({ min: "1s", max: "1h" }).prefault("5m").describe(
      "Largest distance of a signed Date header or (created) from the bank's clock, for example 5m",
    ),
    require_time: z.boolean().default(false).describe(
      "Require the signature to cover a time, the Date header or (created), which the standard does not ask: a captured signature is then good only within time_skew. A time that is covered is held to time_skew either way",
    ),
  }),
  validate: coverageProblems,
  create: signatureFactory({
    check: "http_signature",
    header: "Signature",
    certificatePath: "TPP-Signature-Certificate",
    verifier: (store, options, scheme) =>
      new HttpSignatureVerifier(store, {
        ...scheme,
        algorithms: options.algorithms,
        skewMs: options.time_skew,
        requireTime: options.require_time,
      }),
  }),
});
