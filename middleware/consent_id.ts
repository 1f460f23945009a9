/**
 * `consent_id`: Consent-ID is required on every account read, optional on payment initiation
 * (combined AIS/PIS session) and, wherever it is sent, an id of bounded length and safe
 * characters (it addresses a consent resource on the core).
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, missingHeader, requires, takes } from "./_headers.ts";
import { idProblem } from "../src/lib/ids.ts";

export const consentId = defineCheck({
  key: "consent_id",
  description: "Consent-ID is required on account reads and is a safe id",
  options: modal({
    max_length: z.number().int().min(1).max(1024).default(128).describe(
      "Longest Consent-ID accepted, in characters",
    ),
  }),
  create(options, { operation }) {
    const required = requires(operation, "consent-id");
    if (!required && !takes(operation, "consent-id")) return undefined;
    return (c, next) => {
      const value = requestHeaders(c).get("consent-id");
      if (value === null) {
        if (required) throw missingHeader("consent-id", c);
        return next();
      }
      const problem = idProblem(value, options.max_length);
      if (problem) throw headerError("consent-id", `Header "Consent-ID" ${problem}`);
      return next();
    };
  },
});
