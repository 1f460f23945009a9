import assert from "node:assert/strict";
import { anyHas, behaviourOf, TEST_USERS } from "../../src/sandbox/test_users.ts";

Deno.test("behaviourOf() knows the documented users in any case; others succeed", () => {
  assert.equal(behaviourOf("PSU-NO-FUNDS"), "noFunds");
  assert.equal(behaviourOf(" psu-sca-fail "), "failsSca");
  assert.equal(behaviourOf("PSU-0001"), "succeeds");
  assert.equal(behaviourOf(undefined), "succeeds");
  assert.ok(anyHas([undefined, "x", "PSU-MULTI"], "multilevel"));
  assert.ok(!anyHas([undefined, "PSU-OK"], "expiredConsent"));
});

Deno.test("docs/try_it.md lists every test user with its behaviour", async () => {
  // The table may move into the README; then the README must carry it.
  const doc = await Deno.readTextFile(new URL("../../docs/try_it.md", import.meta.url)).catch(() =>
    Deno.readTextFile(new URL("../../README.md", import.meta.url))
  );
  for (const user of TEST_USERS) {
    const row = doc.split("\n").find((line) => line.startsWith(`| \`${user.psuId}\``));
    assert.ok(row, `${user.psuId} has a row in the test users table`);
  }
  assert.equal(
    doc.split("\n").filter((line) => /^\| `PSU-[A-Z-]+`/.test(line)).length,
    TEST_USERS.length,
    "no user in the table that the sandbox does not know",
  );
});
