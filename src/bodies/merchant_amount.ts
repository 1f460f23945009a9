/**
 * Amounts of the merchant API (001): an item's `amount` is typed string, a purchase unit's
 * `amount.value` number. One rule for both: a non-negative amount in GEL with at most two
 * decimals, sent as a string (`"10.50"`) or a number (`10.5`); the core gets the form the
 * document gives for the field. Sums are kept in tetri (hundredths) as bigints, exact at any size.
 */
import { z } from "zod";

const AMOUNT_TEXT = /^[0-9]{1,14}(\.[0-9]{1,2})?$/;

/**
 * An amount in tetri, or undefined when it is not an amount of this rule. A number is read as the
 * shortest decimal that names it (what `JSON.parse` made of "21.30" is 21.3), so a number has no
 * float noise to round away, and 1.005 has three decimals.
 */
export function tetri(value: unknown): bigint | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !AMOUNT_TEXT.test(text)) return undefined;
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, "0"));
}

/** Tetri as the decimal text `"10.50"`. */
export function amountText(value: bigint): string {
  return `${value / 100n}.${String(value % 100n).padStart(2, "0")}`;
}

/** Tetri as a JSON number (`10.5`). */
export function amountNumber(value: bigint): number {
  return Number(amountText(value));
}

const FORMS =
  'must be an amount with at most two decimals, as a string like "10.50" or a number like 10.5';

/** A merchant amount field; with `positive`, greater than zero. */
export function merchantAmount(options: { positive: boolean }) {
  return z.union([z.string(), z.number()], { error: FORMS }).superRefine((value, ctx) => {
    const amount = tetri(value);
    if (amount === undefined) ctx.addIssue({ code: "custom", message: FORMS });
    else if (options.positive && amount === 0n) {
      ctx.addIssue({ code: "custom", message: "must be greater than zero" });
    }
  });
}
