/**
 * The bench's upstream: a cheap legacy-core stand-in that answers every path at once with a
 * fixed JSON body carrying `/psd2/v1` links (so that link rewriting has work to do).
 */
const port = Number(Deno.args[0] ?? 0);
const body = JSON.stringify({
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
const created = JSON.stringify({
  transactionStatus: "RCVD",
  paymentId: "p-1",
  _links: {
    self: { href: "/psd2/v1/payments/domestic/p-1" },
    status: { href: "/psd2/v1/payments/domestic/p-1/status" },
  },
});
const headers = { "content-type": "application/json", server: "legacy-core/7.2" };
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  if (request.method === "POST") {
    await request.arrayBuffer();
    return new Response(created, { status: 201, headers });
  }
  return new Response(body, { headers });
});
