/**
 * The consent request body: access, recurringIndicator, validUntil, frequencyPerDay and
 * combinedServiceIndicator, all required. The TPP-dependent maximum of frequencyPerDay is judged
 * per request by `body_schema` (a TPP may have a bilateral agreement). Besides the lists of
 * account references and the all-accounts forms, access may carry the Berlin Group's
 * `additionalInformation` (ownerName, trustedBeneficiaries) and `restrictedTo` (account types).
 */
import { z } from "zod";
import { accountReference } from "./account_reference.ts";
import { type BodyOptions, isoDate, MAX_LIST, object } from "./text.ts";
import type { Today } from "./payment.ts";

const ALL = z.enum(["allAccounts", "allAccountsWithOwnerName"]);

/** ExternalCashAccountType1Code (ISO 20022): four capital letters, like CACC or SVGS. */
export const CASH_ACCOUNT_TYPE = /^[A-Z]{4}$/;

/** The fields that ask for access; `additionalInformation` and `restrictedTo` only qualify it. */
const ACCESS = [
  "accounts",
  "balances",
  "transactions",
  "availableAccounts",
  "availableAccountsWithBalance",
  "allPsd2",
] as const;
const LISTS = ["accounts", "balances", "transactions"] as const;

/** The access object: lists of account references, or the institution's "all accounts" forms. */
function access(options: BodyOptions) {
  const references = z.array(accountReference(options)).max(MAX_LIST);
  return object({
    accounts: references.optional(),
    balances: references.optional(),
    transactions: references.optional(),
    additionalInformation: object({
      ownerName: references.optional(),
      trustedBeneficiaries: references.optional(),
    }, options).optional(),
    availableAccounts: ALL.optional(),
    availableAccountsWithBalance: ALL.optional(),
    allPsd2: ALL.optional(),
    restrictedTo: z.array(
      z.string().regex(CASH_ACCOUNT_TYPE, {
        error: "must be an ISO 20022 cash account type of 4 capital letters, like CACC",
      }),
    ).min(1).max(MAX_LIST).optional(),
  }, options).superRefine((value, ctx) => {
    if (!ACCESS.some((key) => value[key] !== undefined)) {
      ctx.addIssue({
        code: "custom",
        message:
          "must request some access (accounts, balances, transactions or an all-accounts form)",
      });
    }
    // The standard: additionalInformation needs accounts, balances or transactions beside it;
    // restrictedTo only narrows consents that name no accounts.
    if (
      value.additionalInformation !== undefined && !LISTS.some((key) => value[key] !== undefined)
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["additionalInformation"],
        message: "must come with accounts, balances or transactions",
      });
    }
    if (value.restrictedTo !== undefined && LISTS.some((key) => (value[key]?.length ?? 0) > 0)) {
      ctx.addIssue({
        code: "custom",
        path: ["restrictedTo"],
        message: "must only be sent when accounts, balances and transactions name no account",
      });
    }
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
