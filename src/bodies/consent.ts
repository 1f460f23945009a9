/**
 * The consent request body: access, recurringIndicator, validUntil, frequencyPerDay and
 * combinedServiceIndicator, all required. The TPP-dependent maximum of frequencyPerDay is judged
 * per request by `body_schema` (a TPP may have a bilateral agreement).
 */
import { z } from "zod";
import { accountReference } from "./account_reference.ts";
import { type BodyOptions, isoDate, MAX_LIST, object } from "./text.ts";
import type { Today } from "./payment.ts";

const ALL = z.enum(["allAccounts", "allAccountsWithOwnerName"]);

/** The access object: lists of account references, or the institution's "all accounts" forms. */
function access(options: BodyOptions) {
  const references = z.array(accountReference(options)).max(MAX_LIST);
  return object({
    accounts: references.optional(),
    balances: references.optional(),
    transactions: references.optional(),
    availableAccounts: ALL.optional(),
    availableAccountsWithBalance: ALL.optional(),
    allPsd2: ALL.optional(),
  }, options).refine((value) => Object.values(value).some((v) => v !== undefined), {
    error: "must request some access (accounts, balances, transactions or an all-accounts form)",
  });
}

/** The body of a consent creation. */
export function consent(options: BodyOptions, today: Today) {
  return object({
    access: access(options),
    recurringIndicator: z.boolean(),
    validUntil: isoDate().superRefine((value, ctx) => {
      if (value < today()) {
        ctx.addIssue({
          code: "custom",
          message: "must not be in the past (9999-12-31 asks for the longest validity)",
          params: { code: "PERIOD_INVALID" },
        });
      }
    }),
    frequencyPerDay: z.int().min(1),
    combinedServiceIndicator: z.boolean(),
  }, options).superRefine((value, ctx) => {
    if (value.recurringIndicator === false && value.frequencyPerDay !== 1) {
      ctx.addIssue({
        code: "custom",
        path: ["frequencyPerDay"],
        message: "must be 1 for a one-off consent (recurringIndicator false)",
      });
    }
  });
}
