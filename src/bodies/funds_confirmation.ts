/**
 * The confirmation of funds body (Berlin Group 1.3.11 `confirmationOfFunds`, PIIS): the account
 * and the amount to check, required; the card number and the payee, optional.
 */
import { type BodyOptions, bounded, object, text } from "./text.ts";
import { accountReference } from "./account_reference.ts";
import { amount } from "./amount.ts";

/** A confirmation of funds request. */
export function fundsConfirmation(options: BodyOptions) {
  return object({
    cardNumber: bounded(35).optional(),
    account: accountReference(options),
    payee: text(70, options).optional(),
    instructedAmount: amount(options, { positive: true }),
  }, options);
}
