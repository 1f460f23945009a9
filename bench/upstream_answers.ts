/** The bench upstream's answer bodies (bench/upstream.ts), shared with the memory measurement. */

/** The answer to every GET: a balance list with a `/psd2/v1` link to rewrite. */
export const READ_BODY = JSON.stringify({
  account: { iban: "GE29NB0000000101904917" },
  balances: [
    {
      balanceType: "closingBooked",
      balanceAmount: { currency: "GEL", amount: "1520.35" },
      referenceDate: "2026-11-20",
    },
    {
      balanceType: "expected",
      balanceAmount: { currency: "GEL", amount: "1490.00" },
      lastChangeDateTime: "2026-11-21T10:00:00Z",
    },
  ],
  _links: { account: { href: "/psd2/v1/accounts/acc-1" } },
});

/** The answer to every POST (201): a payment initiation's, with links to rewrite. */
export const CREATED_BODY = JSON.stringify({
  transactionStatus: "RCVD",
  paymentId: "p-1",
  _links: {
    self: { href: "/psd2/v1/payments/domestic/p-1" },
    status: { href: "/psd2/v1/payments/domestic/p-1/status" },
  },
});

/** The consent of the production read: created through the gateway, then its accounts listed. */
export const CONSENT_ID = "consent-bench-1";
/** The account the consent grants: the balance read's account, by its IBAN. */
export const ACCOUNT_ID = "acc-1";
export const CONSENT_IBAN = "GE29NB0000000101904917";

/** The answer to POST /consents (201): the consent the production read uses. */
export const CONSENT_CREATED_BODY = JSON.stringify({
  consentStatus: "received",
  consentId: CONSENT_ID,
  _links: {
    self: { href: `/psd2/v1/consents/${CONSENT_ID}` },
    status: { href: `/psd2/v1/consents/${CONSENT_ID}/status` },
  },
});

/** The answer to GET /accounts: the consent's one account, with its IBAN (so it is placed). */
export const ACCOUNTS_BODY = JSON.stringify({
  accounts: [{
    resourceId: ACCOUNT_ID,
    iban: CONSENT_IBAN,
    currency: "GEL",
    _links: { balances: { href: `/psd2/v1/accounts/${ACCOUNT_ID}/balances` } },
  }],
});
