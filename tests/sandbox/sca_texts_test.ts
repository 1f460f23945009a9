import assert from "node:assert/strict";
import { pickLanguage, textsOf } from "../../src/sandbox/sca_texts.ts";

Deno.test("pickLanguage() takes the better of en and ka by q-value, English by default", () => {
  assert.equal(pickLanguage(undefined), "en");
  assert.equal(pickLanguage(""), "en");
  assert.equal(pickLanguage("ka"), "ka");
  assert.equal(pickLanguage("ka-GE,ka;q=0.9,en;q=0.8"), "ka");
  assert.equal(pickLanguage("en;q=0.9,ka;q=0.5"), "en");
  assert.equal(pickLanguage("de-DE,ka;q=0.3"), "ka");
  assert.equal(pickLanguage("de-DE,fr"), "en");
  assert.equal(pickLanguage("ka;q=0,en"), "en");
  assert.equal(pickLanguage("*;q=0.5,ka;q=0.6"), "ka");
  assert.equal(pickLanguage("ka;q=abc"), "en");
});

Deno.test("textsOf() has every text in both languages, and the Georgian ones differ", () => {
  const en = textsOf("en");
  const ka = textsOf("ka");
  assert.deepEqual(Object.keys(ka).sort(), Object.keys(en).sort());
  for (const key of ["titlePayment", "titleConsent", "approve", "deny", "login"] as const) {
    assert.notEqual(ka[key], en[key], key);
    assert.match(ka[key], /[\u10D0-\u10FF]/, `${key} is written in Georgian`);
  }
  assert.equal(en.wrongOtp(2), "The code is wrong. Attempts left: 2");
  assert.match(ka.wrongOtp(1), /1$/);
});
