/**
 * Payment initiation bodies, one per payment-service: a single payment (the field table of the
 * interface plus the optional fields of the Berlin Group standard), a bulk payment (a non-empty
 * list of payments under one debtor account) and a periodic payment (a single payment plus its
 * Berlin Group schedule fields). The standing order part of a periodic pain.001 initiation
 * (multipart) is the schedule alone.
 */
import { z } from "zod";
import { accountReference } from "./account_reference.ts";
import { amount } from "./amount.ts";
import { type BodyOptions, isoDate, isoDateTime, MAX_LIST, object, text } from "./text.ts";

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

/** ChargeBearerType1Code (ISO 20022). */
export const CHARGE_BEARERS = ["DEBT", "CRED", "SHAR", "SLEV"] as const;

/**
 * ExternalPurpose1Code (ISO 20022): four capital letters or digits. The code list grows every
 * quarter and holds codes with digits (B112, BR12), so the form is checked, not the list.
 */
export const PURPOSE_CODE = /^[A-Z0-9]{4}$/;

/** Months of a MonthlyVariable standing order. */
const MONTHS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"] as const;

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

/**
 * Structured remittance information: `reference` required, each field at most `max` characters
 * (140 for the single field of 1.3.11, 35 in the entries of the array).
 */
function structuredRemittance(max: number, options: BodyOptions) {
  return object({
    reference: text(max, options),
    referenceType: text(max, options).optional(),
    referenceIssuer: text(max, options).optional(),
  }, options);
}

/** The fields of one payment besides debtorAccount (also the entries of a bulk payment). */
function paymentFields(options: BodyOptions) {
  return {
    endToEndIdentification: text(35, options).optional(),
    instructionIdentification: text(35, options).optional(),
    debtorName: text(70, options).optional(),
    ultimateDebtor: text(70, options).optional(),
    instructedAmount: amount(options, { positive: true }),
    creditorAccount: accountReference(options),
    creditorAgent: z.string().regex(BICFI, {
      error: "must be a BIC like AAAADEBBXXX (6 letters, 2 letters or digits, optional 3 more)",
    }).optional(),
    creditorAgentName: text(140, options).optional(),
    creditorName: text(70, options),
    creditorAddress: address(options).optional(),
    creditorId: text(35, options).optional(),
    ultimateCreditor: text(70, options).optional(),
    purposeCode: z.string().regex(PURPOSE_CODE, {
      error: "must be an ISO 20022 purpose code of 4 capital letters or digits, like GDDS",
    }).optional(),
    chargeBearer: z.enum(CHARGE_BEARERS).optional(),
    remittanceInformationUnstructured: text(140, options).optional(),
    remittanceInformationUnstructuredArray: z.array(text(140, options)).min(1).max(MAX_LIST)
      .optional(),
    remittanceInformationStructured: structuredRemittance(140, options).optional(),
    remittanceInformationStructuredArray: z.array(structuredRemittance(35, options)).min(1)
      .max(MAX_LIST).optional(),
  };
}

/** The body of a single payment (`payments`). */
export function singlePayment(options: BodyOptions, today: Today) {
  return object({
    debtorAccount: accountReference(options),
    ...paymentFields(options),
    requestedExecutionDate: notPast(today).optional(),
  }, options);
}

/** The body of a bulk payment (`bulk-payments`). */
export function bulkPayment(options: BodyOptions, today: Today) {
  return object({
    batchBookingPreferred: z.boolean().optional(),
    debtorAccount: accountReference(options),
    debtorName: text(70, options).optional(),
    requestedExecutionDate: notPast(today).optional(),
    requestedExecutionTime: isoDateTime().optional(),
    payments: z.array(object(paymentFields(options), options)).min(1).max(options.maxBulk),
  }, options);
}

/** The schedule of a standing order (Berlin Group), without its refinements. */
function scheduleFields(today: Today) {
  return {
    startDate: notPast(today),
    endDate: isoDate().optional(),
    executionRule: z.enum(["following", "preceding"]).optional(),
    frequency: z.enum(FREQUENCIES),
    dayOfExecution: z.union([
      z.string().regex(/^(0?[1-9]|[12][0-9]|3[01])$/, { error: DAY }),
      z.int({ error: DAY }).min(1, { error: DAY }).max(31, { error: DAY }),
    ], { error: DAY }).optional(),
    monthsOfExecution: z.array(z.enum(MONTHS)).min(1).max(11).optional(),
  };
}

interface Schedule {
  startDate: string;
  endDate?: string;
  frequency: string;
  monthsOfExecution?: string[];
}

/**
 * The rules across the schedule's fields: endDate not before startDate; monthsOfExecution given
 * if and only if the frequency is MonthlyVariable, without repeats.
 */
function scheduleRules(schedule: Schedule, ctx: z.RefinementCtx): void {
  if (schedule.endDate !== undefined && schedule.endDate < schedule.startDate) {
    ctx.addIssue({
      code: "custom",
      path: ["endDate"],
      message: "must not be before startDate",
      params: { code: "EXECUTION_DATE_INVALID" },
    });
  }
  const months = schedule.monthsOfExecution;
  const variable = schedule.frequency === "MonthlyVariable";
  if (months === undefined && variable) {
    ctx.addIssue({
      code: "custom",
      path: ["monthsOfExecution"],
      message: 'is required when frequency is "MonthlyVariable"',
    });
  } else if (months !== undefined && !variable) {
    ctx.addIssue({
      code: "custom",
      path: ["monthsOfExecution"],
      message: 'must only be sent when frequency is "MonthlyVariable"',
    });
  } else if (months !== undefined && new Set(months).size !== months.length) {
    ctx.addIssue({
      code: "custom",
      path: ["monthsOfExecution"],
      message: "must not repeat a month",
    });
  }
}

/** The body of a periodic payment (`periodic-payments`). */
export function periodicPayment(options: BodyOptions, today: Today) {
  return object({
    debtorAccount: accountReference(options),
    ...paymentFields(options),
    ...scheduleFields(today),
  }, options).superRefine(scheduleRules);
}

/**
 * The standing order part (`json_standingorderType`) of a periodic pain.001 initiation sent as
 * multipart/form-data: the schedule of the payment the pain.001 part describes.
 */
export function standingOrder(options: BodyOptions, today: Today) {
  return object(scheduleFields(today), options).superRefine(scheduleRules);
}
