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
