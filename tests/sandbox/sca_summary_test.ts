import assert from "node:assert/strict";
import { summaryRows } from "../../src/sandbox/sca_summary.ts";
import { textsOf } from "../../src/sandbox/sca_texts.ts";
import type { Consent, Payment } from "../../src/sandbox/state.ts";

const t = textsOf("en");

function payment(body: Payment["body"], service = "payments"): Payment {
  return {
    id: "p1",
    service,
    product: "domestic",
    body,
    transactionStatus: "RCVD",
    tpp: { approach: "REDIRECT" },
    requiredAuthorisations: 1,
    authorisations: new Map(),
    cancellationAuthorisations: new Map(),
  };
}

function consent(access: Record<string, unknown>): Consent {
  return {
    id: "c1",
    access,
    recurringIndicator: false,
    validUntil: "2025-12-28",
    frequencyPerDay: 1,
    combinedServiceIndicator: false,
    status: "received",
    lastActionDate: "2025-07-01",
    tpp: { approach: "REDIRECT" },
    authorisations: new Map(),
  };
}

function rows(subject: Parameters<typeof summaryRows>[0]) {
  return Object.fromEntries(summaryRows(subject, t).map((row) => [row.label, row.value]));
}

Deno.test("summaryRows() shows a single payment's amount, creditor, accounts and reference", () => {
  const view = rows({
    kind: "payment",
    payment: payment({
      instructedAmount: { currency: "GEL", amount: "125.5" },
      creditorName: "Tbilisi Energy",
      creditorAccount: { iban: "GE29NB0000000101904917", currency: "GEL" },
      debtorAccount: { bban: "0101904917" },
      remittanceInformationUnstructured: "Invoice 7",
    }),
  });
  assert.deepEqual(view, {
    Amount: "125.5 GEL",
    Creditor: "Tbilisi Energy",
    "Creditor account": "GE29NB0000000101904917 (GEL)",
    Reference: "Invoice 7",
    "Debtor account": "0101904917",
    "Payment product": "payments / domestic",
  });
});

Deno.test("summaryRows() adds up a bulk payment per currency and names the XML of pain.001", () => {
  const bulk = rows({
    kind: "payment",
    payment: payment({
      payments: [
        { instructedAmount: { currency: "GEL", amount: "10.00" }, creditorName: "Alpha" },
        { instructedAmount: { currency: "GEL", amount: "20.50" }, creditorName: "Beta" },
        { instructedAmount: { currency: "EUR", amount: "5" }, creditorName: "Gamma" },
      ],
    }, "bulk-payments"),
  });
  assert.equal(bulk.Payments, "3");
  assert.equal(bulk.Total, "30.50 GEL + 5.00 EUR");
  assert.equal(bulk.Creditor, "Alpha, Beta, Gamma");
  const xml = summaryRows({ kind: "payment", payment: payment("<Document/>") }, t);
  assert.equal(xml[0].label, "Payment order in pain.001 XML");
});

Deno.test("summaryRows() lists each consent account with the access granted on it", () => {
  const view = rows({
    kind: "consent",
    consent: consent({
      accounts: [{ iban: "GE15SB0000000101904918" }],
      balances: [{ iban: "GE42SB0000000101904917" }],
      transactions: [{ iban: "GE42SB0000000101904917" }],
      availableAccounts: "allAccounts",
    }),
  });
  assert.equal(
    view["Accounts and access"],
    "GE15SB0000000101904918: details\nGE42SB0000000101904917: balances, transactions\n" +
      "List of accounts",
  );
  assert.equal(view["Valid until"], "2025-12-28");
  assert.equal(view["Accesses per day"], "1");
  assert.equal(view["Recurring access"], "No");
  const all = rows({ kind: "consent", consent: consent({ allPsd2: "allAccounts" }) });
  assert.equal(all["Accounts and access"], t.allAccounts);
});
