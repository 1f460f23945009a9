/**
 * `digest`: checks the Digest header against the exact body bytes `body_limit` read
 * (SHA-256 or SHA-512; empty body: the hash of nothing). Wrong value, unknown algorithm or
 * malformed header: 400 FORMAT_ERROR naming the header.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { formatError } from "../src/psd2/errors.ts";
import { checkDigest, DIGEST_ALGORITHMS } from "../src/signing/digest.ts";

/** What the Digest checks keep per request. */
export interface DigestVariables {
  /** True once the Digest header was checked against the body bytes (here or by a signature check). */
  digestVerified?: boolean;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends DigestVariables {}
}

export const digest = defineCheck({
  key: "digest",
  description: "Checks the Digest header against the request body",
  options: modal({
    required: z.boolean().default(false).describe(
      "Reject requests without Digest (400 FORMAT_ERROR); when false Digest is checked when present",
    ),
    algorithms: z.array(z.enum(DIGEST_ALGORITHMS)).min(1).default([...DIGEST_ALGORITHMS])
      .describe("Digest algorithms accepted"),
  }),
  create(options) {
    const missing = formatError("Digest", 'Header "Digest" is required for this operation');
    return async (c, next) => {
      const value = requestHeaders(c).get("digest");
      if (value === null) {
        if (options.required) throw missing;
        return next();
      }
      await checkDigest(value, c.get("body"), options.algorithms);
      c.set("digestVerified", true);
      return next();
    };
  },
});
