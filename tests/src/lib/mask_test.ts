import assert from "node:assert/strict";
import { mask, maskedPath, maskedUnknownPath } from "../../../src/lib/mask.ts";

Deno.test("mask() keeps two characters at each end of a long value and hides a short one", () => {
  assert.equal(mask("GE29NB0000000101904917"), "GE***17");
  assert.equal(mask("abcdef"), "***");
});

Deno.test("maskedPath() masks the account id and transaction id segments of a template", () => {
  assert.equal(
    maskedPath(
      "/v1/accounts/GE29NB0000000101904917/transactions/tx-123456",
      "/v1/accounts/{account-id}/transactions/{transactionId}",
      { "account-id": "GE29NB0000000101904917", transactionId: "tx-123456" },
    ),
    "/v1/accounts/GE***17/transactions/tx***56",
  );
});

Deno.test("maskedUnknownPath() masks every segment that is not a known word", () => {
  const known = new Set(["v1", "accounts", "balances"]);
  assert.equal(
    maskedUnknownPath("/v1/accounts/GE29NB0000000101904917/balancez", known),
    "/v1/accounts/GE***17/ba***ez",
  );
  assert.equal(maskedUnknownPath("/", known), "/");
  assert.equal(maskedUnknownPath("//v1//x", known), "//v1//***");
});
