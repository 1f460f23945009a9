import assert from "node:assert/strict";
import {
  accessScope,
  grants,
  place,
  references,
  storedScope,
} from "../../middleware/_consent_grants.ts";

Deno.test("references() reads every reference kind, spaces removed and in upper case", () => {
  assert.deepEqual(
    references({ iban: "ge42 sb00 0000 0101 9049 17", bban: "", msisdn: 5, currency: "GEL" }),
    ["iban:GE42SB0000000101904917"],
  );
  assert.deepEqual(references({ maskedPan: "525412******3241", pan: "5254121234563241" }), [
    "pan:5254121234563241",
    "maskedPan:525412******3241",
  ]);
  assert.deepEqual(references("GE42SB0000000101904917"), []);
});

Deno.test("accessScope() grants a reference only to an account that carries it", () => {
  const scope = {
    ...accessScope({ accounts: [{ maskedPan: "525412******3241" }], balances: [{ foo: 1 }] })!,
    places: {},
  };
  assert.equal(scope.grant, "lists");
  assert.ok(grants(scope, "details", ["maskedPan:525412******3241"]));
  assert.ok(!grants(scope, "details", ["iban:GE42SB0000000101904917"]));
  assert.ok(!grants(scope, "balances", ["maskedPan:525412******3241"]));
  assert.ok(!grants(scope, "details", []), "an account without a reference");
  assert.equal(accessScope({ allPsd2: "allAccounts" })?.grant, "all");
  assert.equal(accessScope({ availableAccounts: "allAccounts" })?.grant, "list");
  assert.equal(accessScope({ accounts: [] }), undefined);
});

Deno.test("place() knows only the account ids the list showed, none of Object's own names", () => {
  const scope = storedScope(JSON.stringify({ accounts: [], places: { a1: ["iban:X"] } }));
  assert.deepEqual(place(scope, "a1"), ["iban:X"]);
  for (const id of ["a2", "constructor", "__proto__", "toString"]) {
    assert.equal(place(scope, id), undefined, id);
  }
});

Deno.test("storedScope() reads a record kept with bare IBANs as IBAN references", () => {
  const scope = storedScope(JSON.stringify({
    tpp: "t",
    grant: "lists",
    accounts: ["GE42SB0000000101904917"],
    balances: [],
    transactions: [],
    opaque: true,
    resources: { GE42SB0000000101904917: "a1" },
  }));
  assert.deepEqual(scope.accounts, ["iban:GE42SB0000000101904917"]);
  assert.deepEqual(scope.places, {}, "account ids by IBAN are learnt again from the list");
  assert.equal("opaque" in scope, false);
  assert.equal("resources" in scope, false);
});
