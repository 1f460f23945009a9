import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, REQUEST_ID, singlePayment } from "../support/requests.ts";
import { fundsBody, fundsHeaders } from "../support/funds.ts";

const FUNDS = "/v1/funds-confirmations";

Deno.test("consentId() rejects every account read without Consent-ID", async () => {
  await using t = await rig(policy());
  const paths = [
    "/v1/accounts",
    "/v1/accounts/acc-1",
    "/v1/accounts/acc-1/balances",
    "/v1/accounts/acc-1/transactions?bookingStatus=information",
    "/v1/accounts/acc-1/transactions/tx-1",
  ];
  for (const path of paths) {
    assertRejected(await t.call(path, { headers: { "x-request-id": REQUEST_ID } }), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "Consent-ID",
      text: /^Header "Consent-ID" is required/,
    }, t.upstream);
  }
});

Deno.test("consentId() is optional on payment initiation", async () => {
  await using t = await rig(policy());
  const body = JSON.stringify(singlePayment());
  assertForwarded(
    await t.call("/v1/payments/domestic", { method: "POST", headers: initiationHeaders(), body }),
    t.upstream,
  );
  assertForwarded(
    await t.call("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders({ "consent-id": "consent-77" }),
      body,
    }),
    t.upstream,
    2,
  );
});

Deno.test("consentId() rejects a Consent-ID with unsafe characters or too long", async () => {
  await using t = await rig(policy({ consent_id: { max_length: 20 } }));
  for (const bad of ["../accounts", "a/b", "c%2F1", "x".repeat(21), ".."]) {
    assertRejected(
      await t.call("/v1/accounts", { headers: { "x-request-id": REQUEST_ID, "consent-id": bad } }),
      { status: 400, code: "FORMAT_ERROR", path: "Consent-ID" },
      t.upstream,
    );
  }
});

Deno.test("consentId() takes up to 128 characters by default and says what it refused", async () => {
  await using t = await rig(policy());
  const read = (consent: string) =>
    t.call("/v1/accounts", { headers: { "x-request-id": REQUEST_ID, "consent-id": consent } });
  assertForwarded(await read("c".repeat(128)), t.upstream);
  assertRejected(
    await read("c".repeat(129)),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "Consent-ID",
      text: /^Header "Consent-ID" must have at most 128 characters$/,
    },
    t.upstream,
    1,
  );
  assertRejected(
    await read("a/b"),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "Consent-ID",
      text:
        /^Header "Consent-ID" must consist of the characters A-Z a-z 0-9 \. _ ~ - and must not be "\." or "\.\."$/,
    },
    t.upstream,
    1,
  );
});

Deno.test("consentId() checks a Consent-ID sent on payment initiation", async () => {
  await using t = await rig(policy());
  assertRejected(
    await t.call("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders({ "consent-id": "../consents" }),
      body: JSON.stringify(singlePayment()),
    }),
    { status: 400, code: "FORMAT_ERROR", path: "Consent-ID" },
    t.upstream,
  );
});

Deno.test("consentId() does not judge operations that do not take the header", async () => {
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/v1/products/en", { headers: { "consent-id": "a/b" } }),
    t.upstream,
  );
});

Deno.test("consentId() leaves Consent-ID optional on a confirmation of funds by default", async () => {
  await using t = await rig(policy());
  const body = JSON.stringify(fundsBody());
  assertForwarded(
    await t.call(FUNDS, { method: "POST", headers: fundsHeaders(), body }),
    t.upstream,
  );
});

Deno.test("consentId() with required: true at groups.piis requires Consent-ID on a confirmation of funds", async () => {
  await using t = await rig(
    policy({}, { groups: { piis: { consent_id: { required: true } } } }),
  );
  const body = JSON.stringify(fundsBody());
  assertRejected(
    await t.call(FUNDS, { method: "POST", headers: fundsHeaders(), body }),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "Consent-ID",
      text: /^Header "Consent-ID" is required for this operation$/,
    },
    t.upstream,
  );
  assertForwarded(
    await t.call(FUNDS, {
      method: "POST",
      headers: fundsHeaders({ "consent-id": "piis-consent-1" }),
      body,
    }),
    t.upstream,
  );
  // The group's rule only: a payment initiation still goes without one.
  assertForwarded(
    await t.call("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders(),
      body: JSON.stringify(singlePayment()),
    }),
    t.upstream,
    2,
  );
});
