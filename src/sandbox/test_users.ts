/**
 * The sandbox's documented test users: PSU ids with a fixed behaviour, so that a TPP can test each
 * outcome of SCA and of a payment. Any other PSU id behaves like `PSU-OK`. The login page and the
 * `/sandbox/users` control show this table; docs/try_it.md copies it (a test keeps them in step).
 */

/** What a test user does. */
export type Behaviour =
  | "succeeds"
  | "failsSca"
  | "noFunds"
  | "multilevel"
  | "expiredConsent"
  | "cardHolder";

/** A documented test user. */
export interface TestUser {
  psuId: string;
  behaviour: Behaviour;
  /** What happens, for the TPP developer (English; the login page has its own texts). */
  description: string;
}

/** The one-time password every method accepts (except for `PSU-SCA-FAIL`). */
export const SANDBOX_OTP = "123456";

/** Every documented test user. Passwords are not checked: any non-empty password logs in. */
export const TEST_USERS: readonly TestUser[] = [
  {
    psuId: "PSU-OK",
    behaviour: "succeeds",
    description: "SCA succeeds with the OTP 123456; payments become ACCP, consents valid",
  },
  {
    psuId: "PSU-SCA-FAIL",
    behaviour: "failsSca",
    description:
      "Every OTP is wrong (401 PSU_CREDENTIALS_INVALID); the third wrong OTP fails the authorisation (scaStatus failed, payment RJCT, consent rejected); decoupled SCA fails",
  },
  {
    psuId: "PSU-NO-FUNDS",
    behaviour: "noFunds",
    description:
      "SCA succeeds, then the payment is rejected: transactionStatus RJCT, fundsAvailable false and a FUNDS_NOT_AVAILABLE message",
  },
  {
    psuId: "PSU-MULTI",
    behaviour: "multilevel",
    description:
      "Payments need two authorisations (multilevel SCA): only a startAuthorisation link, PATC after the first, ACCP after the second",
  },
  {
    psuId: "PSU-EXPIRED",
    behaviour: "expiredConsent",
    description:
      "Consents authorise, then read as expired: consentStatus expired, account reads 401 CONSENT_EXPIRED",
  },
  {
    psuId: "PSU-CARD",
    behaviour: "cardHolder",
    description:
      "SCA as PSU-OK; holds the sandbox's card accounts (525412******3241 in GEL, 403211******0042 in USD) with booked and pending card transactions, which no other user holds",
  },
  {
    psuId: "PSU-BASKET",
    behaviour: "succeeds",
    description:
      "SCA as PSU-OK, for signing baskets: initiate two payments, put both in a basket (POST /v1/signing-baskets) and authorise the basket once with the OTP 123456; both payments become ACCP, the basket ACTC",
  },
];

/** The behaviour of a PSU id (case-insensitive); unknown ids succeed. */
export function behaviourOf(psuId: string | undefined): Behaviour {
  const id = psuId?.trim().toUpperCase();
  return TEST_USERS.find((user) => user.psuId === id)?.behaviour ?? "succeeds";
}

/** Whether any of the PSU ids has the behaviour. */
export function anyHas(psuIds: Iterable<string | undefined>, behaviour: Behaviour): boolean {
  for (const id of psuIds) if (id !== undefined && behaviourOf(id) === behaviour) return true;
  return false;
}

/** A documented account of the confirmation of funds (`POST /v1/funds-confirmations`). */
export interface FundsTestAccount {
  iban: string;
  /** The test user whose account it is. */
  psuId: string;
  /** What a funds check on it answers, for the TPP developer. */
  description: string;
}

/**
 * The accounts a confirmation of funds names to see each answer: one with funds, one without. A
 * funds check reads the account's expected balance in the instructed currency.
 */
export const FUNDS_TEST_ACCOUNTS: readonly FundsTestAccount[] = [
  {
    iban: "GE42SB0000000101904917",
    psuId: "PSU-OK",
    description:
      "Has funds: fundsAvailable true for amounts up to its expected balance, 2391.25 GEL",
  },
  {
    iban: "GE31SB0000000101904921",
    psuId: "PSU-NO-FUNDS",
    description: "Has no funds: balance 0.00 GEL, fundsAvailable false for any amount",
  },
];
