/**
 * `consent_id`: Consent-ID is required on every account read, optional on payment initiation
 * (combined AIS/PIS session) and on the confirmation of funds, and, wherever it is sent, an id of
 * bounded length and safe characters (it addresses a consent resource on the core). A bank on the
 * PIIS consent model, whose funds checks run under a consent the PSU gave, sets `required: true`
 * for the group `piis`: the standard leaves the header optional there.
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
    required: z.boolean().default(false).describe(
      "Require Consent-ID also where the standard makes it optional (group piis under the PIIS consent model)",
    ),
    max_length: z.number().int().min(1).max(1024).default(128).describe(
      "Longest Consent-ID accepted, in characters",
    ),
  }),
  create(options, { operation }) {
    const required = requires(operation, "consent-id") ||
      (options.required && takes(operation, "consent-id"));
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
