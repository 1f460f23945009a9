import assert from "node:assert/strict";
import { ibanChecksumValid } from "../../../src/bodies/account_reference.ts";
import { IBAN } from "../../support/requests.ts";

Deno.test("ibanChecksumValid() accepts IBANs with correct check digits", () => {
  for (
    const iban of [...Object.values(IBAN), "NL91ABNA0417164300", "FR1420041010050500013M02606"]
  ) {
    assert.equal(ibanChecksumValid(iban), true, iban);
  }
});

Deno.test("ibanChecksumValid() rejects a changed digit or swapped characters", () => {
  for (
    const iban of ["DE89370400440532013001", "DE98370400440532013000", "GB29NWBK60161331926818"]
  ) {
    assert.equal(ibanChecksumValid(iban), false, iban);
  }
});
