import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { checkDigest, digestOf, MAX_DIGEST_LENGTH } from "../../../src/signing/digest.ts";
import { GatewayError } from "../../../src/core/errors.ts";

/** Counts the hashes (node:crypto's `digest`, as src/signing/digest.ts hashes) made while `run` runs. */
async function countHashing(run: () => Promise<void>): Promise<number> {
  const prototype = Object.getPrototypeOf(createHash("sha256"));
  const original = prototype.digest;
  let calls = 0;
  prototype.digest = function (this: unknown, ...args: unknown[]) {
    calls++;
    return original.apply(this, args);
  };
  try {
    await run();
  } finally {
    prototype.digest = original;
  }
  return calls;
}

Deno.test("checkDigest() hashes a body once per algorithm, however often it is checked", async () => {
  const body = new TextEncoder().encode('{"amount":"1.00"}');
  const both = `${await digestOf(body.slice())}, ${await digestOf(body.slice(), "SHA-512")}`;
  const calls = await countHashing(async () => {
    await checkDigest(both, body);
    await checkDigest(both, body);
    await checkDigest(both.split(", ")[0], body);
  });
  assert.equal(calls, 2);
});

Deno.test("checkDigest() refuses a repeated algorithm and an overlong value without hashing", async () => {
  const body = new TextEncoder().encode("{}");
  const value = await digestOf(body.slice());
  for (
    const [given, text] of [
      [`${value},${value.replace("SHA-256", "sha-256")}`, /"SHA-256" at most once/],
      [Array(300).fill(value).join(","), new RegExp(`at most ${MAX_DIGEST_LENGTH} characters`)],
    ] as const
  ) {
    const calls = await countHashing(async () => {
      await assert.rejects(
        checkDigest(given, body),
        (e) => e instanceof GatewayError && e.code === "FORMAT_ERROR" && text.test(e.message),
      );
    });
    assert.equal(calls, 0);
  }
});

Deno.test("checkDigest() accepts a SHA-256 and a SHA-512 value together", async () => {
  const body = new TextEncoder().encode("payment");
  const value = `${await digestOf(body)},${await digestOf(body, "SHA-512")}`;
  assert.ok(value.length < MAX_DIGEST_LENGTH);
  await checkDigest(value, body);
});
