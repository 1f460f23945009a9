import assert from "node:assert/strict";
import { ACCOUNTS, findAccount } from "../../src/sandbox/data.ts";
import { TRANSACTIONS } from "../../src/sandbox/transaction_data.ts";

/** ISO 13616 check: move the first four characters to the end, letters to numbers, mod 97 = 1. */
function ibanIsValid(iban: string): boolean {
  if (!/^GE\d{2}[A-Z]{2}\d{16}$/.test(iban)) return false;
  const digits = (iban.slice(4) + iban.slice(0, 4)).replace(
    /[A-Z]/g,
    (ch) => String(ch.charCodeAt(0) - 55),
  );
  let rest = 0;
  for (const d of digits) rest = (rest * 10 + Number(d)) % 97;
  return rest === 1;
}

Deno.test("ibanIsValid() accepts the reference IBAN and rejects a wrong check digit", () => {
  assert.equal(ibanIsValid("GE29NB0000000101904917"), true);
  assert.equal(ibanIsValid("GE30NB0000000101904917"), false);
});

Deno.test("ACCOUNTS are Georgian mod-97 valid IBANs with unique, stable resource ids", () => {
  for (const account of ACCOUNTS) assert.ok(ibanIsValid(account.iban), account.iban);
  assert.equal(new Set(ACCOUNTS.map((a) => a.resourceId)).size, ACCOUNTS.length);
  assert.equal(new Set(ACCOUNTS.map((a) => a.iban)).size, ACCOUNTS.length);
  assert.equal(ACCOUNTS[0].resourceId, "5b1f3c2e-7a41-4d6b-9c0e-000000000001");
  assert.equal(findAccount(ACCOUNTS[3].resourceId), ACCOUNTS[3]);
});

Deno.test("ACCOUNTS hold at least three GEL accounts (current and savings) and one XXX account", () => {
  const gel = ACCOUNTS.filter((a) => a.currency === "GEL");
  assert.ok(gel.length >= 3);
  assert.deepEqual([...new Set(gel.map((a) => a.cashAccountType))].sort(), ["CACC", "SVGS"]);
  const multi = ACCOUNTS.filter((a) => a.currency === "XXX");
  assert.equal(multi.length, 1);
  assert.ok(Object.keys(multi[0].balances).length > 1);
});

Deno.test("TRANSACTIONS use valid counterparty IBANs and are the same on every load", async () => {
  for (const seed of TRANSACTIONS.values()) {
    for (const t of [...seed.booked, ...seed.pending]) {
      const iban = t.creditorAccount?.iban ?? t.debtorAccount?.iban ?? "";
      assert.ok(ibanIsValid(iban), iban);
      assert.match(t.transactionAmount.amount, /^-?\d+\.\d{2}$/);
    }
  }
  const again = await import(`../../src/sandbox/transaction_data.ts?again`);
  assert.deepEqual([...again.TRANSACTIONS.entries()], [...TRANSACTIONS.entries()]);
});
