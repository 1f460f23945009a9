/**
 * Counterexamples the fuzzing found, kept as fixed requests through the real gateway. Each failed
 * before its fix (named in the test) and must keep passing.
 */
import { FRESH_ID, type FuzzRequest, utf8 } from "../support/arbitraries.ts";
import { assertAnswerProperties, assertExpectation, fuzzRig } from "../support/fuzz.ts";

const PAYMENT = JSON.stringify({
  debtorAccount: { iban: "DE89370400440532013000" },
  instructedAmount: { currency: "EUR", amount: "12.50" },
  creditorAccount: { iban: "GB29NWBK60161331926819" },
  creditorName: "Merchant",
});

async function check(request: FuzzRequest, timeoutMs?: number): Promise<void> {
  await using rig = await fuzzRig();
  const exchange = await rig.send(request, timeoutMs);
  assertAnswerProperties(request, exchange);
  assertExpectation(request, exchange);
}

Deno.test("gateway accepts dates of years 0000 to 0099 (isIsoDate read them as 19xx)", async () => {
  // Found by valid_test: GET .../transactions?dateFrom=0099-12-31 was refused as "not a date".
  await check({
    op: "getTransactionList",
    method: "GET",
    target: "/v1/accounts/_/transactions?dateFrom=0099-12-31&bookingStatus=both",
    headers: [["x-request-id", FRESH_ID], ["consent-id", "0"]],
    mutation: "none",
    expect: {
      kind: "forward",
      upstreamPath: "/psd2/v1/accounts/_/transactions?dateFrom=0099-12-31&bookingStatus=both",
    },
  });
});

Deno.test("gateway counts header caps in characters, not UTF-8 bytes (header_limits)", async () => {
  // Found by valid_test: a PSU-Corporate-ID-Type of 25 two-byte characters (50+ bytes) was
  // refused as longer than 50 characters. Here: 50 Georgian letters (150 bytes), 50 and 51 "é".
  const value = utf8("\u10d0".repeat(50));
  await check({
    op: "initiatePayment",
    method: "POST",
    target: "/v1/payments/domestic",
    headers: [
      ["x-request-id", FRESH_ID],
      ["psu-ip-address", "192.0.2.1"],
      ["content-type", "application/json"],
      ["psu-corporate-id-type", value],
      ["psu-id", utf8("\u00e9".repeat(50))],
    ],
    body: PAYMENT,
    mutation: "none",
    expect: { kind: "forward", upstreamPath: "/psd2/v1/payments/domestic" },
  });
  await check({
    op: "initiatePayment",
    method: "POST",
    target: "/v1/payments/domestic",
    headers: [
      ["x-request-id", FRESH_ID],
      ["psu-ip-address", "192.0.2.1"],
      ["content-type", "application/json"],
      ["psu-id", utf8("\u00e9".repeat(51))],
    ],
    body: PAYMENT,
    mutation: "PSU-ID of 51 characters",
    expect: { kind: "reject", status: 400, code: "FORMAT_ERROR", path: "PSU-ID" },
  });
});

Deno.test("gateway refuses a body on a GET (Deno's server hides it; body_schema did not see it)", async () => {
  // Found by mutations_test: GET /v1/products/cards with a JSON body was forwarded.
  for (const target of ["/v1/products/cards", "/v1/consents/abc"]) {
    await check({
      op: "getCredAndChrgCards",
      method: "GET",
      target,
      headers: [["x-request-id", FRESH_ID], ["content-type", "application/json"]],
      body: "0",
      mutation: "a body on an operation without one",
      expect: { kind: "reject", status: 400, code: "FORMAT_ERROR", path: "body" },
    });
  }
});

Deno.test("gateway answers 400, not 500, to a body cut off before its end (body_limit)", async () => {
  // Found while fuzzing the framing: the client half-closes before the declared length (or the
  // last chunk); reading the body failed and the error handler answered 500 INTERNAL_ERROR.
  const headers: [string, string][] = [
    ["x-request-id", FRESH_ID],
    ["psu-ip-address", "192.0.2.1"],
    ["content-type", "application/json"],
  ];
  for (const chunks of [undefined, [10]]) {
    await check({
      op: "initiatePayment",
      method: "POST",
      target: "/v1/payments/domestic",
      headers,
      body: PAYMENT,
      ...(chunks ? { chunks } : {}),
      truncateAt: 20,
      mutation: `body cut off after 20 bytes${chunks ? ", chunked" : ""}`,
      expect: { kind: "reject", status: 400, code: "FORMAT_ERROR", path: "body" },
    });
  }
});

Deno.test("gateway answers a body sent in one-byte chunks at once (readLimited, min_chunk_bytes)", async () => {
  // Found by chaos_test: a 160 kB body in chunks of 3 and 1 bytes got no answer within 8 s. Every
  // chunk was kept as its own buffer, whose garbage collection made the read quadratic (50 s for
  // 160 kB), and the 10 s read deadline never fired while chunks kept coming. Since
  // body_limit.min_chunk_bytes the body is refused after its first 16 chunks (the linear read of
  // many small chunks is tests/src/lib/body_test.ts's). Bound: twice the default read_timeout.
  await check({
    op: "updatePaymentPsuData",
    method: "PUT",
    target: "/v1/payments/domestic/p-1/authorisations/a-1",
    headers: [["x-request-id", FRESH_ID], ["content-type", "application/json"]],
    body: JSON.stringify({ scaAuthenticationData: "a".repeat(160_000) }),
    chunks: [1],
    mutation: "a 160 kB body in one-byte chunks",
    expect: { kind: "reject", status: 400, code: "FORMAT_ERROR", path: "body" },
  }, 20_000);
});
