/**
 * Payment initiation bodies, one per payment-service: a single payment (the field table of the
 * interface), a bulk payment (a non-empty list of payments under one debtor account) and a
 * periodic payment (a single payment plus its Berlin Group schedule fields).
 */
import { z } from "zod";
import { accountReference } from "./account_reference.ts";
import { amount } from "./amount.ts";
import { type BodyOptions, isoDate, object, text } from "./text.ts";

/** The interface's BICFI pattern. */
export const BICFI = /^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$/;

/** Frequencies of a periodic payment (Berlin Group). */
export const FREQUENCIES = [
  "Daily",
  "Weekly",
  "EveryTwoWeeks",
  "Monthly",
  "EveryTwoMonths",
  "Quarterly",
  "SemiAnnual",
  "Annual",
  "MonthlyVariable",
] as const;

const DAY = 'must be a day of the month from "1" to "31"';

/** Today's earliest calendar date anywhere, for "not in the past" rules. */
export type Today = () => string;

function notPast(today: Today) {
  return isoDate().superRefine((value, ctx) => {
    if (value < today()) {
      ctx.addIssue({
        code: "custom",
        message: "must not be in the past",
        params: { code: "EXECUTION_DATE_INVALID" },
      });
    }
  });
}

function address(options: BodyOptions) {
  return object({
    streetName: text(70, options).optional(),
    // The interface spells it so; the Berlin Group spelling is accepted too.
    buildingnNumber: text(16, options).optional(),
    buildingNumber: text(16, options).optional(),
    townName: text(35, options).optional(),
    postCode: text(16, options).optional(),
    country: z.string().regex(/^[A-Z]{2}$/, {
      error: "must be an ISO 3166 country code like GE",
    }),
  }, options);
}

/** The fields of one payment besides debtorAccount (also the entries of a bulk payment). */
function paymentFields(options: BodyOptions) {
  return {
    endToEndIdentification: text(35, options).optional(),
    instructedAmount: amount(options, { positive: true }),
    creditorAccount: accountReference(options),
    creditorAgent: z.string().regex(BICFI, {
      error: "must be a BIC like AAAADEBBXXX (6 letters, 2 letters or digits, optional 3 more)",
    }).optional(),
    creditorAgentName: text(140, options).optional(),
    creditorName: text(70, options),
    creditorAddress: address(options).optional(),
    remittanceInformationUnstructured: text(140, options).optional(),
  };
}

/** The body of a single payment (`payments`). */
export function singlePayment(options: BodyOptions) {
  return object({ debtorAccount: accountReference(options), ...paymentFields(options) }, options);
}

/** The body of a bulk payment (`bulk-payments`). */
export function bulkPayment(options: BodyOptions, today: Today) {
  return object({
    batchBookingPreferred: z.boolean().optional(),
    debtorAccount: accountReference(options),
    requestedExecutionDate: notPast(today).optional(),
    payments: z.array(object(paymentFields(options), options)).min(1).max(options.maxBulk),
  }, options);
}

/** The body of a periodic payment (`periodic-payments`). */
export function periodicPayment(options: BodyOptions, today: Today) {
  return object({
    debtorAccount: accountReference(options),
    ...paymentFields(options),
    startDate: notPast(today),
    endDate: isoDate().optional(),
    executionRule: z.enum(["following", "preceding"]).optional(),
    frequency: z.enum(FREQUENCIES),
    dayOfExecution: z.union([
      z.string().regex(/^(0?[1-9]|[12][0-9]|3[01])$/, { error: DAY }),
      z.int({ error: DAY }).min(1, { error: DAY }).max(31, { error: DAY }),
    ], { error: DAY }).optional(),
  }, options).superRefine((payment, ctx) => {
    if (payment.endDate !== undefined && payment.endDate < payment.startDate) {
      ctx.addIssue({
        code: "custom",
        path: ["endDate"],
        message: "must not be before startDate",
        params: { code: "EXECUTION_DATE_INVALID" },
      });
    }
  });
}
