import assert from "node:assert/strict";
import {
  coreErrorAnswer,
  LOGGED_BODY_CHARS,
  loggedBody,
  validRetryAfter,
} from "../../middleware/_core_errors.ts";
import { answerText, headerOf } from "../../src/core/answer.ts";

Deno.test("validRetryAfter() keeps delay-seconds up to a day and an IMF-fixdate, nothing else", () => {
  assert.equal(validRetryAfter("0"), "0");
  assert.equal(validRetryAfter(" 30 "), "30");
  assert.equal(validRetryAfter("86400"), "86400");
  assert.equal(validRetryAfter("86401"), undefined);
  assert.equal(validRetryAfter("Wed, 21 Oct 2026 07:28:00 GMT"), "Wed, 21 Oct 2026 07:28:00 GMT");
  for (
    const value of [
      undefined,
      "",
      "-1",
      "1.5",
      "soon",
      "30, 40",
      "Wed, 21 Oct 2026 07:28:00 CET",
      "Wednesday, 21-Oct-26 07:28:00 GMT",
      "Wed, 31 Feb 2026 99:28:00 GMT",
    ]
  ) {
    assert.equal(validRetryAfter(value), undefined, String(value));
  }
});

Deno.test("coreErrorAnswer() is 503 UPSTREAM_UNAVAILABLE for 502 to 504 and 500 INTERNAL_ERROR otherwise", () => {
  for (const status of [502, 503, 504]) {
    const answer = coreErrorAnswer(status, "7");
    assert.equal(answer.status, 503);
    assert.equal(headerOf(answer, "retry-after"), "7");
    assert.equal(JSON.parse(answerText(answer)!).tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
    assert.equal(answer.source, "gateway");
  }
  for (const status of [500, 501, 505, 599]) {
    const answer = coreErrorAnswer(status, "7");
    assert.equal(answer.status, 500);
    assert.equal(headerOf(answer, "retry-after"), undefined);
    assert.equal(JSON.parse(answerText(answer)!).tppMessages[0].code, "INTERNAL_ERROR");
  }
});

Deno.test("loggedBody() keeps the start of the core's body", () => {
  const encoder = new TextEncoder();
  assert.equal(loggedBody(new Uint8Array(0)), "");
  assert.equal(loggedBody(encoder.encode("<h1>500</h1>")), "<h1>500</h1>");
  const long = loggedBody(encoder.encode("x".repeat(LOGGED_BODY_CHARS * 3)));
  assert.equal(long, "x".repeat(LOGGED_BODY_CHARS) + "...");
});
