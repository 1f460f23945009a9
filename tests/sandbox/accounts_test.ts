import assert from "node:assert/strict";
import { ACCOUNTS } from "../../src/sandbox/data.ts";
import { assertError, sandboxWithClock, send, sendJson, validConsent } from "./helpers.ts";

const [MAIN, SAVINGS, SALARY, MULTI] = ACCOUNTS;

Deno.test("GET accounts lists the consent's accounts with balances and, when granted, transactions links", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    access: {
      accounts: [{ iban: SAVINGS.iban }],
      balances: [{ iban: MAIN.iban }],
      transactions: [{ iban: MAIN.iban }],
    },
  });
  const res = await sendJson(app, "/psd2/v1/accounts", { headers: { "Consent-ID": consentId } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("X-Powered-By"), "CoreBanking");
  assert.deepEqual(res.body.accounts.map((a: { iban: string }) => a.iban), [
    MAIN.iban,
    SAVINGS.iban,
  ]);
  const [main, savings] = res.body.accounts;
  assert.equal(main.balances, undefined);
  assert.deepEqual(main, {
    resourceId: MAIN.resourceId,
    iban: MAIN.iban,
    currency: "GEL",
    product: MAIN.product,
    cashAccountType: "CACC",
    name: MAIN.name,
    _links: {
      balances: { href: `/psd2/v1/accounts/${MAIN.resourceId}/balances` },
      transactions: { href: `/psd2/v1/accounts/${MAIN.resourceId}/transactions` },
    },
  });
  assert.deepEqual(savings._links, {
    balances: { href: `/psd2/v1/accounts/${SAVINGS.resourceId}/balances` },
  });
});

Deno.test("GET accounts?withBalance=true adds balances where the consent grants them", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    access: { accounts: [{ iban: SAVINGS.iban }], balances: [{ iban: MAIN.iban }] },
  });
  const res = await sendJson(app, "/psd2/v1/accounts?withBalance=true", {
    headers: { "Consent-ID": consentId },
  });
  const [main, savings] = res.body.accounts;
  assert.deepEqual(main.balances.map((b: { balanceType: string }) => b.balanceType), [
    "closingBooked",
    "expected",
  ]);
  assert.equal(savings.balances, undefined);
});

Deno.test("GET accounts reads withBalance in any case, as the gateway forwards it", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    access: { accounts: [{ iban: SAVINGS.iban }], balances: [{ iban: MAIN.iban }] },
  });
  const headers = { "Consent-ID": consentId };
  for (const flag of ["TRUE", "True"]) {
    const res = await sendJson(app, `/psd2/v1/accounts?withBalance=${flag}`, { headers });
    assert.equal(res.body.accounts[0].balances?.length, 2, `withBalance=${flag}`);
    const one = await sendJson(app, `/psd2/v1/accounts/${MAIN.resourceId}?withBalance=${flag}`, {
      headers,
    });
    assert.equal(one.body.account.balances?.length, 2, `details, withBalance=${flag}`);
  }
  for (const flag of ["FALSE", "false"]) {
    const res = await sendJson(app, `/psd2/v1/accounts?withBalance=${flag}`, { headers });
    assert.equal(res.body.accounts[0].balances, undefined, `withBalance=${flag}`);
  }
});

Deno.test("Consent access allPsd2 allAccounts grants every account; availableAccounts only the list", async () => {
  const { app } = sandboxWithClock();
  const all = await validConsent(app, { access: { allPsd2: "allAccounts" } });
  const list = await sendJson(app, "/psd2/v1/accounts", { headers: { "Consent-ID": all } });
  assert.equal(list.body.accounts.length, ACCOUNTS.length);
  assert.ok(list.body.accounts.every((a: { _links: object }) => "transactions" in a._links));
  const balances = await sendJson(app, `/psd2/v1/accounts/${SALARY.resourceId}/balances`, {
    headers: { "Consent-ID": all },
  });
  assert.equal(balances.status, 200);

  const available = await validConsent(app, { access: { availableAccounts: "allAccounts" } });
  const names = await sendJson(app, "/psd2/v1/accounts", { headers: { "Consent-ID": available } });
  assert.equal(names.body.accounts.length, ACCOUNTS.length);
  await assertError(
    send(app, `/psd2/v1/accounts/${MAIN.resourceId}`, { headers: { "Consent-ID": available } }),
    { status: 401, code: "CONSENT_INVALID" },
  );
});

Deno.test("GET account details returns ownerName; the multicurrency account has currency XXX", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, { access: { accounts: [{ iban: MULTI.iban }] } });
  const res = await sendJson(app, `/psd2/v1/accounts/${MULTI.resourceId}`, {
    headers: { "Consent-ID": consentId },
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.account.resourceId, MULTI.resourceId);
  assert.equal(res.body.account.currency, "XXX");
  assert.equal(res.body.account.ownerName, "Nino Beridze");
  assert.equal(res.body.account.cashAccountType, "CACC");
  assert.deepEqual(res.body.account._links, {
    balances: { href: `/psd2/v1/accounts/${MULTI.resourceId}/balances` },
  });
});

Deno.test("GET balances returns closingBooked and expected per currency, only when granted", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    access: { balances: [{ iban: MULTI.iban }], accounts: [{ iban: MAIN.iban }] },
  });
  const headers = { "Consent-ID": consentId };
  const res = await sendJson(app, `/psd2/v1/accounts/${MULTI.resourceId}/balances`, { headers });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.account, { iban: MULTI.iban });
  assert.equal(res.body.balances.length, 6);
  assert.deepEqual(res.body.balances[0], {
    balanceType: "closingBooked",
    balanceAmount: { currency: "GEL", amount: "1200.00" },
    referenceDate: "2025-06-30",
    lastChangeDateTime: "2025-06-30T18:00:00+04:00",
  });
  assert.deepEqual(
    [
      ...new Set(
        res.body.balances.map((b: { balanceAmount: { currency: string } }) =>
          b.balanceAmount.currency
        ),
      ),
    ],
    ["GEL", "USD", "EUR"],
  );
  await assertError(send(app, `/psd2/v1/accounts/${MAIN.resourceId}/balances`, { headers }), {
    status: 401,
    code: "CONSENT_INVALID",
  });
});

Deno.test("Account reads check the Consent-ID: unknown 403, missing 400, unknown account 404", async () => {
  const { app } = sandboxWithClock();
  await assertError(
    send(app, "/psd2/v1/accounts", { headers: { "Consent-ID": crypto.randomUUID() } }),
    { status: 403, code: "CONSENT_UNKNOWN" },
  );
  await assertError(send(app, "/psd2/v1/accounts"), { status: 400, code: "FORMAT_ERROR" });
  const consentId = await validConsent(app, { access: { allPsd2: "allAccounts" } });
  await assertError(
    send(app, "/psd2/v1/accounts/no-such-account", { headers: { "Consent-ID": consentId } }),
    { status: 404, code: "RESOURCE_UNKNOWN" },
  );
});
