/**
 * A confirmation of funds as a well-behaved TPP sends it (`checkAvailabilityOfFunds`, Berlin Group
 * 1.3.11 PIIS): tests change one thing at a time from these.
 */

/** The sandbox's main account, which has funds (see src/sandbox/test_users.ts). */
export const FUNDED_IBAN = "GE42SB0000000101904917";

/** A valid confirmation of funds body: the card, the account, the payee and the amount. */
export function fundsBody(
  amount = "25.00",
  account: Record<string, unknown> = { iban: FUNDED_IBAN },
): Record<string, unknown> {
  return {
    cardNumber: "4111111111111111",
    account,
    payee: "Tbilisi Books",
    instructedAmount: { currency: "GEL", amount },
  };
}

/** Headers of a confirmation of funds (JSON; no PSU headers: the PSU is not present). */
export function fundsHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "x-request-id": crypto.randomUUID(),
    "content-type": "application/json",
    ...extra,
  };
}
