/**
 * Amounts and currencies of the interface: `amount` is a decimal string
 * (`-?[0-9]{1,14}(\.[0-9]{1,3})?`), `currency` an ISO 4217 code.
 */
import { z } from "zod";
import { CURRENCIES } from "./currency.ts";
import { type BodyOptions, object } from "./text.ts";

/** The interface's amount pattern. */
export const AMOUNT = /^-?[0-9]{1,14}(\.[0-9]{1,3})?$/;

/** An ISO 4217 currency code. */
export function currency() {
  return z.string().refine((value) => CURRENCIES.has(value), {
    error: "must be an ISO 4217 currency code like EUR or GEL",
  });
}

/** A decimal amount string; with `positive`, greater than zero. */
export function decimal(options: { positive: boolean }) {
  return z.string().superRefine((value, ctx) => {
    if (!AMOUNT.test(value)) {
      ctx.addIssue({
        code: "custom",
        message: 'must be a decimal number written as a string, like "123.45"',
      });
    } else if (options.positive && (value.startsWith("-") || !/[1-9]/.test(value))) {
      ctx.addIssue({ code: "custom", message: "must be greater than zero" });
    }
  });
}

/** `{currency, amount}`; with `positive`, a payable amount (greater than zero). */
export function amount(options: BodyOptions, sign: { positive: boolean }) {
  return object({ currency: currency(), amount: decimal(sign) }, options);
}
